"""Limits of rule files and of evaluation: each at the limit and one step past it, never a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from litmus_rules import load_rules_text
from litmus_rules.domain.builtins import REGISTRY
from litmus_rules.lang.checker import MAX_EVAL_DEPTH
from litmus_rules.errors import FactsError, RuleCheckError
from litmus_rules.render.text import render_verdict
from litmus_rules.lang.syntax import MAX_NESTING, MAX_RULE_FILE_BYTES
from litmus_rules.lang import values
from litmus_rules.lang.records import replace

HEAD = 'ruleset limits version "1"\n'
EPISODE = {"litmus": "episode/1", "id": "e", "context": {}, "detector": {"channel": "dispatch"}}


def let_chain(n: int) -> str:
    """`n` chained lets, and a rule that compares the last: evaluation depth n + 2."""
    lets = "let a0 = 1\n" + "".join(f"let a{i} = a{i - 1}\n" for i in range(1, n))
    return HEAD + lets + f'rule r "deep" reject when a{n - 1} == 1 because "deep {{a{n - 1}}}"\n'


def test_a_let_chain_at_the_depth_limit_loads_and_rejects_with_a_full_trace() -> None:
    rules = load_rules_text(let_chain(MAX_EVAL_DEPTH - 2), "deep.litmus")
    verdict = rules.evaluate(EPISODE, validate=False, explain="full")
    assert verdict.verdict == "REJECTED"
    assert verdict.reasons[0].kind == "violation"
    verdict.to_json()  # the trace tree walks the whole chain
    assert "deep 1" in render_verdict(verdict)


@pytest.mark.parametrize("n", [MAX_EVAL_DEPTH - 1, 500, 3000])
def test_a_let_chain_past_the_limit_is_a_located_load_error(n: int) -> None:
    with pytest.raises(RuleCheckError) as info:
        load_rules_text(let_chain(n), "deep.litmus")
    codes = [d.code for d in info.value.diagnostics]
    assert codes == ["L216"]
    rendered = info.value.render()
    assert "deep.litmus:" in rendered and "^" in rendered and f"limit is {MAX_EVAL_DEPTH}" in rendered


def test_depth_counts_the_expression_around_a_let() -> None:
    # a let chain within the limit, used inside a rule condition that takes it one level past
    n = MAX_EVAL_DEPTH - 2
    lets = "let a0 = 1\n" + "".join(f"let a{i} = a{i - 1}\n" for i in range(1, n))
    ok = HEAD + lets + f"rule r reject when a{n - 1} == 1\n"
    load_rules_text(ok)
    with pytest.raises(RuleCheckError) as info:
        load_rules_text(HEAD + lets + f"rule r reject when not (a{n - 1} == 1)\n")
    assert [d.code for d in info.value.diagnostics] == ["L216"]
    assert "rule `r`" in info.value.diagnostics[0].message


def doubling(n: int) -> str:
    lets = "let a0 = [1, 2]\n" + "".join(f"let a{i} = a{i - 1} + a{i - 1}\n" for i in range(1, n))
    return HEAD + lets + f"rule r reject when len(a{n - 1}) == 0\n"


def test_a_list_at_the_size_limit_is_built_and_one_past_is_an_explained_reject(monkeypatch: Any) -> None:
    monkeypatch.setattr(values, "MAX_LIST_ITEMS", 64)
    assert load_rules_text(doubling(6)).evaluate(EPISODE, validate=False).verdict == "SCORED"  # 64 items
    verdict = load_rules_text(doubling(7)).evaluate(EPISODE, validate=False)  # 128 items
    (reason,) = verdict.reasons
    assert reason.kind == "evaluation_error"
    assert "value size limit [L602]" in reason.message and "128 items" in reason.message and "64" in reason.message


def test_a_string_past_the_size_limit_is_an_explained_reject(monkeypatch: Any) -> None:
    monkeypatch.setattr(values, "MAX_TEXT_CHARS", 8)
    ok = load_rules_text(HEAD + 'rule r reject when "abcd" + "efgh" == ""')
    assert ok.evaluate(EPISODE, validate=False).verdict == "SCORED"
    past = load_rules_text(HEAD + 'rule r reject when "abcd" + "efghi" == ""').evaluate(EPISODE, validate=False)
    assert past.reasons[0].kind == "evaluation_error" and "9 characters" in past.reasons[0].message


def test_doubling_a_list_with_the_default_limits_never_runs_out_of_memory() -> None:
    verdict = load_rules_text(doubling(40)).evaluate(EPISODE, validate=False)
    (reason,) = verdict.reasons
    assert reason.kind == "evaluation_error"
    assert f"the limit is {values.MAX_LIST_ITEMS}" in reason.message


def test_the_cost_budget_at_and_past_the_limit() -> None:
    rule = HEAD + "rule r reject when any x in extra.xs: x == 99"
    facts = {**EPISODE, "extra": {"xs": list(range(10))}}
    assert load_rules_text(rule, budget=11).evaluate(facts, validate=False).verdict == "SCORED"  # len + 1
    past = load_rules_text(rule, budget=10).evaluate(facts, validate=False)
    assert past.reasons[0].kind == "evaluation_error" and "budget" in past.reasons[0].message


def test_rules_after_the_one_that_used_up_the_budget_say_where_it_went() -> None:
    rules = HEAD + """
