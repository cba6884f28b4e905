"""Cold start, round 15: the value classes a check builds are `lang.records` classes, not attrs ones,
and regexes are compiled on first use. Checked by behaviour (what a record does, against attrs as
the oracle) and by what a fresh interpreter imports, never by timing."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import CLI_MODULES_RUN, ROOT
from litmus_rules.domain import decoding, paths
from litmus_rules.domain.lazyre import Patterns
from litmus_rules.lang import ast
from litmus_rules.lang.records import FrozenError, field, fields, record, replace

EXAMPLE = ROOT / "examples" / "clean-structured.yaml"


@record
class _Rec:
    a: Any
    b: Any
    hidden: Any = field(default=None, eq=False, repr=False)
    c: Any = ()
    made: Any = field(factory=list, eq=False)  # a list: kept out of the hash


@attrs.frozen
class _Attrs:
    a: Any
    b: Any
    hidden: Any = attrs.field(default=None, eq=False, repr=False)
    c: Any = ()
    made: Any = attrs.field(factory=list, eq=False)


VALUES = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3), st.tuples(st.integers(0, 2)))


@settings(max_examples=150, deadline=None)
@given(st.lists(VALUES, min_size=4, max_size=4), st.lists(VALUES, min_size=4, max_size=4))
def test_a_record_compares_hashes_and_shows_itself_as_the_attrs_class_did(x: list[Any], y: list[Any]) -> None:
    mine = [_Rec(x[0], x[1], x[2], x[3]), _Rec(y[0], b=y[1], hidden=y[2], c=y[3])]
    theirs = [_Attrs(x[0], x[1], x[2], x[3]), _Attrs(y[0], b=y[1], hidden=y[2], c=y[3])]
    assert (mine[0] == mine[1]) == (theirs[0] == theirs[1])
    if mine[0] == mine[1]:
        assert hash(mine[0]) == hash(mine[1])
    for m, t in zip(mine, theirs):
        assert repr(m).replace("_Rec(", "_Attrs(", 1) == repr(t)
        assert pickle.loads(pickle.dumps(m)) == m
        assert replace(m, c="new") == _Rec(m.a, m.b, m.hidden, "new", m.made)
        assert replace(m, c="new").a is m.a


def test_a_frozen_record_refuses_assignment_and_a_factory_gives_each_its_own_value() -> None:
    one, two = _Rec(1, 2), _Rec(1, 2)
    with pytest.raises(FrozenError):
        one.a = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del one.b
    assert one.made == [] and one.made is not two.made
    assert [f.name for f in fields(_Rec)] == ["a", "b", "hidden", "c", "made"]


@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((1, 2, 3, 4, 5, 6), {}), ((1, 2), {"zz": 1}),
                                          ((1, 2), {"a": 1})])
def test_a_record_is_called_as_its_fields_allow(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        _Rec(*args, **kwargs)
    with pytest.raises(TypeError):
        _Attrs(*args, **kwargs)


def test_a_mutable_record_is_not_hashable_and_keeps_its_own_init() -> None:
    from litmus_rules.engine.verdict import Reason, Verdict

    v = Verdict("e1", "SCORED")
    assert v.classifications == {} and v.classifications is not Verdict("e2", "SCORED").classifications
    assert v == Verdict("e1", "SCORED") and v != Verdict("e1", "REJECTED")
    with pytest.raises(TypeError):
        hash(v)
    r = Reason("rule", "why", "violation")
    r.code = "L601"  # not frozen, as attrs.define was
    assert replace(r, kind="evaluation_error") == Reason("rule", "why", "evaluation_error", code="L601")
    assert pickle.loads(pickle.dumps(v)) == v


def test_ast_nodes_keep_spans_out_of_equality_and_their_repr() -> None:
    from litmus_rules.source import Source, Span

    src = Source("r.litmus", "x and x")
    left, right = ast.Name("x", Span(src, 0, 1)), ast.Name(name="x", span=Span(src, 6, 7))
    assert left == right and hash(left) == hash(right) and repr(left) == "Name(name='x')"
    assert ast.replace(left, name="y") == ast.Name("y", left.span)
    assert [f.name for f in ast.fields(ast.RuleSet)] == ["name", "version", "items", "span", "comments"]
    with pytest.raises(TypeError):
        ast.fields(ast.NodeField)


def test_lazy_patterns_compile_on_first_use_to_what_re_compiles() -> None:
    patterns = Patterns(word=(r"\w+", re.ASCII))
    assert "word" not in vars(patterns)  # nothing compiled yet
    assert patterns.word.pattern == r"\w+" and patterns.word.flags == re.compile(r"\w+", re.ASCII).flags
    assert vars(patterns)["word"] is patterns.word  # compiled once, then a plain attribute
    with pytest.raises(AttributeError):
        patterns.other  # noqa: B018
    # the former module attributes still name the compiled patterns
    assert paths._PATH_MAY_CHANGE.search("a/./b") is not None
    assert paths._SURROGATE.sub("?", "a\ud800") == "a?"


def _modules_after(code: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         env=env, capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout))


def test_the_verdict_ast_trace_input_and_config_classes_need_no_attrs() -> None:
    modules = _modules_after("import litmus_rules.config, litmus_rules.lang.ast, litmus_rules.lang.astjson, "
                             "litmus_rules.lang.trace, litmus_rules.engine.verdict, litmus_rules.io.inputs, "
                             "litmus_rules.engine.rulecache")
    assert {"attrs", "attr", "inspect"} & modules == set()


def test_a_check_of_one_clean_file_imports_no_html_entities(tmp_path: Path) -> None:
    if not EXAMPLE.exists():
        pytest.skip("no examples next to the tests")
    out = tmp_path / "run.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITMUS_RULES_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-c", CLI_MODULES_RUN, str(out), "check", str(EXAMPLE)], env=env, cwd=tmp_path,
                   capture_output=True, text=True, check=True, timeout=120)
    done = json.loads(out.read_text())
    assert done["code"] == 0 and "1 SCORED" in done["stdout"]
    assert "html" not in done["modules"] and "html.entities" not in done["modules"]
    assert decoding.html_unescape("&amp;lt;b&gt;") == "<b>"  # where a text has one, it is decoded
