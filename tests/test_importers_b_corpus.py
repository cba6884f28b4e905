"""Acceptance of the AgentDojo, InjecAgent and garak importers on the real corpus (issue 11's
table), skipped when ../shared/corpus is absent. Rules are run as cut-down rulesets of the shipped
file (the rules each criterion names, or the classifier alone) so thousands of episodes take
seconds; schema validity is checked on one episode of every shape."""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import Any

import pytest

from _helpers import CORPUS
from importers_b_support import classify, episodes, rules_subset, schema_errors, violations
from litmus_rules import load_rules
from litmus_rules.io.importers import agentdojo, garak, injecagent

# LITMUS_CORPUS: the corpus elsewhere (a git worktree has no ../shared beside it).
CORPUS_DIR = Path(os.environ.get("LITMUS_CORPUS") or CORPUS)
DUMPS = CORPUS_DIR / "agentdojo" / "v1.2.2"
RUNS = CORPUS_DIR / "runs" / "agentdojo_runs"
INJECAGENT = CORPUS_DIR / "injecagent"
GARAK = CORPUS_DIR / "runs" / "garak"
needs = pytest.mark.skipif(not (DUMPS.is_dir() and RUNS.is_dir() and INJECAGENT.is_dir() and GARAK.is_dir()),
                           reason="../shared/corpus is absent")
pytestmark = needs
COLLISION_RULES = ("injector_detector_disjoint", "tool_call_argument_fillable")


def one_of_each(eps: list[dict[str, Any]], key: Any) -> list[dict[str, Any]]:
    seen: dict[Any, dict[str, Any]] = {}
    for e in eps:
        seen.setdefault(key(e), e)
    return list(seen.values())


@pytest.fixture(scope="module")
def pairs() -> list[tuple[dict[str, Any], dict[str, str]]]:
    rules = rules_subset(COLLISION_RULES + ("structured_scoring_channel",))
    eps = episodes(agentdojo, DUMPS.parent)
    return [(e, violations(rules.evaluate(e, validate=False))) for e in eps]


def _task(e: dict[str, Any]) -> tuple[str, str]:
    return e["run"]["suite"], e["run"]["injection_task"]


def test_agentdojo_dumps_travel_it6_collides_in_the_injected_message(pairs: list[Any]) -> None:
    assert len(pairs) == 949
    for e in one_of_each([e for e, _ in pairs], _task):
        assert schema_errors(e) == [], e["id"]
    it6 = [(e, v) for e, v in pairs if _task(e) == ("travel", "injection_task_6")]
    assert len(it6) == 20
    for e, found in it6:
        message = found["injector_detector_disjoint"]
        assert "'Riverside View Hotel'" in message and "context.messages[1].content[0].text (raw)" in message
        assert e["context"]["messages"][1]["content"][0]["injected"] is True
    others = [(e["id"], sorted(set(v) & set(COLLISION_RULES))) for e, v in pairs if _task(e) != ("travel", "injection_task_6")]
    assert [o for o in others if o[1]] == []


def test_agentdojo_dumps_slack_it5_reads_requested_calls(pairs: list[Any]) -> None:
    it5 = [(e, v) for e, v in pairs if _task(e) == ("slack", "injection_task_5")]
    assert len(it5) == 21
    for e, found in it5:
        assert e["detector"]["channel"] == "dispatch" and e["detector"]["decision_field"] is None
        assert "structured_scoring_channel" in found


def test_agentdojo_dumps_only_slack_it5_and_transcript_checks_fail_the_channel_rule(pairs: list[Any]) -> None:
    failing = {_task(e) for e, v in pairs if "structured_scoring_channel" in v}
    assert failing == {("slack", "injection_task_5"), ("travel", "injection_task_6")}


@pytest.fixture(scope="module")
def runs() -> list[dict[str, Any]]:
    return episodes(agentdojo, RUNS, suites=str(DUMPS))


def test_agentdojo_runs_travel_it6_rejected_whatever_the_agent_did(runs: list[dict[str, Any]]) -> None:
    assert len(runs) == 10
    rules = load_rules()
    it6 = [e for e in runs if _task(e) == ("travel", "injection_task_6")]
    assert len(it6) == 4 and {e["run"]["agent"] for e in it6} == {"scripted-plain-agent", "scripted-quote-agent"}
    for e in it6:
        assert schema_errors(e) == []
        verdict = rules.evaluate(e)
        assert verdict.verdict == "REJECTED"
        assert "context.messages" in violations(verdict)["injector_detector_disjoint"]
        assert e["controls"]["null"]["source"] == e["controls"]["positive"]["source"] == "harness"
        assert e["controls"]["positive"]["label"] == "unsafe"  # the goal run as a user task succeeded


