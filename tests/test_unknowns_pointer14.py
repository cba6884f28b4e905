"""`parse_pointer` is RFC 6901 whichever way it gets there: the fast path for pointers with no `~`
and the escaped path agree with the token-by-token definition on every pointer."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import unknowns


def _by_tokens(pointer: str) -> tuple[str, ...] | None:
    if not pointer.startswith("/"):
        return None
    tokens = pointer[1:].split("/")
    if any(re.search(r"~(?![01])", t) for t in tokens):
        return None
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in tokens)


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.text(alphabet="/~01a", max_size=12))
def test_parse_pointer_is_the_token_by_token_definition(pointer: str) -> None:
    assert unknowns.parse_pointer(pointer) == _by_tokens(pointer)


def test_notes_reads_each_path_against_the_entries_once() -> None:
    doc = {"unknowns": [{"path": "/controls/null", "note": "not run"}, {"path": "/canaries/0", "note": "redacted"}]}
    got = unknowns.notes(doc, ["controls.null.label", "canaries", "detector.signals", "x[y"])
    assert {k: [e.pointer for e in v] for k, v in got.items()} == {
        "controls.null.label": ["/controls/null"], "canaries": ["/canaries/0"]}
    assert unknowns.notes_for(doc, "detector.signals") == []
    assert unknowns.notes({}, ["canaries"]) == {}
