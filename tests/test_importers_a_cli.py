"""`litmus-rules import` and `litmus-rules check --from`: output, located problems, exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers_a_fixtures import inspect_log, openai_chat_exchange, write_eval_log, write_json_log
from litmus_rules.cli import main

LINKED = ["--option", "null_control=kind=control", "--option", "link=group", "--option", "injected_key=surface"]


def detector_file(tmp_path: Path, text: str = "channel: dispatch\npositive_labels: [C]\n") -> str:
    path = tmp_path / "detector.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_import_writes_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_eval_log(tmp_path / "run.eval")
    assert main(["import", "inspect", str(log), "--option", "scorer=includes", "--run", "attack=owl"]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 3 and err == ""
    assert all(e["run"]["attack"] == "owl" and e["extra"]["import"]["format"] == "inspect" for e in lines)


def test_import_to_a_file_and_problems_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_json_log(tmp_path / "run.json")
    out = tmp_path / "out.jsonl"
    code = main(["import", "inspect", str(log), "-o", str(out)])  # the custom scorer's channel is not recorded
    _, err = capsys.readouterr()
    assert code == 1
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3  # the includes episodes
    problems = [line for line in err.splitlines() if "error[" in line]
    assert len(problems) == 3 and problems[0].startswith(f"{log}:samples[1]: error[L312]: `detector.channel` is not recorded")
    assert "3 record(s) could not be imported" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["import", "nope", "x"], "unknown import format `nope`"),
    (["import", "inspect", "x", "--option", "colour=red"], "no option `colour`"),
    (["import", "inspect", "x", "--option", "novalue"], "--option takes KEY=VALUE"),
    (["import", "inspect", "x", "--run", "=x"], "--run takes KEY=VALUE"),
    (["import", "mcp", "x"], "records no detector"),
    (["import", "inspect", "-"], "not standard input"),
    (["check", "x.yaml", "--option", "a=b"], "add --from FORMAT"),
])
def test_misuse_exits_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_output_over_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_json_log(tmp_path / "run.json")
    before = log.read_bytes()
    assert main(["import", "inspect", str(log), "-o", str(log)]) == 2
    assert log.read_bytes() == before and "one of the inputs" in capsys.readouterr().err


def test_check_from_names_the_original_locations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = inspect_log()
    log["samples"].insert(1, {"id": "broken", "epoch": 1, "messages": "not a list"})
    path = write_eval_log(tmp_path / "run.eval", log)
    import zipfile

    with zipfile.ZipFile(path, "a") as z:  # a member that is no JSON, between two good ones
        z.writestr("samples/bad_epoch_1.json", "{oops")
    code = main(["check", "--from", "inspect", str(path), "--format", "jsonl", "--detector", detector_file(tmp_path),
                 *LINKED, "--option", "scorer=includes"])
    verdicts = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 2  # an ERROR verdict for the unreadable member
    assert [(v["source"].removeprefix(f"{path}:"), v["verdict"]) for v in verdicts] == [
        ("samples/quote_epoch_1.json", "REJECTED"), ("samples/comply_epoch_1.json", "REJECTED"),
        ("samples/clean_epoch_1.json", "REJECTED"),
        ("samples/bad_epoch_1.json", "ERROR"), ("samples/broken_epoch_1.json", "ERROR")]  # input order
    assert [v["reasons"][0]["code"] for v in verdicts[3:]] == ["L310", "L310"]
    assert "not valid JSON" in verdicts[3]["reasons"][0]["message"]
    assert "`messages` is not a list" in verdicts[4]["reasons"][0]["message"]
    assert all("imported.jsonl" not in json.dumps(v) for v in verdicts)
    quote = verdicts[0]
    assert quote["verdict"] == "REJECTED" and "injector_detector_disjoint" in [r["rule"] for r in quote["reasons"]]


def test_check_from_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(openai_chat_exchange()), encoding="utf-8")
    code = main(["check", "--from", "openai", str(path), "--detector", detector_file(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "openai:chatcmpl-owl1" in out and f"({path}:/)" in out
