"""Inputs that must not be read as they stand: FIFOs, devices, sockets, symlink loops, bad UTF-8,
files over the size limit. Each is an ERROR in input order, and nothing hangs or fills memory."""

from __future__ import annotations

import io
import json
import os
import socket
from pathlib import Path

import pytest

from _helpers import base_episode
from litmus_rules.io import load
from litmus_rules.cli import main
from litmus_rules.io.load import LoadedEpisode, discover, iter_episodes, plan_units


def good(ident: str) -> str:
    ep = base_episode()
    ep["id"] = ident
    ep["canaries"] = [{"value": f"lc-{ident}-5e6f7a"}]
    return json.dumps(ep) + "\n"


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    code = main(["check", *argv, "--format", "jsonl"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def errors(items: list[str | LoadedEpisode]) -> list[tuple[str, str]]:
    return [(os.path.basename(i.source), i.error.code) for i in items if isinstance(i, LoadedEpisode) and i.error]


def test_fifos_devices_and_sockets_are_errors_without_being_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "fifo.yaml")  # opening it would wait for a writer for ever
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")  # reading it would never end
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.json"))
    (tmp_path / "ok.jsonl").write_text(good("ok"))
    try:
        direct = [str(tmp_path / n) for n in ("fifo.yaml", "zero.jsonl", "sock.json")]
        code, rows = check(capsys, str(tmp_path), *direct, "/dev/zero")
    finally:
        sock.close()
    assert code == 2
    assert [(r["id"], r["verdict"]) for r in rows] == [(None, "ERROR")] + [("ok", "SCORED")] + [(None, "ERROR")] * 6
    messages = [r["reasons"][0]["message"] for r in rows if r["verdict"] == "ERROR"]
    assert all(r["reasons"][0]["code"] == load.NOT_A_FILE for r in rows if r["verdict"] == "ERROR")
    assert ["a FIFO" in m for m in messages] == [True, False, False, True, False, False, False]
    assert sum("a character device" in m for m in messages) == 3 and sum("a socket" in m for m in messages) == 2


def test_a_file_replaced_by_a_fifo_after_discovery_is_not_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "late.jsonl"
    path.write_text(good("late"))
    units = plan_units([str(path)])
    path.unlink()
    os.mkfifo(path)
    (loaded,) = load.iter_unit(units[0])
    assert loaded.error is not None and loaded.error.code == load.NOT_A_FILE and "a FIFO" in loaded.error.message


def test_symlinked_folders_are_followed_and_a_loop_is_reported_once(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "deep").mkdir(parents=True)
    (real / "deep" / "r.jsonl").write_text(good("r"))
    top = tmp_path / "top"
    (top / "sub").mkdir(parents=True)
    (top / "a.jsonl").write_text(good("a"))
    (top / "linked").symlink_to(real)  # followed: its episodes are read
    (top / "sub" / "up").symlink_to(top)  # a loop back to an ancestor
    (top / "sub" / "self").symlink_to(".")  # a loop to itself
    (top / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    found = discover([str(top)])
    assert [os.path.relpath(i, top) for i in found if isinstance(i, str)] == ["a.jsonl", "linked/deep/r.jsonl"]
    assert errors(found) == [("dangling.yaml", load.UNREADABLE), ("self", load.LOOP), ("up", load.LOOP)]
    loop = next(i for i in found if isinstance(i, LoadedEpisode) and i.source.endswith("up"))
    assert loop.error is not None and str(top) in loop.error.message
    assert [e.id for e in iter_episodes([str(top)]) if e.error is None] == ["a", "r"]


def test_two_links_to_one_folder_are_not_a_loop(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "s.yaml").write_text(good("s"))
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / "x").symlink_to(tmp_path / "shared")
    (tmp_path / "top" / "y").symlink_to(tmp_path / "shared")
    assert [os.path.basename(os.path.dirname(i)) for i in discover([str(tmp_path / "top")])] == ["x", "y"]


def test_a_file_over_the_size_limit_names_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "MAX_FILE_SIZE", 1000)
    at = good("at")
    assert len(at) < 1000
    (tmp_path / "at.json").write_text(at.ljust(1000))
    (tmp_path / "over.json").write_text(at.ljust(1001))
    (tmp_path / "over.txt").write_text(json.dumps(json.loads(at), indent=1).ljust(1001))  # sniffed: JSON
    got = list(iter_episodes([str(tmp_path / n) for n in ("at.json", "over.json", "over.txt")]))
    assert got[0].id == "at" and got[0].error is None
    for loaded in got[1:]:
        assert loaded.error is not None and loaded.error.code == load.LIMIT
        assert "over the 1000 bytes limit" in loaded.error.message and "MAX_FILE_SIZE" in loaded.error.message


def test_invalid_utf8_in_a_file_is_located_by_line_and_byte(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(good("a").encode() + b'{"id": "b\xc3"}\n' + good("c").encode())
    (tmp_path / "b.yaml").write_bytes(b"litmus: episode/1\nid: \xff\xfe\n")
    (tmp_path / "c.txt").write_bytes(b"\n\nid: x\xe2\x82\n")  # sniffed: decoded by the reader
    got = list(iter_episodes([str(tmp_path / n) for n in ("a.jsonl", "b.yaml", "c.txt")]))
    assert [(g.id, g.error.code if g.error else None) for g in got] == [
        ("a", None), (None, load.UNPARSEABLE), ("c", None), (None, load.UNPARSEABLE), (None, load.UNPARSEABLE)]
    assert got[1].line == 2 and "invalid UTF-8" in got[1].error.message  # type: ignore[union-attr]
    assert got[4].line == 3 and "at byte 8" in got[4].error.message  # type: ignore[union-attr]


class BinaryStdin(io.TextIOWrapper):
    """A stdin whose bytes are not UTF-8: reading it as text would raise."""


@pytest.mark.parametrize("payload, line, where", [
    (b'{"id": "ok"}\n{"id": "\xff"}\n', 2, "at byte 9 of the line"),  # JSONL: per line
    (b"litmus: episode/1\nid: \xc3(\n", 2, "at byte 23"),  # anything else: one ERROR, by byte offset
])
def test_stdin_that_is_not_utf8_is_a_located_error(
    payload: bytes, line: int, where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", BinaryStdin(io.BytesIO(payload), encoding="utf-8"))
    code, rows = check(capsys, "-")
    assert code == 2
    bad = rows[-1]
    assert bad["verdict"] == "ERROR" and bad["source"] == f"<stdin>:{line}"
    assert bad["reasons"][0]["code"] == load.UNPARSEABLE and where in bad["reasons"][0]["message"]
