"""Fuzzing the engine: any JSON-like episode, and generated rule files through parse, check and
evaluate. Whatever the input, the only exceptions are the library's own (LitmusError)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import LitmusError, load_rules, load_rules_text
from litmus_rules.errors import FactsError
from litmus_rules.render.text import render_verdict
from reference_gen import rule_files
from property.strategies import rule_texts

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

_text = st.text(max_size=12)  # lone surrogates included: valid JSON can carry them
_number = st.integers(-(10**30), 10**30) | st.floats()  # NaN and infinities included
JSON = st.recursive(
    st.none() | st.booleans() | _number | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)
KEYS = ["litmus", "id", "context", "detector", "canaries", "controls", "episode", "provenance", "extra", "unknowns"]
EPISODES = st.fixed_dictionaries({}, optional={k: JSON for k in KEYS}) | JSON

_SHIPPED: list[Any] = []


def shipped() -> Any:
    if not _SHIPPED:
        _SHIPPED.append(load_rules())
    return _SHIPPED[0]


def check_verdict(rules: Any, episode: Any, validate: bool) -> None:
    try:
        verdict = rules.evaluate(episode, validate=validate)
    except FactsError:
        assert not validate and not isinstance(episode, dict)  # only a non-mapping, only unvalidated
        return
    assert verdict.verdict in ("SCORED", "REJECTED", "ERROR")
    for reason in verdict.reasons:
        assert reason.kind in ("violation", "insufficient_evidence", "evaluation_error", "invalid_input")
        assert "Traceback" not in reason.message
    verdict.to_json()
    render_verdict(verdict)


@FUZZ
@given(EPISODES)
def test_any_json_like_episode_gets_a_verdict_or_the_librarys_error(episode: Any) -> None:
    for validate in (True, False):
        check_verdict(shipped(), episode, validate)


@FUZZ
@given(rule_files, st.lists(EPISODES, max_size=3))
def test_generated_rule_files_load_and_evaluate_or_fail_with_litmus_errors(text: str, episodes: list[Any]) -> None:
    try:
        rules = load_rules_text(text, "fuzz.litmus")
    except LitmusError as exc:
        exc.render()  # a located message, never a traceback
        return
    for episode in episodes:
        for validate in (True, False):
            check_verdict(rules, episode, validate)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(rule_texts())
def test_arbitrary_grammatical_rule_texts_fail_only_with_litmus_errors(text: str) -> None:
    try:
        rules = load_rules_text(text, "gen.litmus")
    except LitmusError as exc:
        exc.render()
        return
    check_verdict(rules, {"id": "e"}, False)
