"""The per-evaluation regex scope (`open_budget` / `close_budget`, opened once per episode by
`RuleSet.evaluate`): a scope that has not searched anything yet is still the scope under way, and
closing it ends it."""

from __future__ import annotations

import pytest

from litmus_rules.domain import regexes
from litmus_rules.domain.regexes import RegexUnknown, budget_scope, close_budget, open_budget, regex_budget, regex_search


def _texts(n: int) -> list[str]:
    # distinct texts (a remembered answer costs nothing), 60 characters each, none matching
    return [f"{'q' * 50} text {i:03d}" for i in range(n)]


@pytest.mark.parametrize("opened", ["context manager", "open_budget"])
def test_a_fresh_scope_is_the_one_under_way_for_a_nested_search(opened: str) -> None:
    # 100 characters: the first 60-character search fits, the second does not
    if opened == "context manager":
        with regex_budget(100), budget_scope():  # nothing searched yet: still the scope in force
            assert regex_search("zzz+", _texts(1)[0]) is None
            with pytest.raises(RegexUnknown, match="search budget of 100 characters"):
                regex_search("zzz+", _texts(2)[1])
    else:
        token = open_budget(100)
        try:
            with budget_scope():
                assert regex_search("yyy+", _texts(1)[0]) is None
                with pytest.raises(RegexUnknown, match="search budget of 100 characters"):
                    regex_search("yyy+", _texts(2)[1])
        finally:
            close_budget(token)


def test_a_closed_scope_leaves_the_default_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regexes, "REGEX_BUDGET", 10**6)
    token = open_budget(100)
    close_budget(token)
    with budget_scope():  # a new scope with the default budget, not the closed one's 100
        for text in _texts(5):
            assert regex_search("xxx+", text) is None
