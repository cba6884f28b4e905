"""`declared_unknown(unknowns, pointer)`: a producer's declaration covers the fact, its documents
above and its parts below, never a sibling whose name merely starts the same."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litmus_rules.domain.builtins import REGISTRY
from litmus_rules.lang.values import UNKNOWN, EvalFailure

declared = REGISTRY["declared_unknown"].impl


def entries(*paths: str) -> list[dict[str, Any]]:
    return [{"path": p, "note": "n"} for p in paths]


@pytest.mark.parametrize(("paths", "pointer", "expected"), [
    ((), "/context/tools", False),
    (("/context/tools",), "/context/tools", True),
    (("/context",), "/context/tools", True),
    (("",), "/context/tools", True),
    (("/context/tools/3/description",), "/context/tools", True),
    (("/context/toolsets",), "/context/tools", False),
    (("/context/skills",), "/context/tools", False),
])
def test_what_a_declaration_covers(paths: tuple[str, ...], pointer: str, expected: bool) -> None:
    assert declared(entries(*paths), pointer) is expected


def test_no_unknowns_declares_nothing() -> None:
    assert declared(UNKNOWN, "/context/tools") is False


def test_an_entry_without_a_path_fails_closed() -> None:
    with pytest.raises(EvalFailure):
        declared([{"note": "n"}], "/context/tools")


segment = st.text("abcdefgh01", min_size=1, max_size=4)


@given(st.lists(segment, min_size=1, max_size=4), st.lists(segment, max_size=3))
def test_a_declared_document_covers_everything_under_it(prefix: list[str], rest: list[str]) -> None:
    declared_at = "/" + "/".join(prefix)
    below = declared_at + "".join("/" + s for s in rest)
    assert declared(entries(declared_at), below) is True
    assert declared(entries(below), declared_at) is True
    assert declared(entries(declared_at + "x"), declared_at) is False
