"""Cold start (issue 13 item 5): what starting the command line and checking one file import.
Counted in `sys.modules` of a fresh interpreter, never timed: every module below is one that a
`check` of one episode file does not need (the other formats' writers, the importers, the grammar,
the schema validators), and importing it is start-up time paid for nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import CLI_MODULES_RUN, ROOT

EXAMPLE = ROOT / "examples" / "clean-structured.yaml"

# Heavy third-party packages and the project's modules that only some commands or formats use.
NOT_AT_START = ("lark", "rich", "yaml", "jsonschema", "fastjsonschema", "orjson", "uuid",
                "litmus_rules.io.importers", "litmus_rules.render.json", "litmus_rules.render.report",
                "litmus_rules.lang.syntax._front")



def _under(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


def _modules_after(code: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         env=env, capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout))


def _check(tmp_path: Path, *args: str) -> tuple[int, str, set[str]]:
    out = tmp_path / "run.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITMUS_RULES_CACHE_DIR=str(tmp_path / "cache"))
    for _ in range(2):  # the first run stores the parsed rules; the second is the cold start measured
        subprocess.run([sys.executable, "-c", CLI_MODULES_RUN, str(out), "check", *args], env=env, cwd=tmp_path,
                       capture_output=True, text=True, check=True, timeout=120)
    done = json.loads(out.read_text())
    return done["code"], done["stdout"], set(done["modules"])


@pytest.mark.parametrize("module", ["litmus_rules.cli", "litmus_rules.cli.check", "litmus_rules.cli.import_"])
def test_starting_the_command_line_imports_no_heavy_or_unused_module(module: str) -> None:
    assert _under(_modules_after(f"import {module}"), NOT_AT_START) == set()


def test_a_text_check_of_one_yaml_file_imports_no_json_writer_importer_or_grammar(tmp_path: Path) -> None:
    if not EXAMPLE.exists():
        pytest.skip("no examples next to the tests")
    code, stdout, modules = _check(tmp_path, str(EXAMPLE))
    assert code == 0 and "1 SCORED" in stdout  # it did check the file
    assert "yaml" in modules and not _under(modules, ("rich",))  # read as YAML; a plain table needs no rich
    assert _under(modules, ("lark", "orjson", "uuid", "jsonschema", "litmus_rules.io.importers",
                            "litmus_rules.render.json", "litmus_rules.render.report")) == set()


def test_a_jsonl_check_of_a_json_episode_imports_neither_yaml_nor_rich(tmp_path: Path) -> None:
    if not EXAMPLE.exists():
        pytest.skip("no examples next to the tests")
    import yaml

    episode = tmp_path / "one.json"
    episode.write_text(json.dumps(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))), encoding="utf-8")
    code, stdout, modules = _check(tmp_path, str(episode), "--format", "jsonl")
    assert code == 0 and json.loads(stdout)["verdict"] == "SCORED"
    assert _under(modules, ("yaml", "rich", "lark", "litmus_rules.io.importers")) == set()


def test_the_import_command_lists_every_importer_format() -> None:
    """`import --help` names the formats without importing the importers: the same names, in order."""
    from litmus_rules.cli.import_ import FORMAT_NAMES
    from litmus_rules.io.importers import FORMATS

    assert FORMAT_NAMES == tuple(FORMATS)
