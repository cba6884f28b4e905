"""The small value classes every start imports (plain slotted classes since issue 13's cold-start
work): compared and hashed by value, immutable, and they survive pickling (worker processes)."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.diagnostics import CATALOGUE, lookup
from litmus_rules.errors import Diagnostic
from litmus_rules.lang import types as t
from litmus_rules.source import Source, Span


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ab\n\r é", max_size=40), st.integers(-3, 45))
def test_line_and_column_of_every_offset(text: str, offset: int) -> None:
    source = Source("f.litmus", text)
    clamped = max(0, min(offset, len(text)))
    before = text[:clamped]
    assert source.line_col(offset) == (before.count("\n") + 1, clamped - (before.rfind("\n") + 1) + 1)
    line = before.count("\n") + 1
    assert source.line_text(line) == text.split("\n")[line - 1]


def _values() -> list[object]:
    source = Source("f.litmus", "rule x\nwhen y\n")
    return [
        source,
        Span(source, 0, 4),
        t.list_of(t.obj({"a": t.STR})),
        lookup("L201"),
        Diagnostic("L201", "error", "unknown name `y`", Span(source, 12, 13), "names are ..."),
    ]


@pytest.mark.parametrize("value", _values(), ids=lambda v: type(v).__name__)
def test_values_compare_hash_copy_and_pickle_by_value(value: object) -> None:
    for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
        assert again == value and hash(again) == hash(value) and repr(again) == repr(value)
    with pytest.raises(AttributeError):
        value.code = "changed"  # type: ignore[attr-defined]
    assert value != object() and value != 1


def test_what_equality_leaves_out() -> None:
    source = Source("f.litmus", "abc")
    assert Span(source, 0, 1) == Span(Source("f.litmus", "abc"), 0, 1) != Span(source, 0, 2)
    assert Span(source, 0, 1) != Span(Source("g.litmus", "abc"), 0, 1)
    assert repr(Span(source, 0, 1)) == "Span(start=0, end=1)"
    # a type is its kinds, item and closedness: the schema it came from and its fields are not compared
    assert t.T(frozenset({"object"}), schema={"type": "object"}, fields={"a": t.STR}) == t.T(frozenset({"object"}))
    assert t.list_of(t.STR) != t.list_of(t.NUM) and len({t.list_of(t.STR), t.list_of(t.STR)}) == 1
    d = Diagnostic("L201", "error", "m", None, None)
    assert d.replace(message="n") == Diagnostic("L201", "error", "n") and d.message == "m"
    assert len({c.code for c in (CATALOGUE.values() if isinstance(CATALOGUE, dict) else CATALOGUE)}) > 10
