"""The config (issue 14, item 2): `litmus.toml` / `[tool.litmus-rules]` params, lint codes to
ignore, the default format and jobs are honoured; a bad config is a located L7xx error; the config
file is recorded with the verdicts."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules import config
from litmus_rules.cli import _common as common
from litmus_rules.cli import main
from litmus_rules.config import KEYS, ConfigError, read_config

ROOT = Path(__file__).resolve().parents[1]
CLEAN = ROOT / "examples" / "clean-structured.yaml"
UNCITED = 'ruleset t.cfg version "1"\n\nrule r\n  "d"\n  reject when detector.channel == "x"\n  because "{detector.channel}"\n'


def cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "litmus_rules", *argv], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300)


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(cwd: Path, *argv: str) -> tuple[int, str, str]:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(config, "_CACHE", {})  # the config is read once per directory and process
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def toml(folder: Path, text: str, name: str = "litmus.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# ---- honoured ------------------------------------------------------------------------------------------


def test_config_params_reach_every_verdict_with_the_config_file_recorded(tmp_path: Path) -> None:
    path = toml(tmp_path, "params = {min_partial_len = 9}\n", "pyproject.toml")
    path.write_text('[project]\nname = "p"\n\n[tool.litmus-rules]\nparams = {min_partial_len = 9}\n', encoding="utf-8")
    run = cli("check", str(CLEAN), "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    recorded = {"path": str(path), "sha256": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()}
    assert doc["summary"]["config"] == recorded and doc["verdicts"][0]["ruleset"]["config"] == recorded
    params = {p["name"]: p for p in doc["verdicts"][0]["params"]}
    assert params["min_partial_len"] == {"name": "min_partial_len", "value": 9, "override": True}
    assert params["common_word_zipf"]["override"] is False


def test_a_param_on_the_command_line_wins_over_the_config(tmp_path: Path, in_process: Any) -> None:
    toml(tmp_path, "[params]\nmin_partial_len = 9\n")
    code, out, _ = in_process(tmp_path, "check", str(CLEAN), "--format", "jsonl", "--param", "min_partial_len=7")
    assert code == 0 and {p["name"]: p["value"] for p in json.loads(out)["params"]}["min_partial_len"] == 7


def test_without_a_config_nothing_is_recorded(tmp_path: Path, in_process: Any) -> None:
    code, out, _ = in_process(tmp_path, "check", str(CLEAN), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["config"] is None and "config" not in doc["verdicts"][0]["ruleset"]
    assert all(not p["override"] for p in doc["verdicts"][0]["params"])


def test_ignored_lint_codes_from_the_config_and_the_command_line(tmp_path: Path, in_process: Any) -> None:
    (tmp_path / "r.litmus").write_text(UNCITED, encoding="utf-8")
    code, out, _ = in_process(tmp_path, "lint", "r.litmus", "--format", "json")
    assert code == 1 and [d["code"] for d in json.loads(out)["diagnostics"]] == ["L402"]
    toml(tmp_path, 'ignore = ["L402"]\n')
    code, out, _ = in_process(tmp_path, "lint", "r.litmus", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["diagnostics"] == [] and doc["summary"]["hidden"] == 1
    toml(tmp_path, "")
    code, out, _ = in_process(tmp_path, "lint", "r.litmus", "--ignore", "l402")
    assert code == 0 and out.strip().endswith("0 error(s), 0 warning(s) (1 ignored: L402)")
    code, _, err = in_process(tmp_path, "lint", "r.litmus", "--ignore", "L100")
    assert code == 2 and "only warnings can be ignored" in err


def test_the_configured_format_is_the_default_and_an_option_still_wins(tmp_path: Path) -> None:
    (tmp_path / "r.litmus").write_text(UNCITED, encoding="utf-8")
    toml(tmp_path, 'format = {lint = "json"}\n')
    run = cli("lint", "r.litmus", cwd=tmp_path)
    assert run.returncode == 1 and json.loads(run.stdout)["summary"]["warnings"] == 1


def test_a_global_format_applies_where_a_command_has_it(tmp_path: Path, in_process: Any) -> None:
    (tmp_path / "r.litmus").write_text(UNCITED, encoding="utf-8")
    toml(tmp_path, 'format = "json"\n')
    code, out, _ = in_process(tmp_path, "lint", "r.litmus")
    assert code == 1 and json.loads(out)["summary"]["warnings"] == 1
    code, out, _ = in_process(tmp_path, "lint", "r.litmus", "--format", "text")
    assert code == 1 and out.strip().endswith("0 error(s), 1 warning(s)")
    code, out, _ = in_process(tmp_path, "explain", str(CLEAN), "--id", "clean-transfer-001")
    assert code == 0 and json.loads(out)["verdicts"][0]["verdict"] == "SCORED"
    code, out, _ = in_process(tmp_path, "check", str(CLEAN))
    assert code == 0 and json.loads(out)["summary"]["SCORED"] == 1
    code, out, _ = in_process(tmp_path, "check", str(CLEAN), "--format", "jsonl")
    assert code == 0 and json.loads(out)["verdict"] == "SCORED"


def test_configured_jobs_are_check_s_default(tmp_path: Path, in_process: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int | None] = []
    real = common.check_inputs

    def recording(*args: Any, jobs: int | None = None, **kwargs: Any) -> Any:
        asked.append(jobs)
        return real(*args, jobs=jobs, **kwargs)

    monkeypatch.setattr(common, "check_inputs", recording)
    toml(tmp_path, "jobs = 2\n")
    assert in_process(tmp_path, "check", str(CLEAN), "--format", "jsonl")[0] == 0
    assert in_process(tmp_path, "check", str(CLEAN), "--format", "jsonl", "--jobs", "1")[0] == 0
    assert asked == [2, 1]


# ---- located errors ------------------------------------------------------------------------------------


def test_an_unknown_key_is_a_located_error_through_the_command_line(tmp_path: Path) -> None:
    toml(tmp_path, '# the project config\nrulez = "rules"\n')
    run = cli("check", str(CLEAN), cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("litmus.toml:2:1: error[L703]: unknown key `rulez` in litmus.toml\n   2 | rulez")


@pytest.mark.parametrize("name, text, code, line, says", [
    ("litmus.toml", "jobs = \"2\"\n", "L704", 1, "`jobs` must be an integer, not a string"),
    ("litmus.toml", "\n\njobs = 0\n", "L705", 3, "`jobs` must be 1 or more"),
    ("litmus.toml", 'ignore = ["L100"]\n', "L705", 1, "only warnings can be ignored"),
    ("litmus.toml", 'ignore = ["L999"]\n', "L705", 1, "not a diagnostic code"),
    ("litmus.toml", "rules = \"nowhere\"\n", "L705", 1, "rules path `nowhere` does not exist"),
    ("litmus.toml", "params = [1]\n", "L704", 1, "`params` must be a table"),
    ("litmus.toml", "[params]\nx = 2024-01-01\n", "L704", 2, "`params.x` must be a string, number, boolean or list"),
    ("litmus.toml", 'format = {lint = 3}\n', "L704", 1, "`format.lint` must be a format name"),
    ("litmus.toml", "jobs = \n", "L702", 1, "invalid TOML"),
    ("pyproject.toml", '[project]\nname = "p"\n\n[tool.litmus-rules]\njobs = 1\nrule = "r"\n', "L703", 6,
     "unknown key `rule` in [tool.litmus-rules]"),
    ("pyproject.toml", '[tool]\n"litmus-rules" = 3\n', "L704", 1, "`tool.litmus-rules` must be a table"),
])
def test_a_bad_config_is_a_located_error(tmp_path: Path, in_process: Any, name: str, text: str, code: str,
                                         line: int, says: str) -> None:
    toml(tmp_path, text, name)
    status, out, err = in_process(tmp_path, "lint")
    assert status == 2 and out == ""
    assert err.startswith(f"{name}:{line}:") and f"error[{code}]" in err and says in err, err


def test_a_config_param_the_rules_do_not_have_is_located_in_the_config(tmp_path: Path, in_process: Any) -> None:
    toml(tmp_path, "[params]\nmin_partial_len = 6\nmin_partal = 3\n")
    status, _, err = in_process(tmp_path, "check", str(CLEAN))
    assert status == 2 and err.startswith("litmus.toml:3:1: error[L705]: unknown param `min_partal`") and "did you mean" in err


def test_a_per_command_format_the_command_lacks_is_an_error(tmp_path: Path, in_process: Any) -> None:
    toml(tmp_path, 'format = {lint = "jsonl"}\n')
    status, _, err = in_process(tmp_path, "lint")
    assert status == 2 and "error[L705]" in err and "`lint` has no format `jsonl`" in err


def test_someone_else_s_broken_pyproject_is_not_read(tmp_path: Path, in_process: Any) -> None:
    toml(tmp_path, "[tool.black\nline-length = 1\n", "pyproject.toml")  # not TOML, not ours
    assert in_process(tmp_path, "rules", "info", "--format", "json")[0] == 0


@settings(max_examples=40, deadline=None)
@given(key=st.from_regex(r"[a-z][a-z_-]{0,12}", fullmatch=True).filter(lambda k: k not in KEYS),
       before=st.integers(0, 4))
def test_any_unknown_key_is_l703_at_its_own_line(tmp_path_factory: pytest.TempPathFactory, key: str, before: int) -> None:
    folder = tmp_path_factory.mktemp("cfg")
    path = folder / "litmus.toml"
    path.write_text("jobs = 1\n" * min(before, 1) + "# note\n" * before + f"{key} = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_config(path)
    assert info.value.code == "L703" and info.value.span is not None
    assert info.value.span.line == min(before, 1) + before + 1 and info.value.span.text.startswith(key)
