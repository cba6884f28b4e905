"""Cold start (issue 13 item 5): `check` of one episode file imports what checking needs and nothing
more: not the other commands' machinery, not lark once the rules' parse is cached, not the TOML
reader without a config file, not the process pool for one file. Counted in sys.modules of a real
run, never timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import CLI_MODULES_RUN, ROOT

# one scored, one rejected
FILES = [ROOT / "examples" / "clean-structured.yaml", ROOT / "examples" / "note-case2-poisoned-read-file.yaml"]



def _check(tmp_path: Path, cache: str) -> tuple[int, str, set[str]]:
    out = tmp_path / "run.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITMUS_RULES_CACHE_DIR=cache)
    args = ["check", *map(str, FILES), "--format", "jsonl", "--jobs", "1"]
    subprocess.run([sys.executable, "-c", CLI_MODULES_RUN, str(out), *args], env=env, cwd=tmp_path,
                   capture_output=True, text=True, check=True, timeout=120)
    done = json.loads(out.read_text())
    return done["code"], done["stdout"], set(done["modules"])


def _under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str, set[str]]]:
    """Three runs: with the disk cache off, then twice with it (the first stores the parsed rules)."""
    if not all(f.exists() for f in FILES):
        pytest.skip("no examples next to the tests")
    tmp = tmp_path_factory.mktemp("cold")
    cache = str(tmp / "cache")
    return [_check(tmp, ""), _check(tmp, cache), _check(tmp, cache)]


def test_a_check_imports_no_other_command_s_machinery(runs: list[tuple[int, str, set[str]]]) -> None:
    for _, _, modules in runs:
        assert _under(modules, "litmus_rules.preflight.run", "litmus_rules.preflight.report",
                      "litmus_rules.authoring", "litmus_rules.render.report.present",
                      "litmus_rules.render.report.compute", "litmus_rules.io.verdicts", "jinja2") == set()


def test_a_cached_parse_needs_no_lark(runs: list[tuple[int, str, set[str]]]) -> None:
    off, first, second = (modules for _, _, modules in runs)
    assert "lark" in off and "lark" in first  # these parsed the rules
    assert _under(second, "lark", "regex", "litmus_rules.lang.syntax._front") == set()


def test_a_valid_episode_without_config_or_pool_imports_neither(runs: list[tuple[int, str, set[str]]]) -> None:
    modules = runs[2][2]
    assert _under(modules, "tomllib", "tomli", "concurrent.futures", "jsonschema", "difflib") == set()


def test_the_cached_run_decides_as_the_uncached_one(runs: list[tuple[int, str, set[str]]]) -> None:
    outputs = [(code, stdout) for code, stdout, _ in runs]
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0][0] == 1 and outputs[0][1].count("\n") == 2  # one scored, one rejected


def test_the_version_is_read_without_importlib_metadata() -> None:
    from importlib.metadata import PackageNotFoundError, version

    from litmus_rules._resources import installed_version

    for name in ("litmus_rules", "attrs", "PyYAML", "no-such-distribution-13"):
        try:
            expected: str | None = version(name)
        except PackageNotFoundError:
            expected = None
        assert installed_version(name) == expected


def test_a_json_input_is_checked_without_yaml_fastjsonschema_or_metadata(tmp_path: Path) -> None:
    from litmus_rules import read_episodes

    docs = [loaded.data for loaded in read_episodes([str(f) for f in FILES])]
    episode = tmp_path / "episodes.jsonl"
    episode.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "run.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), LITMUS_RULES_CACHE_DIR=str(tmp_path / "cache"))
    for _ in range(2):  # the second run reads the parsed rules from the cache
        subprocess.run([sys.executable, "-c", CLI_MODULES_RUN, str(out), "check", str(episode), "--format", "jsonl", "--jobs", "1"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120)
    done = json.loads(out.read_text())
    assert done["code"] == 1 and done["stdout"].count("\n") == 2
    assert _under(set(done["modules"]), "yaml", "fastjsonschema", "lark", "importlib.metadata", "logging") == set()
