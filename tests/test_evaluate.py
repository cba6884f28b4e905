"""Evaluation semantics: three-valued logic, quantifiers and witnesses, failing closed."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from litmus_rules import REJECTED, SCORED, LitmusConfigError, load_rules_text

HEAD = 'ruleset t version "1"\n'


def run(condition: str, facts: dict[str, Any], mode: str = "when", message: str = "", **kw: Any):
    because = f' because "{message}"' if message else ""
    rules = load_rules_text(HEAD + f"rule r reject {mode} {condition}{because}", "t.litmus", **kw)
    return rules.evaluate({"litmus": "episode/1", "id": "e", "context": {}, "detector": {"channel": "dispatch"}, **facts}, validate=False)


def outcome(condition: str, facts: dict[str, Any]) -> str:
    """violated / insufficient_evidence / evaluation_error / passed for `reject when condition`."""
    v = run(condition, facts)
    return v.reasons[0].kind if v.reasons else "passed"


T, F, U = "true", "false", "extra.missing"  # U: a fact that is absent, hence unknown


@pytest.mark.parametrize(
    "expr, expected",
    [
        (f"{T} and {U}", "insufficient_evidence"),
        (f"{F} and {U}", "passed"),
        (f"{T} or {U}", "violation"),
        (f"{F} or {U}", "insufficient_evidence"),
        (f"not {U}", "insufficient_evidence"),
        (f"{U} == 1", "insufficient_evidence"),
        (f"{U} in [1]", "insufficient_evidence"),
        (f"not ({F} and {U})", "violation"),
    ],
)
def test_kleene_logic(expr: str, expected: str) -> None:
    assert outcome(expr, {"extra": {}}) == expected


def test_missing_fact_rejects_naming_the_path() -> None:
    v = run('controls.null.transcript == "x"', {})
    assert v.verdict == REJECTED
    (reason,) = v.reasons
    assert reason.kind == "insufficient_evidence"
    assert reason.missing == ("controls.null.transcript",)
    assert "`controls.null.transcript` is missing" in reason.message


def test_reject_unless_passes_only_on_definite_truth() -> None:
    assert run('detector.channel == "dispatch"', {}, mode="unless").verdict == SCORED
    assert run('detector.channel == "transcript"', {}, mode="unless").reasons[0].kind == "violation"
    assert run("controls.positive.fired", {}, mode="unless").reasons[0].kind == "insufficient_evidence"


def test_any_binds_its_witness_for_the_message_and_trace() -> None:
    facts = {"canaries": [{"value": "A"}, {"value": "B"}], "controls": {"null": {"transcript": "xx B yy"}}}
    v = run("any c in canaries: c.value in controls.null.transcript", facts, message="canary {c.value!r} leaked")
    (reason,) = v.reasons
    assert reason.message == "canary 'B' leaked"
    assert reason.trace.root.binding == {"c": "canaries[1]"}
    compare = reason.trace.root.children[-1]
    assert [(c.reads, c.value) for c in compare.children] == [
        ("canaries[1].value", "B"),
        ("controls.null.transcript", "xx B yy"),
    ]


def test_multi_binding_witness_and_all_counterexample() -> None:
    facts = {"extra": {"xs": [1, 2], "ys": [3, 4]}}
    v = run("any x in extra.xs, y in extra.ys: x + y == 6", facts, message="{x}+{y}")
    assert v.reasons[0].message == "2+4"
    v = run("all x in extra.xs: x < 2", facts, mode="unless", message="counterexample {x}")
    assert v.reasons[0].message == "counterexample 2"


def test_quantifiers_over_unknown_elements() -> None:
    facts = {"extra": {"xs": [{"a": 1}, {}]}}
    assert outcome("any x in extra.xs: x.a == 1", facts) == "violation"  # a true witness decides
    assert outcome("any x in extra.xs: x.a == 2", facts) == "insufficient_evidence"
    assert outcome("all x in extra.xs: x.a == 1", facts) == "insufficient_evidence"
    assert outcome("all x in extra.xs: x.a == 2", facts) == "passed"  # a false element decides
    assert outcome("(count x in extra.xs: x.a == 1) > 0", facts) == "insufficient_evidence"
    assert outcome("any x in []: true", {}) == "passed"
    assert outcome("all x in []: false", {}) == "violation"


def test_comprehensions_and_lists() -> None:
    facts = {"extra": {"xs": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]}}
    assert outcome('[x.v for x in extra.xs if x.k == "b"] == [2]', facts) == "violation"
    assert outcome("[x.missing for x in extra.xs] == []", facts) == "insufficient_evidence"
    assert outcome("len([1, 2] + [3]) == 3", {}) == "violation"


def test_json_equality_is_strict_about_booleans() -> None:
    assert outcome("true == 1", {}) == "passed"
    assert outcome("1 == 1.0", {}) == "violation"
    assert outcome("true in [1]", {}) == "passed"


def test_type_errors_fail_closed_with_a_reason() -> None:
    v = run("extra.s < 3", {"extra": {"s": "text"}})
    (reason,) = v.reasons
    assert reason.kind == "evaluation_error" and "compares numbers or strings" in reason.message
    assert run("extra.s.x == 1", {"extra": {"s": "text"}}).reasons[0].kind == "evaluation_error"


def test_null_parent_counts_as_missing_evidence() -> None:
    assert outcome("controls.null.label == 1", {"controls": {"null": None}}) == "insufficient_evidence"


def test_budget_turns_runaway_work_into_an_explained_reject() -> None:
    facts = {"extra": {"xs": list(range(300))}}
    v = run("any a in extra.xs, b in extra.xs, c in extra.xs: a + b + c < 0", facts, budget=100_000)
    (reason,) = v.reasons
    assert reason.kind == "evaluation_error" and "budget" in reason.message


def test_params_default_and_override() -> None:
    text = HEAD + "param limit = 2\nrule r reject when len(canaries) > limit"
    episode = {"litmus": "episode/1", "id": "e", "context": {}, "detector": {}, "canaries": [{"value": "a"}] * 3}
    assert load_rules_text(text).evaluate(episode, validate=False).verdict == REJECTED
    assert load_rules_text(text, params={"limit": "5"}).evaluate(episode, validate=False).verdict == SCORED
    with pytest.raises(LitmusConfigError, match="did you mean `limit`"):
        load_rules_text(text, params={"limt": 1})
    with pytest.raises(LitmusConfigError, match="expects a number"):
        load_rules_text(text, params={"limit": "many"})


def test_classification_first_match_wins_and_unknown_is_undecided() -> None:
    text = HEAD + (
        "rule r reject when false\n"
        "classify decision\n"
        '  "executed" when any d in episode.dispatch: d.decision == "execute"\n'
        '  "refused" when any d in episode.dispatch: d.decision == "refuse"\n'
        '  "no_action" otherwise\n'
    )
    rules = load_rules_text(text)

    def label(dispatch: Any) -> Any:
        ep = {"litmus": "episode/1", "id": "e", "context": {}, "detector": {}}
        if dispatch is not None:
            ep["episode"] = {"dispatch": dispatch}
        return rules.evaluate(ep, validate=False)

    assert label([{"decision": "refuse"}, {"decision": "execute"}]).classification == "executed"
    refused = label([{"decision": "refuse"}])
    assert refused.classification == "refused"
    assert [t.outcome for t in refused.classification_traces] == ["not matched", "matched"]
    assert label([]).classification == "no_action"
    undecided = label(None)
    assert undecided.verdict == SCORED and undecided.classification is None
    assert undecided.classification_traces[0].outcome == "undecided"


def test_rejected_episodes_are_not_classified() -> None:
    text = HEAD + 'rule r reject when true\nclassify c\n  "x" otherwise\n'
    v = load_rules_text(text).evaluate({"id": "e"}, validate=False)
    assert v.verdict == REJECTED and v.classification is None


def test_explain_full_traces_passing_rules() -> None:
    rules = load_rules_text(HEAD + "rule r reject when 1 > 2")
    v = rules.evaluate({"id": "e"}, validate=False, explain="full")
    assert v.verdict == SCORED and [t.outcome for t in v.passed] == ["passed"]
    assert rules.evaluate({"id": "e"}, validate=False).passed == ()


def test_a_ruleset_is_safe_across_threads() -> None:
    rules = load_rules_text(HEAD + 'rule r reject when any c in canaries: c.value in extra.t because "{c.value}"')
    episodes = [
        {"id": f"e{i}", "canaries": [{"value": f"tok{i}"}], "extra": {"t": f"xx tok{i}" if i % 2 else "clean"}}
        for i in range(200)
    ]
    expected = [rules.evaluate(e, validate=False).to_json() for e in episodes]
    results: list[list[dict[str, Any]]] = []

    def worker() -> None:
        results.append([rules.evaluate(e, validate=False).to_json() for e in episodes])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results)
