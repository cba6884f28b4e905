"""The state channel's built-in (domain/state.py): JMESPath truthiness, and its bounds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules import load_rules
from litmus_rules.domain import state
from litmus_rules.domain.builtins import REGISTRY
from litmus_rules.lang.values import EvalFailure

SNAPSHOT = {"bank": {"transactions": [{"recipient": "US1", "subject": "Spotify Premium", "amount": 0}]}}


@pytest.mark.parametrize("query, holds", [
    ("bank.transactions[?recipient == 'US1' && contains(subject, 'Spotify')]", True),
    ("bank.transactions[?recipient == 'US2']", False),
    ("bank.transactions[0].amount", True),  # 0 is truthy in JMESPath
    ("bank.missing", False),  # null
    ("bank.transactions[?amount > `5`]", False),  # []
    ("`{}`", False),
    ("''", False),
    ("length(bank.transactions) == `1`", True),
])
def test_jmespath_truthiness(query: str, holds: bool) -> None:
    assert state.state_holds(query, SNAPSHOT) is holds


@pytest.mark.parametrize("query, says", [
    ("bank.transactions[?recipient ==", "does not parse"),
    ("no_such(bank)", "Unknown function"),
    ("abs('x')", "invalid type"),
])
def test_a_query_that_cannot_be_evaluated_is_an_error(query: str, says: str) -> None:
    with pytest.raises(state.StateError, match=says):
        state.state_holds(query, SNAPSHOT)


def test_a_query_past_the_length_limit_is_unknown_naming_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state, "MAX_QUERY_CHARS", 10)
    with pytest.raises(state.StateUnknown, match="MAX_QUERY_CHARS"):
        state.state_holds("bank.transactions", SNAPSHOT)


@pytest.mark.parametrize("limit, value", [("MAX_SNAPSHOT_VALUES", 3), ("MAX_SNAPSHOT_CHARS", 5)])
def test_a_snapshot_past_a_size_limit_is_unknown_naming_the_limit(monkeypatch: pytest.MonkeyPatch, limit: str,
                                                                   value: int) -> None:
    monkeypatch.setattr(state, limit, value)
    with pytest.raises(state.StateUnknown, match=limit):
        state.state_holds("bank", SNAPSHOT)  # a query that would be true: never true past a limit


def test_a_query_that_doubles_a_value_runs_out_of_steps() -> None:
    runaway = "@" + " | join('', [@, @])" * 60
    with pytest.raises(state.StateError, match="MAX_STEPS"):
        state.state_holds(runaway, "ab")
    shared = "@" + " | {a: @, b: @}" * 60 + " | to_string(@)"
    with pytest.raises(state.StateError, match="MAX_STEPS"):
        state.state_holds(shared, "ab")


def test_steps_are_counted_per_node_visited() -> None:
    items = list(range(50))
    assert state.state_holds("[?@ > `48`]", items, steps=500)
    with pytest.raises(state.StateError):
        state.state_holds("[?@ > `48`]", items, steps=20)


def test_the_builtin_turns_both_into_a_fail_closed_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    impl = REGISTRY["state_holds"].impl
    with pytest.raises(EvalFailure, match=r"\(cannot be evaluated\)"):
        impl("a[", {})
    monkeypatch.setattr(state, "MAX_SNAPSHOT_VALUES", 1)
    with pytest.raises(EvalFailure, match=r"\(unknown\).*MAX_SNAPSHOT_VALUES"):
        impl("a", {"a": [1, 2]})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(json_values, st.sampled_from(["a", "b", "c"]))
def test_a_field_query_holds_exactly_when_the_field_is_jmespath_truthy(snapshot: Any, key: str) -> None:
    value = snapshot.get(key) if isinstance(snapshot, dict) else None
    # JMESPath's false values; `0` is true (and compares equal to False in Python: test by identity)
    expected = not (value is None or value is False or (isinstance(value, (str, list, dict)) and not value))
    assert state.state_holds(key, snapshot) is expected


def test_a_state_episode_with_a_bad_query_rejects_as_an_evaluation_error() -> None:
    episode = {
        "litmus": "episode/1.1", "id": "s1", "context": {},
        "detector": {"channel": "state", "signals": [{"id": "q", "kind": "state", "query": "a[", "values": ["x"]}]},
        "controls": {"null": {"state": {}}},
    }
    verdict = load_rules().evaluate(episode)
    (reason,) = [r for r in verdict.reasons if r.rule == "null_state_silent"]
    assert reason.kind == "evaluation_error" and "does not parse" in reason.message
    assert "structured_scoring_channel" not in {r.rule for r in verdict.reasons}
