"""`check --no-traces`: the same verdicts without their traces, and the same report from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from litmus_rules import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def without_traces(v: dict[str, Any]) -> dict[str, Any]:
    out = {k: x for k, x in v.items() if k not in ("classification_trace", "passed")}
    out["reasons"] = [{k: x for k, x in r.items() if k != "trace"} for r in v["reasons"]]
    return out


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_verdicts_are_the_traced_ones_without_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traced, bare = tmp_path / "traced.jsonl", tmp_path / "bare.jsonl"
    assert cli.main(["check", str(EXAMPLES), "--format", "jsonl", "-o", str(traced)]) == 1
    assert cli.main(["check", str(EXAMPLES), "--format", "jsonl", "--no-traces", "-o", str(bare)]) == 1
    full, light = lines(traced), lines(bare)
    assert any("trace" in r for v in full for r in v["reasons"])
    assert not any("trace" in r for v in light for r in v["reasons"])
    assert [without_traces(v) for v in full] == light


def test_the_report_reads_the_same_numbers_from_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # the report's time
    traced, bare = tmp_path / "traced.jsonl", tmp_path / "bare.jsonl"
    cli.main(["check", str(EXAMPLES), "--format", "jsonl", "-o", str(traced)])
    cli.main(["check", str(EXAMPLES), "--format", "jsonl", "--no-traces", "-o", str(bare)])
    reports = []
    for src in (traced, bare):
        out = tmp_path / (src.stem + ".report.json")
        assert cli.main(["report", str(src), "--format", "json", "-o", str(out)]) == 0
        report = json.loads(out.read_text(encoding="utf-8"))
        report["provenance"].pop("inputs")  # the input files' names and hashes differ, by design
        reports.append(report)
    assert reports[0] == reports[1]
