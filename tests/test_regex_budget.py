"""The regex budget is cumulative per signal and counted in characters searched: a signal whose
searches over many surfaces go past it is unknown, at the same search on any machine.

The backstop on backtracking searches is time: `regexes._clock` is replaced by a counter that
advances by one per reading, so each backtracking search costs exactly one second.
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
W = regexes.BACKTRACK_WEIGHT


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


class Spending:
    """Records what each regex's account spent in every scope opened while it is installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ledgers: list[Any] = []
        made = regexes._Ledger.__init__

        def init(ledger: Any, *args: Any, **kwargs: Any) -> None:
            made(ledger, *args, **kwargs)
            self.ledgers.append(ledger)

        monkeypatch.setattr(regexes._Ledger, "__init__", init)

    def spent(self, pattern: str) -> int:
        return sum(a.spent for ledger in self.ledgers for (p, _), a in ledger.accounts.items() if p == pattern)


def _evaluate(monkeypatch: pytest.MonkeyPatch, run: int, budget: int, scoped: bool = False) -> Any:
    monkeypatch.setattr(regexes, "REGEX_BUDGET", budget)
    if scoped:  # as RuleSet.evaluate would do it: one scope per evaluation
        with regex_budget():
            return litmus_rules.load_rules().evaluate(_episode(run))
    return litmus_rules.load_rules().evaluate(_episode(run))


@pytest.mark.parametrize("scoped", [False, True])
def test_a_slow_signal_over_many_surfaces_is_rejected_at_one_character_past_its_budget(
        monkeypatch: pytest.MonkeyPatch, scoped: bool) -> None:
    # the texts every run shares (the manifest, the controls' transcripts) are searched once and
    # their results kept: a first run leaves only this run's surfaces to search
    _evaluate(monkeypatch, 0 if scoped else 100, 10**12, scoped)
    spending = Spending(monkeypatch)
    verdict = _evaluate(monkeypatch, 1 + 10 * scoped, 10**12, scoped)
    assert verdict.verdict == "SCORED", verdict.reasons
    needed = spending.spent(CATASTROPHIC)
    assert needed >= 40 * (len(SURFACE) + 1) * W  # every surface is searched (in several forms)

    at_limit = _evaluate(monkeypatch, 2 + 10 * scoped, needed, scoped)
    assert at_limit.verdict == "SCORED", at_limit.reasons

    past = _evaluate(monkeypatch, 3 + 10 * scoped, needed - 1, scoped)
    assert past.verdict == "REJECTED"
    (reason,) = past.reasons
    assert reason.rule == "injector_detector_disjoint"
    assert reason.kind in ("evaluation_error", "insufficient_evidence")
    assert "regex signal 's2'" in reason.message
    assert f"search budget of {needed - 1:,} characters (regexes.REGEX_BUDGET)" in reason.message


def test_the_budget_does_not_read_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """RE2 searches are counted, never timed: however slow the machine seems, the verdict is the
    same (here every reading of the clock is a thousand seconds later than the last)."""
    episode = base_episode()
    episode["id"] = "budget-clock"
    episode["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": r"zq[a-z]+x"})
    expected = litmus_rules.load_rules().evaluate(episode).to_json()
    later = itertools.count(0, 1000)
    monkeypatch.setattr(regexes, "_clock", lambda: float(next(later)))
    episode["id"] = "budget-clock-2"  # new texts: nothing is reused from the first run
    again = litmus_rules.load_rules().evaluate(episode).to_json()
    assert again["verdict"] == expected["verdict"] == "SCORED"
    assert again["reasons"] == expected["reasons"] == []


def test_a_tiny_budget_never_scores_a_catastrophic_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    for budget in (0, 1, 5 * W * (len(SURFACE) + 1)):
        verdict = _evaluate(monkeypatch, 50 + budget, budget)
        assert verdict.verdict == "REJECTED", budget
        assert "search budget" in verdict.reasons[0].message


def test_the_budget_of_a_scope_is_shared_by_all_its_searches() -> None:
    """Inside `regex_budget()` (one evaluation), every search of one (pattern, flags) counts,
    however it is made; other patterns have their own account; a new scope starts afresh."""
    cost = (len(SURFACE) + 1) * W  # a backtracking search of SURFACE
    with regex_budget(3 * cost):
        for _ in range(3):
            assert regex_search(CATASTROPHIC, SURFACE) is None
        assert regex_search("c", SURFACE) == (12, "c")  # another pattern: its own budget
        with pytest.raises(RegexUnknown, match=rf"search budget of {3 * cost} characters .* after 3 searches over 1 texts"):
            regex_search(CATASTROPHIC, "x")
        with pytest.raises(RegexUnknown, match="search budget"):  # and it stays spent
            regex_search(CATASTROPHIC, "")
        with pytest.raises(RegexUnknown, match="search budget"):
            first_collision({"id": "s9", "kind": "regex", "value": CATASTROPHIC}, [SURFACE, "y"])
    with regex_budget(3 * cost):
        assert regex_search(CATASTROPHIC, "x") is None


def test_an_re2_search_counts_each_character_once() -> None:
    text = "b" * 99
    with regex_budget(3 * 100):
        for _ in range(3):
            assert regex_search("a", text) is None
        with pytest.raises(RegexUnknown, match="search budget of 300 characters .* after 3 searches"):
            regex_search("a", "b")


def test_without_a_scope_each_signal_search_has_its_own_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"{SURFACE} {_tag(i)}" for i in range(9, 18)]  # all of one length
    # ASCII texts: one form each, so one search per text
    monkeypatch.setattr(regexes, "REGEX_BUDGET", sum((len(t) + 1) * W for t in texts[:4]))
    signal = {"id": "s3", "kind": "regex", "value": CATASTROPHIC}
    assert first_collision(signal, texts[:4]) is None
    with pytest.raises(RegexUnknown, match=r"regex signal 's3' .* after 4 searches over 4 texts"):
        first_collision(signal, texts[4:])
    # plain searches outside any signal search keep only the per-search limit
    for _ in range(10):
        assert regex_search(CATASTROPHIC, SURFACE) is None


def test_backtracking_searches_stop_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backstop: each backtracking search here takes one (counted) second."""
    monkeypatch.setattr(regexes, "_clock", itertools.count().__next__)
    with regex_budget(seconds=3):
        for _ in range(3):
            assert regex_search(CATASTROPHIC, SURFACE) is None
        with pytest.raises(RegexUnknown, match=r"time limit of 3 s for backtracking searches \(regexes.REGEX_TIME_LIMIT\) after 4 searches"):
            regex_search(CATASTROPHIC, SURFACE)
        assert regex_search("c", SURFACE) == (12, "c")  # RE2: not timed


def test_a_search_cut_short_by_the_time_limit_is_unknown() -> None:
    """The last search gets only what is left of the time limit as its timeout."""
    with regex_budget(seconds=1e-6), pytest.raises(RegexUnknown, match="time limit|did not finish"):
        for _ in range(1000):
            regex_search(r"(a|aa)+\1b", "a" * 40 + "c")


def test_pattern_length_limit_at_and_past_it() -> None:
    at = "a" * regexes.MAX_PATTERN_LEN
    assert regex_search(at, at) == (0, at)
    with pytest.raises(RegexUnknown, match=f"limit {regexes.MAX_PATTERN_LEN}"):
        regex_search(at + "a", at)
