"""The fast path, the recording path and the verdict, each against the reference evaluator.

Any disagreement is a bug in the compiled evaluator: the value, the kind of an unknown (missing
evidence or evaluation error), the error message, and the missing fact paths a reason names.
Each example is one generated condition run on a batch of generated episodes: 400 x 30 = 12,000
cases per run.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings

from reference_gen import conditions, episode_batches, fast, load, recording, reference

EPISODES_PER_CONDITION = 30
SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def _same(got: Any, want: Any, what: str, condition: str, facts: Any) -> None:
    assert (got.kind, got.error) == (want.kind, want.error), (what, condition, facts, got, want)
    if want.kind in ("true", "false"):
        assert got.value is want.value, (what, condition, facts)
    if want.kind == "insufficient_evidence" and what != "fast":
        assert got.missing == want.missing, (what, condition, facts, got.missing, want.missing)


@SETTINGS
@given(conditions, episode_batches(EPISODES_PER_CONDITION))
def test_every_path_agrees_with_the_reference(condition: str, batch: list[dict[str, Any]]) -> None:
    rules = load(condition)
    assume(rules is not None)  # a generated condition the checker refuses (a type error it can see)
    assert rules is not None
    for facts in batch:
        want = reference(rules, facts)
        got, env = fast(rules, facts)
        _same(got, want, "fast", condition, facts)
        _same(recording(rules, facts), want, "recording", condition, facts)
        _same(recording(rules, facts, hint=env), want, "recording after fast", condition, facts)
        verdict = rules.evaluate(facts, validate=False)
        if want.kind == "false":
            assert verdict.verdict == "SCORED", (condition, facts)
            continue
        (reason,) = verdict.reasons
        kind = {"true": "violation"}.get(want.kind, want.kind)
        assert reason.kind == kind, (condition, facts, reason, want)
        if want.kind == "evaluation_error":
            assert reason.message == f"could not evaluate: {want.error}", (condition, facts)
        if want.kind == "insufficient_evidence":
            assert reason.missing == want.missing, (condition, facts, reason.missing, want.missing)