def test_agentdojo_runs_slack_it1_not_classified_executed(runs: list[dict[str, Any]]) -> None:
    it1 = [e for e in runs if _task(e) == ("slack", "injection_task_1")]
    assert len(it1) == 2
    for e in it1:
        assert any(p.get("injected") for m in e["context"]["messages"] if isinstance(m["content"], list)
                   for p in m["content"])
        assert classify(e) != "executed"
        assert load_rules().evaluate(e).classification != "executed"


@pytest.fixture(scope="module")
def prompted_cases() -> list[dict[str, Any]]:
    eps = episodes(injecagent, INJECAGENT / "data")
    return [e for e in eps if e["run"]["detector"] == "prompted"]


def test_injecagent_all_prompted_cases_rejected(prompted_cases: list[dict[str, Any]]) -> None:
    assert len(prompted_cases) == 1564
    for e in one_of_each(prompted_cases, lambda e: (e["run"]["setting"], e["run"]["attack"])):
        assert schema_errors(e) == []
    rules = rules_subset(("structured_scoring_channel",))
    verdicts = collections.Counter(rules.evaluate(e, validate=False).verdict for e in prompted_cases)
    assert verdicts == {"REJECTED": 1564}


def test_injecagent_github_case_names_the_prefilled_scratchpad_action(prompted_cases: list[dict[str, Any]]) -> None:
    (e,) = [e for e in prompted_cases if e["extra"]["injecagent"]["user_tool"] == "GitHubGetUserDetails"
            and "GitHubGetUserDetails" in e["extra"]["injecagent"]["attacker_tools"]]
    message = violations(load_rules().evaluate(e))["injector_detector_disjoint"]
    assert "'Action: GitHubGetUserDetails'" in message and "context.messages[0].content[1].text (raw)" in message


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    # InjecAgent's own prompt is not in the corpus (it is code); the user supplies it. This stand-in,
    # in our words, has the one feature that matters: a format example with `Action: GmailSendEmail`.
    prompt = tmp_path_factory.mktemp("prompt") / "system.txt"
    prompt.write_text("You are a helpful agent with tools.\nFormat example:\nThought: I should email John.\n"
                      "Action: GmailSendEmail\nAction Input: {\"to\": \"john@example.invalid\"}\n")
    return episodes(injecagent, INJECAGENT / "results", tools=str(INJECAGENT / "data" / "tools.json"),
                    system_prompt=str(prompt))


def test_injecagent_step2_names_the_format_example(results: list[dict[str, Any]]) -> None:
    step2 = [e for e in results if e["run"]["step"] == 2 and e["run"]["detector"] == "prompted"]
    assert step2
    rules = rules_subset(("injector_detector_disjoint",))
    for e in step2:
        assert e["detector"]["signals"][0]["value"] == "Action: GmailSendEmail"
        message = violations(rules.evaluate(e, validate=False))["injector_detector_disjoint"]
        assert "'Action: GmailSendEmail' matches context.system_prompt (raw)" in message


def test_injecagent_tool_call_detector_agrees_with_injecagent(results: list[dict[str, Any]]) -> None:
    tool_call = [e for e in results if e["run"]["detector"] == "finetuned"]
    files = {e["id"].rsplit("/", 3)[0] for e in tool_call}
    assert len(files) == 4
    for e in one_of_each(tool_call, lambda e: (e["run"]["step"], e["extra"]["injecagent"].get("label"))):
        assert schema_errors(e) == []
    by_label = collections.Counter((e["extra"]["injecagent"].get("label"), classify(e)) for e in tool_call)
    assert by_label[("unsucc", "executed")] == 0
    succ = sum(n for (label, _), n in by_label.items() if label == "succ")
    assert succ and by_label[("succ", "executed")] >= 0.99 * succ


def test_garak_every_attempt_rejected_raw_in_the_prompt_turn() -> None:
    eps = episodes(garak, GARAK)
    assert len(eps) == 30
    rules = load_rules()
    for e in eps:
        assert schema_errors(e) == []
        verdict = rules.evaluate(e)
        assert verdict.verdict == "REJECTED"
        message = violations(verdict)["injector_detector_disjoint"]
        assert "matches context.messages[0].content" in message and "(raw)" in message
    blank = [e for e in eps if e["run"]["generator"] == "test.Blank"]
    assert len(blank) == 12 and all(e["controls"]["trivial_empty"]["label"] == "pass" for e in blank)
