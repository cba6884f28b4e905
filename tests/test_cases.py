"""Conformance cases as data: one folder per case under tests/cases/.

Each case has `rules.litmus`, optionally `facts.yaml` (evaluated without schema validation: cases
exercise the language, not the episode format) and `expect.yaml`. Golden renderings sit beside
them: `trace.txt` (text trace) and `trace.json` for evaluated cases, `errors.txt` for rules that do
not load. Regenerate goldens with `LITMUS_UPDATE_GOLDEN=1 pytest tests/test_cases.py` and review
the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from litmus_rules import LitmusSyntaxError, RuleCheckError, load_rules
from litmus_rules.render.text import render_verdict

CASES = Path(__file__).parent / "cases"
UPDATE = os.environ.get("LITMUS_UPDATE_GOLDEN") == "1"


def golden(path: Path, actual: str) -> None:
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"missing golden file {path}; run with LITMUS_UPDATE_GOLDEN=1 to create it")
        path.write_text(actual)
    assert actual == path.read_text(), f"golden mismatch: {path}"


def rel(text: str, case: Path) -> str:
    return text.replace(str(case.parent.parent) + "/", "")


@pytest.mark.parametrize("case", sorted(p for p in CASES.iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_case(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(case.parent.parent)  # rule locations read `cases/<case>/rules.litmus:N`
    expect: dict[str, Any] = yaml.safe_load((case / "expect.yaml").read_text())
    rules_path = Path("cases") / case.name / "rules.litmus"
    try:
        rules = load_rules(rules_path, budget=expect.get("budget", 20_000_000))
    except LitmusSyntaxError as exc:
        assert "syntax_error" in expect, exc.render()
        assert (exc.span.line, exc.span.column) == (expect["syntax_error"]["line"], expect["syntax_error"]["column"])
        golden(case / "errors.txt", exc.render() + "\n")
        return
    except RuleCheckError as exc:
        assert [d.code for d in exc.diagnostics] == expect["diagnostics"], exc.render()
        golden(case / "errors.txt", exc.render() + "\n")
        return
    assert "diagnostics" not in expect and "syntax_error" not in expect, "the rules were expected not to load"
    facts = yaml.safe_load((case / "facts.yaml").read_text())
    verdict = rules.evaluate(facts, validate=False)
    assert verdict.verdict == expect["verdict"]
    assert verdict.classification == expect.get("classification")
    assert len(verdict.reasons) == len(expect["reasons"])
    for reason, want in zip(verdict.reasons, expect["reasons"]):
        assert reason.rule == want["rule"] and reason.kind == want["kind"]
        if "missing" in want:
            assert list(reason.missing) == want["missing"]
        if "message" in want:
            assert reason.message == want["message"]
        if "message_contains" in want:
            assert want["message_contains"] in reason.message
    golden(case / "trace.txt", render_verdict(verdict) + "\n")
    rendered = json.dumps(verdict.to_json(), indent=1, sort_keys=True)
    golden(case / "trace.json", rendered.replace(verdict.ruleset.hash, "<hash>") + "\n")