rule cheap_first reject when len(extra.xs) > 100
rule costly reject when any x in extra.xs: x == 99
rule cheap_after reject when len(extra.xs) > 100
"""
    facts = {**EPISODE, "extra": {"xs": list(range(10))}}
    assert load_rules_text(rules, budget=13).evaluate(facts, validate=False).verdict == "SCORED"
    plain = ("could not evaluate: evaluation budget exceeded: the rules did more work than allowed on "
             "this episode")
    last = load_rules_text(rules, budget=12).evaluate(facts, validate=False)  # the last rule runs it out
    assert [(r.rule, r.message) for r in last.reasons] == [("cheap_after", plain)]
    past = load_rules_text(rules, budget=11).evaluate(facts, validate=False)
    messages = {r.rule: r.message for r in past.reasons}
    assert set(messages) == {"costly", "cheap_after"}
    assert messages["costly"] == plain
    assert messages["cheap_after"].endswith("(it ran out in rule `costly`, before this rule)")


def test_expression_nesting_at_and_past_the_parser_limit() -> None:
    def nested(n: int) -> str:
        return HEAD + "rule r reject when " + "not " * n + "true"

    depth = 1
    while depth <= MAX_NESTING:  # the deepest condition that parses (the header and rule count too)
        try:
            load_rules_text(nested(depth + 1))
        except Exception as exc:
            assert type(exc).__name__ == "LitmusSyntaxError" and f"more than {MAX_NESTING}" in str(exc)
            break
        depth += 1
    assert depth < MAX_NESTING
    verdict = load_rules_text(nested(depth)).evaluate(EPISODE, validate=False)
    assert verdict.verdict == ("REJECTED" if depth % 2 == 0 else "SCORED")


def test_rule_file_size_at_and_past_the_limit() -> None:
    text = HEAD + "rule r reject when false\n"
    padded = text + "#" * (MAX_RULE_FILE_BYTES - len(text))
    load_rules_text(padded)
    with pytest.raises(Exception) as info:
        load_rules_text(padded + "#")
    assert type(info.value).__name__ == "LitmusSyntaxError" and "the limit is" in str(info.value)


# ---- one failure boundary per evaluation ---------------------------------------------------------------


@pytest.mark.parametrize("episode", [None, [], "text", 3, 1.5, True, ["id"]])
def test_a_non_mapping_episode_with_validation_off_raises_the_librarys_error(episode: Any) -> None:
    rules = load_rules_text(HEAD + "rule r reject when extra.x == 1")
    with pytest.raises(FactsError) as info:
        rules.evaluate(episode, validate=False)
    assert info.value.code == "L304"
    assert rules.evaluate(episode, validate=True).verdict == "ERROR"  # with validation on: a verdict


def test_an_internal_fault_in_one_rule_rejects_that_rule_with_a_code(monkeypatch: Any) -> None:
    def broken(value: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setitem(REGISTRY, "lower", replace(REGISTRY["lower"], impl=broken))
    rules = load_rules_text(HEAD + 'rule a reject when lower("X") == "x"\nrule b reject when extra.y == 1')
    verdict = rules.evaluate({**EPISODE, "extra": {"y": 1}}, validate=False)
    kinds = {r.rule: (r.kind, r.message) for r in verdict.reasons}
    assert kinds["a"][0] == "evaluation_error" and "[L601]" in kinds["a"][1] and "KeyError" not in kinds["a"][1]
    assert kinds["b"][0] == "violation"  # the other rules still ran


def test_a_library_error_inside_a_builtin_shows_its_message_not_its_class(monkeypatch: Any) -> None:
    from litmus_rules.errors import EvaluationError

    def broken(value: Any) -> Any:
        raise EvaluationError("a signal must be a mapping")

    monkeypatch.setitem(REGISTRY, "lower", replace(REGISTRY["lower"], impl=broken))
    verdict = load_rules_text(HEAD + 'rule a reject when lower("X") == "x"').evaluate(EPISODE, validate=False)
    message = verdict.reasons[0].message
    assert "a signal must be a mapping" in message and "EvaluationError" not in message


def test_a_fault_outside_every_rule_is_an_error_verdict(monkeypatch: Any) -> None:
    rules = load_rules_text(HEAD + "rule r reject when extra.x == 1")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(rules, "_classify", broken)
    monkeypatch.setattr(rules, "_classifiers", [(None, [], None)])
    verdict = rules.evaluate({**EPISODE, "extra": {"x": 2}}, validate=False)
    assert verdict.verdict == "ERROR"
    assert verdict.reasons[0].kind == "evaluation_error" and "[L601]" in verdict.reasons[0].message
