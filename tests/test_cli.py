"""The command line: verdict output, exit codes, and errors for rule authors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from litmus_rules.cli import main
from _helpers import EXAMPLES, NOTE_EXAMPLES, base_episode


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_examples_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", *NOTE_EXAMPLES)
    assert code == 1  # two of the shipped examples are contaminated
    assert "3 episode(s): 1 SCORED, 2 REJECTED, 0 ERROR" in out
    assert "REJECTED note-exfil-canary" in out and "null_control_clean" in out
    assert "rules/validity.litmus:" in out


def test_check_jsonl_is_the_contract_shape_in_input_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", *NOTE_EXAMPLES, "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == ["clean-transfer-001", "note-exfil-canary", "note-poisoned-read-file"]
    for row in rows:
        assert {"id", "verdict", "classification", "reasons", "source", "ruleset"} <= set(row)
        assert row["ruleset"]["name"] == "litmus.validity" and row["ruleset"]["hash"].startswith("sha256:")
    clean, exfil, poisoned = rows
    assert clean["verdict"] == "SCORED" and clean["classification"] == "refused" and clean["reasons"] == []
    rules = {r["rule"] for r in exfil["reasons"]}
    assert {"null_control_clean", "injector_detector_disjoint", "canary_not_derivable"} <= rules
    assert all(r["source"].startswith("rules/validity.litmus:") and r["trace"] for r in exfil["reasons"])
    assert {"counterfactual_stubs", "tool_call_argument_fillable"} <= {r["rule"] for r in poisoned["reasons"]}


def test_all_scored_exits_zero_and_output_file_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(base_episode()))
    out_file = tmp_path / "verdicts.json"
    code, out, _ = run(capsys, "check", str(path), "--format", "json", "-o", str(out_file))
    assert code == 0 and out == ""
    doc = json.loads(out_file.read_text())
    assert doc["summary"]["SCORED"] == 1 and doc["verdicts"][0]["verdict"] == "SCORED"


def test_invalid_input_is_an_error_and_the_batch_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = base_episode()
    bad = base_episode()
    bad["id"] = "bad-1"
    bad["canaries"] = [{"value": "lc-of-the-bad-one"}]  # a canary planted twice is shared, valid or not
    bad["detector"]["chanel"] = "dispatch"
    (tmp_path / "batch.jsonl").write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n")
    code, out, _ = run(capsys, "check", str(tmp_path), "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 2
    assert [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert "chanel" in rows[0]["reasons"][0]["message"] and "batch.jsonl:1" in rows[0]["source"]


def test_duplicate_ids_and_shared_canaries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, c = base_episode(), base_episode(), base_episode()
    a["id"], b["id"], c["id"] = "a", "b", "a"
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (a, b, c)))
    code, out, _ = run(capsys, "check", str(tmp_path / "x.jsonl"), "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 2
    assert [r["verdict"] for r in rows] == ["REJECTED", "REJECTED", "ERROR"]
    assert rows[0]["reasons"][0]["rule"] == "canary_unique" and "'b'" in rows[0]["reasons"][0]["message"]
    assert "duplicate id `a`" in rows[2]["reasons"][0]["message"]


def test_typo_in_rules_exits_2_with_location_and_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "r.litmus").write_text('ruleset t version "1"\nrule r reject when detector.chanel == "x"\n')
    code, out, err = run(capsys, "check", str(EXAMPLES), "--rules", str(rules))
    assert code == 2 and out == ""
    assert "rules/r.litmus:2:20: error[L202]: unknown fact path `detector.chanel`" in err
    assert "did you mean `detector.channel`?" in err


def test_syntax_error_exits_2_with_line_column_and_caret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rule_file = tmp_path / "bad.litmus"
    rule_file.write_text('ruleset t version "1"\nrule r reject when a = b\n')
    code, _, err = run(capsys, "check", str(EXAMPLES), "--rules", str(rule_file))
    assert code == 2
    lines = err.splitlines()
    assert lines[0].endswith("bad.litmus:2:22: error[L100]: `=` is not a comparison: write `==` (found `=`)")
    assert lines[2].strip() == "^"


def test_param_override_and_bad_param(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", str(EXAMPLES), "--param", "min_partial_len=abc")
    assert code == 2 and "expects a number" in err
    code, _, err = run(capsys, "check", str(EXAMPLES), "--param", "nope")
    assert code == 2 and "NAME=VALUE" in err


def test_explain_prints_one_episode(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", str(EXAMPLES), "--id", "note-poisoned-read-file")
    assert code == 1
    header, _, trace = out.partition("\n\n")  # the ruleset line, then the trace
    assert header.startswith("ruleset litmus.validity") and trace.startswith("REJECTED note-poisoned-read-file")
    assert "tool_call_argument_fillable" in out and "context.tools[0].input_schema.properties.path.default" in out
    code, _, err = run(capsys, "explain", str(EXAMPLES), "--id", "nope")
    assert code == 2 and "no episode with id `nope`" in err


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(base_episode()) + "\n"))
    code, out, _ = run(capsys, "check", "-", "--format", "jsonl")
    assert code == 0 and json.loads(out)["verdict"] == "SCORED"
