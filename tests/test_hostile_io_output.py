"""Output that is always valid UTF-8 JSON, write failures that say so in one line (exit 2, no file
left behind), a reader that goes away early, and signals that stop the workers and clean up."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import EXAMPLES, base_episode
from litmus_rules.render import json as render
from litmus_rules.cli import main

EXAMPLE = str(EXAMPLES / "clean-structured.yaml")
CLI = [sys.executable, "-m", "litmus_rules"]


# ---- JSON that is always valid -------------------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=()))  # lone surrogates included
json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,  # NaN and infinities included
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"bare {name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def same(written: Any, value: Any) -> bool:
    """Equal, with a non-finite float written as its name."""
    if isinstance(value, float) and not math.isfinite(value):
        return written == ("NaN" if value != value else "Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return isinstance(written, dict) and written.keys() == value.keys() and all(
            same(written[k], v) for k, v in value.items())
    if isinstance(value, list):
        return isinstance(written, list) and len(written) == len(value) and all(map(same, written, value))
    return bool(written == value)


@settings(max_examples=150, deadline=None)
@given(json_like)
def test_rendered_json_is_utf8_and_means_the_same(value: Any) -> None:
    verdict = {"verdict": "SCORED", "v": value}
    for text in (render.json_line(verdict), render.render_json([verdict])):
        decoded = strict(text.encode("utf-8").decode("utf-8"))  # encodes: no lone surrogate left raw
        assert same(decoded["v"] if "v" in decoded else decoded["verdicts"][0]["v"], value)


def test_a_surrogate_id_and_nan_values_reach_the_output_intact(tmp_path: Path) -> None:
    ep = base_episode()
    ep["detector"]["signals"][0]["arguments"] = {"iban": float("nan"), "amount": float("inf")}
    ep["episode"]["dispatch"][0]["arguments"] = {"iban": float("nan"), "amount": float("-inf")}
    text = json.dumps(ep).replace('"base-001"', '"x-\\ud800"')
    (tmp_path / "e.jsonl").write_text(text + "\n")
    for fmt in ("jsonl", "json", "text"):
        out = tmp_path / f"out.{fmt}"
        assert main(["check", str(tmp_path / "e.jsonl"), "--format", fmt, "--explain", "full", "-o", str(out)]) == 0
        decoded = out.read_bytes().decode("utf-8")  # strict: valid UTF-8
        if fmt == "text":
            assert "SCORED x-\\ud800" in decoded
            continue
        doc = strict(decoded)
        verdict = doc if fmt == "jsonl" else doc["verdicts"][0]
        assert verdict["id"] == "x-\ud800" and '"NaN"' in decoded and '"-Infinity"' in decoded


# ---- write failures ------------------------------------------------------------------------------------


def message(err: str) -> str:
    """stderr without the line naming the ruleset used (every command prints it first)."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("ruleset "))


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".litmus-"))


@pytest.mark.parametrize("target, says", [
    ("/dev/full", "No space left on device"),
    ("{tmp}/missing/out.jsonl", "No such file or directory"),
    ("{tmp}", "it is a folder"),
    ("{tmp}/file.txt/out.jsonl", "Not a directory"),  # under a regular file: fails even as root
])
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    target: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file.txt").write_text("keep me")
    target = target.format(tmp=tmp_path)
    code = main(["check", EXAMPLE, "--format", "jsonl", "-o", target])
    out, err = capsys.readouterr()
    err = message(err)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("litmus-rules: cannot write") and says in err
    assert hidden(tmp_path) == [] and (tmp_path / "file.txt").read_text() == "keep me"


def test_a_failed_rename_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_rename(src: str, dst: str) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(os, "replace", no_rename)
    code = main(["check", EXAMPLE, "-o", str(tmp_path / "out.txt")])
    assert code == 2 and "Invalid cross-device link" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_fifo_is_written_in_place_not_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # (as /dev/null is: an atomic rename over it would put a regular file in its place)
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert main(["check", EXAMPLE, "--format", "jsonl", "-o", str(fifo)]) == 0
    reader.join(30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and json.loads(got[0])["verdict"] == "SCORED"
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_a_stdout_that_cannot_be_written_is_one_line_and_exit_2(
    stdout: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    full = open("/dev/full", "w")
    try:
        monkeypatch.setattr("sys.stdout", None if stdout == "closed" else full)  # closed: Python's None
        code = main(["check", EXAMPLE, "--format", "jsonl"])
        err = message(capsys.readouterr().err)
    finally:  # this file object still holds what the CLI failed to flush: its own close fails too
        with contextlib.suppress(OSError):
            full.close()
    assert code == 2 and err.count("\n") == 1 and "cannot write to standard output" in err, err


def many(path: Path, n: int, rejected_every: int = 0) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            ep = base_episode()
            ep["id"], ep["canaries"] = f"e{i:05d}", [{"value": f"lc-{i:08d}-many"}]
            if rejected_every and i % rejected_every == 0:
                ep["controls"]["refusal"]["label"] = "unsafe"
            fh.write(json.dumps(ep) + "\n")
    return path


def test_a_reader_that_stops_early_never_gets_exit_0_for_a_batch_not_checked(tmp_path: Path) -> None:
    batch = many(tmp_path / "b.jsonl", 200)  # every one SCORED: exit 0 would claim the unchecked ones too
    proc = subprocess.Popen([*CLI, "check", str(batch), "--format", "jsonl"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    code, err = proc.wait(60), proc.stderr.read().decode()
    assert "Traceback" not in err and "broken pipe" in err and code == 2


# ---- signals -----------------------------------------------------------------------------------------


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry))
    return members


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_workers_and_removes_temporary_files(signum: int, code: int, tmp_path: Path) -> None:
    batch = many(tmp_path / "b.jsonl", 2500)
    spool = tmp_path / "tmp"
    spool.mkdir()
    env = {**os.environ, "TMPDIR": str(spool)}
    with batch.open("rb") as stdin:
        proc = subprocess.Popen([*CLI, "check", "-", "--jobs", "2", "--format", "jsonl", "-o", str(tmp_path / "o.jsonl")],
                                stdin=stdin, stderr=subprocess.PIPE, env=env, start_new_session=True)
    assert proc.stderr is not None
    for _ in range(600):  # until the workers run and the output's temporary file exists
        if len(group_members(proc.pid)) >= 3 and hidden(tmp_path):
            break
        time.sleep(0.05)
    assert len(group_members(proc.pid)) >= 3 and hidden(tmp_path), "the run did not get going"
    proc.send_signal(signum)
    assert proc.wait(60) == code
    err = message(proc.stderr.read().decode())
    assert err.count("\n") == 1 and err.startswith("litmus-rules: ") and "Traceback" not in err
    for _ in range(100):
        if not group_members(proc.pid):
            break
        time.sleep(0.05)
    assert group_members(proc.pid) == []  # no worker outlives the run
    assert list(spool.iterdir()) == [] and hidden(tmp_path) == [] and not (tmp_path / "o.jsonl").exists()


def test_line_separators_inside_a_value_stay_on_the_verdict_line() -> None:
    """U+2028, U+2029 and U+0085 are valid inside JSON strings, but str.splitlines() (and many
    JSONL readers) break on them: they are written escaped, so one verdict is one line."""
    from litmus_rules.render.json import json_line

    value = {"id": "a\u2028b\u2029c\x85d"}
    line = json_line(value)
    assert len(line.splitlines()) == 1 and json.loads(line) == value
