"""The compliance suite: expressions, facts and expected outcomes as data (tests/compliance/*.yaml),
run against every evaluation path: the reference evaluator, the fast path, the recording path (alone
and after a fast run, as verdicts run it) and the verdict itself.

A case: `expr` (a condition), `facts` (the episode), `kind` (`true`, `false`,
`insufficient_evidence` or `evaluation_error`), `missing` (the fact paths an unknown names, in
order), `error` (part of an evaluation error's message), and optionally `lets`, `params` (their
declarations) and `set` (param overrides).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from litmus_rules import load_rules_text
from reference_gen import fast, recording, reference

HERE = Path(__file__).resolve().parent / "compliance"
KINDS = ("true", "false", "insufficient_evidence", "evaluation_error")


def _cases() -> list[Any]:
    out = []
    for file in sorted(HERE.glob("*.yaml")):
        for case in yaml.safe_load(file.read_text(encoding="utf-8")):
            out.append(pytest.param(case, id=f"{file.stem}:{case['name']}"))
    return out


CASES = _cases()


def test_the_suite_is_large_and_well_formed() -> None:
    assert len(CASES) >= 60
    names = [c.values[0]["name"] for c in CASES]
    assert len(names) == len(set(names))
    for c in CASES:
        case = c.values[0]
        assert case["kind"] in KINDS, case["name"]
        assert ("error" in case) == (case["kind"] == "evaluation_error"), case["name"]
        assert "missing" not in case or case["kind"] == "insufficient_evidence", case["name"]


@pytest.mark.parametrize("case", CASES)
def test_case(case: dict[str, Any]) -> None:
    text = 'ruleset compliance version "1"\n'
    text += "".join(line + "\n" for line in case.get("params", []) + case.get("lets", []))
    text += f"rule r reject when {case['expr']}\n"
    rules = load_rules_text(text, "case.litmus", case.get("set"))
    facts = {"id": "case", **case["facts"]}
    ref = reference(rules, facts)
    got, env = fast(rules, facts)
    outcomes = {
        "reference": ref,
        "fast": got,
        "recording": recording(rules, facts),
        "recording after fast": recording(rules, facts, hint=env),
    }
    for path, outcome in outcomes.items():
        assert outcome.kind == case["kind"], (path, outcome)
        if case["kind"] == "evaluation_error":
            assert case["error"] in (outcome.error or ""), (path, outcome.error)
        if case["kind"] == "insufficient_evidence" and path != "fast":  # the fast path names nothing
            assert list(outcome.missing) == case.get("missing", []), (path, outcome.missing)
    verdict = rules.evaluate(facts, validate=False)
    if case["kind"] == "false":
        assert verdict.verdict == "SCORED"
        return
    (reason,) = verdict.reasons
    assert reason.kind == {"true": "violation"}.get(case["kind"], case["kind"])
    assert list(reason.missing) == case.get("missing", [])
    if case["kind"] == "evaluation_error":
        assert case["error"] in reason.message
