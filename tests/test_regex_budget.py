"""The regex time budget is cumulative per signal: a slow signal over many surfaces is unknown.

Time is counted, not measured: `regexes._clock` is replaced by a counter that advances by one per
reading, so every search costs exactly one unit and a budget of N units allows N searches.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import litmus_rules
from _helpers import base_episode
from litmus_rules.domain import regexes
from litmus_rules.domain.matching import first_collision
from litmus_rules.domain.regexes import RegexUnknown, regex_budget, regex_search

# Backtracking (a backreference: never RE2), and no match in these surfaces.
CATASTROPHIC = r"(a|aa)+\1b"
SURFACE = "aaaaaaaaaaaac b"


class Counter:
    """A clock that reads 0, 1, 2, ...: a search (two readings) costs one unit."""

    def __init__(self) -> None:
        self._next = itertools.count().__next__
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return float(self._next())

    @property
    def searches(self) -> int:
        return self.readings // 2


def _tag(n: int) -> str:
    """n written with letters no normalisation changes (digits have confusable skeletons)."""
    out = ""
    while True:
        n, d = divmod(n, 3)
        out += "qxz"[d]
        if not n:
            return out


def _episode(run: int, surfaces: int = 40) -> dict[str, Any]:
    ep = base_episode()
    ep["id"] = f"budget-{run}"
    # new texts each run, so no search result is reused from an earlier run
    ep["context"]["messages"] += [{"role": "user", "content": f"{SURFACE} {_tag(run)} {_tag(i)}"}
                                  for i in range(surfaces)]
    ep["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": CATASTROPHIC})
    return ep


def _evaluate(monkeypatch: pytest.MonkeyPatch, run: int, budget: float, scoped: bool = False) -> tuple[Any, int]:
    clock = Counter()
    monkeypatch.setattr(regexes, "_clock", clock)
    monkeypatch.setattr(regexes, "REGEX_BUDGET", budget)
    if scoped:  # as RuleSet.evaluate would do it: one scope per evaluation
        with regex_budget():
            verdict = litmus_rules.load_rules().evaluate(_episode(run))
    else:
        verdict = litmus_rules.load_rules().evaluate(_episode(run))
    return verdict, clock.searches


@pytest.mark.parametrize("scoped", [False, True])
def test_a_slow_signal_over_many_surfaces_is_rejected_at_one_search_past_its_budget(
        monkeypatch: pytest.MonkeyPatch, scoped: bool) -> None:
    # the texts every run shares (the manifest, the controls' transcripts) are searched once and
    # their results kept: a first run leaves only this run's surfaces to search
    _evaluate(monkeypatch, 0 if scoped else 100, 1e9, scoped)
    verdict, needed = _evaluate(monkeypatch, 1 + 10 * scoped, 1e9, scoped)
    assert verdict.verdict == "SCORED", verdict.reasons
    assert needed >= 40  # every surface is searched (in several forms)

    at_limit, searched = _evaluate(monkeypatch, 2 + 10 * scoped, float(needed), scoped)
    assert at_limit.verdict == "SCORED", at_limit.reasons
    assert searched == needed

    past, _ = _evaluate(monkeypatch, 3 + 10 * scoped, float(needed - 1), scoped)
    assert past.verdict == "REJECTED"
    (reason,) = past.reasons
    assert reason.rule == "injector_detector_disjoint"
    assert reason.kind in ("evaluation_error", "insufficient_evidence")
    assert "regex signal 's2'" in reason.message
    assert f"time budget of {needed - 1:g} s" in reason.message
    assert f"after {needed - 1} searches" in reason.message


def test_a_tiny_budget_never_scores_a_catastrophic_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    for budget in (0.0, 1.0, 5.0):
        verdict, _ = _evaluate(monkeypatch, 50 + int(budget), budget)
        assert verdict.verdict == "REJECTED", budget
        assert "time budget" in verdict.reasons[0].message


def test_the_budget_of_a_scope_is_shared_by_all_its_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside `regex_budget()` (one evaluation), every search of one (pattern, flags) counts,
    however it is made; other patterns have their own account; a new scope starts afresh."""
    monkeypatch.setattr(regexes, "_clock", Counter())
    with regex_budget(3):
        for _ in range(3):
            assert regex_search(CATASTROPHIC, SURFACE) is None
        assert regex_search("c", SURFACE) == (12, "c")  # another pattern: its own budget
        with pytest.raises(RegexUnknown, match=r"time budget of 3 s .* after 3 searches over 1 texts"):
            regex_search(CATASTROPHIC, "x")
        with pytest.raises(RegexUnknown, match="time budget"):
            first_collision({"id": "s9", "kind": "regex", "value": CATASTROPHIC}, [SURFACE, "y"])
    with regex_budget(3):
        assert regex_search(CATASTROPHIC, "x") is None


def test_without_a_scope_each_signal_search_has_its_own_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regexes, "_clock", Counter())
    monkeypatch.setattr(regexes, "REGEX_BUDGET", 4)
    signal = {"id": "s3", "kind": "regex", "value": CATASTROPHIC}
    # ASCII texts: one form each, so one search per text
    assert first_collision(signal, [f"{SURFACE} {_tag(i)}" for i in range(4)]) is None
    with pytest.raises(RegexUnknown, match=r"regex signal 's3' .* after 4 searches over 4 texts"):
        first_collision(signal, [f"{SURFACE} {_tag(i)}" for i in range(4, 9)])
    # plain searches outside any signal search keep only the per-search limit
    for _ in range(10):
        assert regex_search(CATASTROPHIC, SURFACE) is None


def test_a_search_cut_short_by_the_budget_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last search gets only what is left of the budget as its timeout."""
    with regex_budget(1e-6), pytest.raises(RegexUnknown, match="time budget|did not finish"):
        for _ in range(1000):
            regex_search(r"(a|aa)+\1b", "a" * 40 + "c")


def test_pattern_length_limit_at_and_past_it() -> None:
    at = "a" * regexes.MAX_PATTERN_LEN
    assert regex_search(at, at) == (0, at)
    with pytest.raises(RegexUnknown, match=f"limit {regexes.MAX_PATTERN_LEN}"):
        regex_search(at + "a", at)
