"""The hostile corpus, part two: hostile rule files (`tests/hostile/rules/`, as the manifest says
each must end), inputs that are not files (FIFOs, /dev/zero) run as real processes that must not
hang, and the cases that still slip through, as strict xfails naming the bug."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from _helpers import ROOT, base_episode
from litmus_rules.cli import main
from litmus_rules.lang.syntax import MAX_RULE_FILE_BYTES

HOSTILE = Path(__file__).resolve().parent / "hostile"
MANIFEST = yaml.safe_load((HOSTILE / "manifest.yaml").read_text(encoding="utf-8"))
CLI = [sys.executable, "-m", "litmus_rules"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def good(ident: str) -> dict[str, Any]:
    ep = base_episode()
    ep["id"] = ident
    ep["canaries"] = [{"value": f"lc-{ident}-5d4c"}]
    return ep


@pytest.fixture
def episode_file(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(good("rules-target")))
    return path


# ---- hostile rule files ----------------------------------------------------------------------------


def test_every_rule_file_of_the_corpus_has_a_manifest_entry() -> None:
    assert {p.name for p in (HOSTILE / "rules").iterdir()} == {e["file"] for e in MANIFEST["rules"]}


@pytest.mark.parametrize("entry", MANIFEST["rules"], ids=[e["file"] for e in MANIFEST["rules"]])
def test_a_hostile_rule_file_is_a_located_load_error_or_an_explained_reject(
    entry: dict[str, Any], episode_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = HOSTILE / "rules" / entry["file"]
    code = main(["check", "--rules", str(path), str(episode_file), "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if entry.get("load_error"):
        assert code == 2 and out == ""
        assert f"{entry['file']}:{entry['line']}:" in err  # file:line:column
        assert "^" in err  # the source line with a caret
        if "code" in entry:
            assert f"[{entry['code']}]" in err
        if "message" in entry:
            assert entry["message"] in err
    else:
        assert code == 1, err
        (row,) = [json.loads(line) for line in out.splitlines()]
        assert row["verdict"] == entry["verdict"]
        (reason,) = row["reasons"]
        assert reason["kind"] == entry["kind"] and entry["message"] in reason["message"]


def test_a_rule_file_past_the_size_limit_is_refused_with_its_name(
    tmp_path: Path, episode_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.litmus"
    rule = 'ruleset huge version "1"\nrule r\n  reject when false\n'
    huge.write_text(rule + ("# padding " * 100 + "\n") * (MAX_RULE_FILE_BYTES // 1000 + 1))
    assert main(["check", "--rules", str(huge), str(episode_file)]) == 2
    err = capsys.readouterr().err
    assert "huge.litmus" in err and "limit" in err and "Traceback" not in err


def test_a_fifo_named_like_a_rule_file_does_not_hang_check(tmp_path: Path, episode_file: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.litmus").write_text('ruleset t version "1"\nrule r\n  reject when false\n')
    os.mkfifo(rules / "b.litmus")
    proc = subprocess.run([*CLI, "check", "--rules", str(rules), str(episode_file)],
                          capture_output=True, text=True, timeout=60, env=ENV)
    assert proc.returncode == 2
    assert "b.litmus" in proc.stderr and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


# ---- inputs that are not files -----------------------------------------------------------------


def test_fifos_and_dev_zero_in_an_input_folder_are_errors_without_hanging(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a_good.jsonl").write_text(json.dumps(good("fifo-neighbour")) + "\n")
    os.mkfifo(folder / "b_fifo.yaml")  # opening it for reading would wait for a writer for ever
    os.mkfifo(folder / "c_fifo.jsonl")
    (folder / "d_zero.jsonl").symlink_to("/dev/zero")  # reading it would never end
    proc = subprocess.run([*CLI, "check", str(folder), str(folder / "c_fifo.jsonl"), "--format", "jsonl",
                           "--jobs", "2"], capture_output=True, timeout=60, env=ENV)
    assert proc.returncode == 2, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    got = [(Path(r["source"]).name, r["verdict"], r["reasons"][0].get("code") if r["reasons"] else None) for r in rows]
    assert got == [
        ("a_good.jsonl:1", "SCORED", None),
        ("b_fifo.yaml", "ERROR", "L306"),
        ("c_fifo.jsonl", "ERROR", "L306"),
        ("d_zero.jsonl", "ERROR", "L306"),
        ("c_fifo.jsonl", "ERROR", "L306"),  # named on the command line as well
    ]


# ---- what once slipped through ----------------------------------------------------------------------


def test_a_syntax_error_in_a_rule_file_prints_its_code(episode_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--rules", str(HOSTILE / "rules" / "yaml_junk.litmus"), str(episode_file)]) == 2
    assert "[L1" in capsys.readouterr().err


def test_an_id_first_used_by_a_schema_invalid_document_is_still_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ids.jsonl"
    first = {**good("dup-after-invalid"), "typo": 1}  # schema-invalid, its id readable
    second = {**good("dup-after-invalid"), "canaries": [{"value": "lc-second-7a6b"}]}
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    assert main(["check", str(path), "--format", "jsonl"]) == 2
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["verdict"]) for r in rows] == [("dup-after-invalid", "ERROR")] * 2
    assert rows[1]["reasons"][0]["code"] == "L308" and f"{path}:1" in rows[1]["reasons"][0]["message"]


def test_a_root_object_default_that_fills_the_expected_argument_rejects() -> None:
    import litmus_rules

    ep = good("root-default")
    ep["context"]["tools"][0]["input_schema"]["default"] = {"iban": "XX99"}
    verdict = litmus_rules.load_rules().evaluate(ep)
    assert "tool_call_argument_fillable" in {r.rule for r in verdict.reasons}, verdict.reasons
