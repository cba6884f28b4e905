"""Cold start (issue 13 item 5): a text check of one file written to a pipe draws its summary
without rich (render/tables.py's plain tables, the same bytes); with colour rich draws it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import CLI_MODULES_RUN, ROOT

EXAMPLE = ROOT / "examples" / "clean-structured.yaml"


def _check(tmp_path: Path, *args: str) -> tuple[int, str, set[str]]:
    out = tmp_path / "run.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITMUS_RULES_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-c", CLI_MODULES_RUN, str(out), "check", *args], env=env, cwd=tmp_path,
                   capture_output=True, text=True, check=True, timeout=120)
    done = json.loads(out.read_text())
    return done["code"], done["stdout"], set(done["modules"])


def test_a_plain_text_summary_is_drawn_without_rich(tmp_path: Path) -> None:
    if not EXAMPLE.exists():
        pytest.skip("no examples next to the tests")
    code, stdout, modules = _check(tmp_path, str(EXAMPLE))
    assert code == 0 and "1 SCORED" in stdout
    assert "classification  episodes\n--------------- --------\nrefused         1\n" in stdout
    assert "yaml" in modules and not any(m == "rich" or m.startswith("rich.") for m in modules)


def test_a_coloured_summary_is_drawn_by_rich(tmp_path: Path) -> None:
    if not EXAMPLE.exists():
        pytest.skip("no examples next to the tests")
    code, stdout, modules = _check(tmp_path, str(EXAMPLE), "--color", "always")
    assert code == 0 and "\x1b[" in stdout and "rich.table" in modules
