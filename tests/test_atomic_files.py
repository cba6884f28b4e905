"""Files (issue 14, item 7): the one atomic writer keeps an existing file's mode and gives a new
one the umask's; preflight keeps a YAML file's comments and layout when it writes controls back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.atomic import AtomicFile, copy_file, new_file_mode, write_text
from litmus_rules.preflight.writeback import guess_indent

ROOT = Path(__file__).resolve().parents[1]
COMMENTED = ROOT / "examples" / "note-case1-exfil-canary.yaml"  # comments on top, flow mappings, a block text


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".litmus-"))


@settings(max_examples=25, deadline=None)
@given(mode=st.integers(0o400, 0o777))
def test_an_existing_file_keeps_its_mode(tmp_path_factory: pytest.TempPathFactory, mode: int) -> None:
    folder = tmp_path_factory.mktemp("w")
    path = folder / "f.txt"
    path.write_text("old", encoding="utf-8")
    path.chmod(mode)
    write_text(path, "new")
    assert (path.stat().st_mode & 0o777) == mode and path.read_text(encoding="utf-8") == "new"
    assert leftovers(folder) == []


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o027, 0o002])
def test_a_new_file_gets_the_umask_s_mode(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        assert new_file_mode() == 0o666 & ~umask
        write_text(tmp_path / "new.txt", ["a", "b"])
        copy_file(tmp_path / "new.txt", tmp_path / "copy.txt")
    finally:
        os.umask(previous)
    for name in ("new.txt", "copy.txt"):
        assert ((tmp_path / name).stat().st_mode & 0o777) == 0o666 & ~umask
    assert (tmp_path / "copy.txt").read_text(encoding="utf-8") == "ab"


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with AtomicFile(path) as fh:
            fh.write("half")
            raise RuntimeError("interrupted")
    assert path.read_text(encoding="utf-8") == "old" and leftovers(tmp_path) == []


def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new" and (target.stat().st_mode & 0o777) == 0o640


def test_a_device_is_written_in_place(tmp_path: Path) -> None:
    write_text(os.devnull, "discarded")  # renaming over /dev/null would replace the device by a file
    assert Path(os.devnull).is_char_device()


def test_line_endings_are_written_as_given(tmp_path: Path) -> None:
    write_text(tmp_path / "crlf.txt", "a\r\nb\r\n", newline="")
    assert (tmp_path / "crlf.txt").read_bytes() == b"a\r\nb\r\n"


@pytest.mark.parametrize("text, expected", [
    ("a:\n  b: 1\n  c:\n  - x\n", (2, 2, 0)),
    ("a:\n    b: 1\n    c:\n        - x\n", (4, 6, 4)),
    ("a:\n  t: |\n    - not a list\n  c:\n    - x\n", (2, 4, 2)),
    ("a: 1\n", (2, 2, 0)),
])
def test_the_indentation_of_a_yaml_file_is_read_past_block_texts(text: str, expected: tuple[int, int, int]) -> None:
    assert guess_indent(text) == expected


def test_preflight_keeps_yaml_comments_and_layout(tmp_path: Path) -> None:
    source = tmp_path / "in" / COMMENTED.name
    source.parent.mkdir()
    shutil.copy(COMMENTED, source)
    with open(source, "a", encoding="utf-8") as fh:
        fh.write("extra: {note: kept}  # a trailing comment\n")
    original = source.read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, "-m", "litmus_rules", "preflight", str(source), "-o", str(tmp_path / "out")],
                         cwd=tmp_path, env=env, text=True, capture_output=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    written = (tmp_path / "out" / source.name).read_text(encoding="utf-8")
    assert source.read_text(encoding="utf-8") == original  # inputs are never modified
    comments = [line for line in original.splitlines() if "#" in line]
    assert comments and all(line in written.splitlines() for line in comments)
    # every line outside the controls is as it was, in the same order
    def outside(text: str) -> list[str]:
        lines, keep, inside = text.splitlines(), [], False
        for line in lines:
            if line and not line[0].isspace():
                inside = line.startswith("controls:")
            if not inside:
                keep.append(line)
        return keep

    assert outside(written) == outside(original)
    before, after = yaml.safe_load(original), yaml.safe_load(written)
    assert {k: v for k, v in after.items() if k != "controls"} == {k: v for k, v in before.items() if k != "controls"}
    assert list(after) == list(before) and set(after["controls"]) >= {"null", "positive", "refusal", "compliance"}
