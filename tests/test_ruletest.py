"""`litmus-rules test`: YAML rule tests, their failure reports and coverage; and the shipped rules'
own tests, which must pass and exercise every rule and cell both ways."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from litmus_rules._resources import default_rules_dir
from litmus_rules.cli import main
from litmus_rules.authoring.ruletest import run_tests

RULES = """\
ruleset t.demo version "1"

param limit = 1

rule too_many_signals
  "More signals than the limit."
  cite "T1"
  reject when len(detector.signals) > limit
  because "{len(detector.signals)} signals"

rule needs_dispatch
  "The scorer must read dispatch records."
  cite "T2"
  reject unless detector.channel == "dispatch"
  because "channel {detector.channel!r}"

classify decision
  "How the agent decided."
  "executed" when any d in episode.dispatch: d.decision == "execute"
  "none" otherwise
"""

BASE = {
    "litmus": "episode/1",
    "id": "demo",
    "context": {"system_prompt": "hi"},
    "detector": {"channel": "dispatch", "decision_field": "decision", "signals": []},
    "episode": {"dispatch": [{"tool": "t", "arguments": {}, "decision": "refuse"}]},
}


def make(tmp_path: Path, tests: str, rules: str = RULES, name: str = "demo.yaml") -> Path:
    (tmp_path / "rules" / "tests" / "bases").mkdir(parents=True, exist_ok=True)
    (tmp_path / "rules" / "demo.litmus").write_text(rules, encoding="utf-8")
    (tmp_path / "rules" / "tests" / "bases" / "base.yaml").write_text(json.dumps(BASE), encoding="utf-8")
    (tmp_path / "rules" / "tests" / name).write_text(textwrap.dedent(tests), encoding="utf-8")
    return tmp_path / "rules"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["test", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- the shipped rules ---------------------------------------------------------------------------


def test_the_shipped_rule_tests_pass_and_cover_every_rule_and_cell_both_ways() -> None:
    started = time.monotonic()
    run = run_tests([default_rules_dir()], coverage=True)
    elapsed = time.monotonic() - started
    assert run.errors == []
    failures = [(r.case.name, [p.actual for p in r.problems]) for r in run.results if not r.passed]
    assert failures == []
    assert run.passed >= 40
    (cov,) = run.coverage.values()
    rules = {i.name for i in cov.items if i.kind == "rule"}
    assert rules == set(__import__("litmus_rules").load_rules().rule_names)
    # Unknown only when `surfaces` is, which needs a `context` that is not an object: the episode
    # schema makes that input an ERROR before any rule runs, so no rule test can reach it.
    unreachable_unknown = {"rubric_not_in_injection"}
    for item in cov.items:
        if item.kind in ("rule", "let"):
            missing = [d for d in item.missing() if not (d == "unknown" and item.name in unreachable_unknown)]
            assert missing == [], item  # every direction, unknown included where reachable
        else:
            assert not {"true", "false"} & set(item.missing()), item
    assert elapsed < 15


def test_every_violation_case_is_rejected_by_one_rule_only() -> None:
    run = run_tests([default_rules_dir()])
    single = [r for r in run.results if r.verdict and r.verdict.verdict == "REJECTED" and len(r.verdict.reasons) == 1]
    assert {r.verdict.reasons[0].rule for r in single if r.verdict} == set(
        __import__("litmus_rules").load_rules().rule_names
    )


# ---- running and reporting -----------------------------------------------------------------------


def test_a_failing_case_shows_the_line_expected_and_actual_and_the_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    make(tmp_path, """\
        base: base
        cases:
          - name: passes
            expect: {verdict: SCORED, classification: none}
          - name: wrongly expects the channel rule
            facts:
              detector: {signals: [{id: a, kind: substring, value: x}, {id: b, kind: substring, value: y}]}
            expect:
              verdict: REJECTED
              rejected_by: [needs_dispatch]
        """)
    code, out, _ = cli(capsys, "rules")
    assert code == 1
    assert "rules/tests/demo.yaml:5: FAIL wrongly expects the channel rule" in out
    assert "line 10: rejected_by: expected [needs_dispatch], got [too_many_signals]" in out
    assert "trace of `too_many_signals` (violated):" in out
    assert "rules/demo.litmus:8" in out and "len(detector.signals) > limit  = true" in out
    assert "trace of `needs_dispatch` (passed):" in out
    assert out.rstrip().endswith("1 passed, 1 failed")


def test_partial_facts_merge_over_the_base_and_unset_removes_a_fact(tmp_path: Path) -> None:
    rules = make(tmp_path, """\
        base: base
        cases:
          - name: merged mapping keeps the base's other keys
            facts: {detector: {channel: transcript}}
            expect: {rejected_by: [needs_dispatch], message: {needs_dispatch: "channel 'transcript'"}}
          - name: a list replaces the base's list
            facts: {episode: {dispatch: [{tool: t, arguments: {}, decision: execute}]}}
            expect: {verdict: SCORED, classification: executed}
          - name: unset makes the fact unknown
            unset: [detector.signals]
            expect: {rejected_by: [too_many_signals], message: insufficient evidence}
          - name: params apply per case
            params: {limit: 0}
            facts: {detector: {signals: [{id: a, kind: substring, value: x}]}}
            expect: {rejected_by: [too_many_signals]}
        """)
    run = run_tests([rules])
    assert [(r.case.name, r.problems) for r in run.results if not r.passed] == []
    assert run.passed == 4


def test_batch_mates_share_a_batch_with_the_case(tmp_path: Path) -> None:
    rules = make(tmp_path, """\
        base: base
        cases:
          - name: shared canary
            facts: {canaries: [{value: c-1}]}
            batch: [{}]  # another instance like this one: the same canary
            expect: {verdict: REJECTED, rejected_by: [canary_unique]}
        """, rules=RULES.replace("rule too_many", 'rule canary_unique "d" cite "c" reject when any c in shared_canaries: true because "{c.value}"\n\nrule too_many'))
    run = run_tests([rules])
    assert run.failed == 0 and run.passed == 1


def test_a_typo_in_an_expected_rule_name_fails_with_a_suggestion(tmp_path: Path) -> None:
    rules = make(tmp_path, """\
        base: base
        cases:
          - name: typo
            expect: {passes: [needs_dispach]}
        """)
    (result,) = run_tests([rules]).results
    assert "unknown rule `needs_dispach` (did you mean `needs_dispatch`?)" in result.problems[0].actual


@pytest.mark.parametrize(
    "tests, message",
    [
        ("cases:\n  - name: a\n    expct: {verdict: SCORED}\n", "unknown key `expct` in case `a`; did you mean `expect`?"),
        ("base: nope\ncases:\n  - name: a\n    expect: {verdict: SCORED}\n", "unknown base `nope`"),
        ("cases:\n  - name: a\n    name: b\n", "duplicate key `name`"),
        ("base: base\ncases:\n  - name: a\n    unset: [detector.nothing]\n    expect: {verdict: SCORED}\n",
         "no fact at `detector.nothing`"),
        ("cases: [\n", "not valid YAML"),
    ],
)
def test_a_broken_test_file_is_an_error_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tests: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    make(tmp_path, tests)
    code, out, _ = cli(capsys, "rules")
    assert code == 2
    assert "rules/tests/demo.yaml:" in out and message in out


def test_json_output_and_selection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = make(tmp_path, """\
        base: base
        cases:
          - name: alpha fails
            expect: {verdict: REJECTED}
          - name: beta passes
            expect: {verdict: SCORED}
        """)
    code, out, _ = cli(capsys, str(rules), "--format", "json", "-k", "alpha")
    doc = json.loads(out)
    assert code == 1 and doc["summary"] == {"passed": 0, "failed": 1, "errors": 0}
    (failure,) = doc["failures"]
    assert failure["case"] == "alpha fails" and failure["problems"][0]["expected"] == "REJECTED"
    assert cli(capsys, str(rules), "-k", "beta")[0] == 0


def test_tests_beside_the_rules_named_test_yaml_are_found(tmp_path: Path) -> None:
    (tmp_path / "demo.litmus").write_text(RULES, encoding="utf-8")
    (tmp_path / "demo_test.yaml").write_text(
        json.dumps({"bases": {"b": BASE}, "base": "b", "cases": [{"name": "ok", "expect": {"verdict": "SCORED"}}]}),
        encoding="utf-8",
    )
    run = run_tests([tmp_path])
    assert run.passed == 1 and run.results[0].case.rules == tmp_path


# ---- coverage ------------------------------------------------------------------------------------


def test_coverage_lists_a_deliberately_unexercised_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    make(tmp_path, """\
        base: base
        cases:
          - name: clean
            expect: {verdict: SCORED}
          - name: transcript
            facts: {detector: {channel: transcript}}
            expect: {rejected_by: [needs_dispatch]}
        """)
    code, out, _ = cli(capsys, "rules", "--coverage")
    assert code == 0
    assert "rules/demo.litmus:5: rule `too_many_signals` never true" in out
    assert "rules/demo.litmus:5: rule `too_many_signals` never unknown" in out  # signals may be absent
    assert "rule `needs_dispatch` never true" not in out and "rule `needs_dispatch` never false" not in out
    assert "rules/demo.litmus:19: cell `decision \"executed\"` never true" in out
    assert "coverage: " in out and "directions" in out
    assert cli(capsys, "rules", "--coverage", "--fail-under", "100")[0] == 1
    code, out, _ = cli(capsys, "rules", "--coverage", "--format", "json")
    (cov,) = json.loads(out)["coverage"]
    item = next(i for i in cov["items"] if i["name"] == "too_many_signals")
    assert item["counts"] == {"true": 0, "false": 2, "unknown": 0}
    assert item["missing"] == ["true", "unknown"]
    assert cov["ruleset"]["name"] == "t.demo"


def test_coverage_reads_reject_unless_as_the_condition_value(tmp_path: Path) -> None:
    rules = make(tmp_path, """\
        base: base
        cases:
          - name: transcript
            facts: {detector: {channel: transcript}}
            expect: {rejected_by: [needs_dispatch]}
        """)
    (cov,) = run_tests([rules], coverage=True).coverage.values()
    item = next(i for i in cov.items if i.name == "needs_dispatch")
    # rejected by `reject unless` means its condition was false
    assert item.counts == {"true": 0, "false": 1, "unknown": 0}
    assert "unknown" not in item.required  # `detector.channel` is required by the episode schema


@pytest.mark.parametrize(
    "expect, problem",
    [
        ("{rejects: [needs_dispatch]}", None),
        ("{rejects: [too_many_signals]}", "expected [too_many_signals] to reject, got rejected by [needs_dispatch]"),
        ("{passes: [too_many_signals]}", None),
        ("{passes: [needs_dispatch]}", "expected [needs_dispatch] to pass, got rejected by [needs_dispatch]"),
        ("{classifications: {decision: null}}", None),
        ("{classifications: {decison: none}}", "unknown classifier `decison` (did you mean `decision`?)"),
        ("{classification: exectued}", "unknown label `exectued` (did you mean `executed`?)"),
        ("{message: \"channel 'transcript'\"}", None),
        ("{message: {too_many_signals: x}}", "got no message: it did not reject"),
        ("{verdict: scored}", "expected SCORED, got REJECTED"),
    ],
)
def test_each_kind_of_expectation_holds_or_says_why(tmp_path: Path, expect: str, problem: str | None) -> None:
    rules = make(tmp_path, f"""\
        base: base
        cases:
          - name: transcript channel
            facts: {{detector: {{channel: transcript}}}}
            expect: {expect}
        """)
    (result,) = run_tests([rules]).results
    if problem is None:
        assert result.passed, result.problems
    else:
        (found,) = result.problems
        assert problem in f"expected {found.expected}, got {found.actual}"
