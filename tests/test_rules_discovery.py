"""The rules of the project you stand in (issue 14, item 1), through the real command line in a
subprocess: the config's `rules`, else a `rules/` folder upward, else the shipped rules; every
command says which ruleset it used; `fmt` does not write into an installed package."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from litmus_rules import config
from litmus_rules.cli import _common as common
from litmus_rules.cli import main

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"
CLEAN = ROOT / "examples" / "clean-structured.yaml"  # SCORED under the shipped rules
LINE = re.compile(r"^ruleset (\S+) version (\S+) \((sha256:[0-9a-f]{64})\) from (.+), (.+)$", re.M)

# A rule appended to the project's copy: it rejects the clean example and the rule tests' clean base, by id.
EDIT = '''
rule edited_in_the_checkout
  "An edit made in the project's own copy of the rules."
  cite "issue 14"
  reject when id == "clean-transfer-001" or id == "base-clean"
  because "edited rule saw {id}"
'''


def cli(*argv: str, cwd: Path, stdin: str | None = None, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "litmus_rules", *argv], cwd=cwd, env=env, input=stdin, text=True,
                          capture_output=True, timeout=300, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def used(text: str) -> dict[str, str]:
    """The ruleset line a command printed."""
    found = LINE.findall(text)
    assert len(found) == 1, text
    name, version, digest, path, origin = found[0]
    return {"name": name, "version": version, "hash": digest, "path": path, "origin": origin}


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """`main(argv)` in this process, in a working directory (the config is read once per directory,
    so each call starts from a fresh cache), with an optional standard input."""

    def run(cwd: Path, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(config, "_CACHE", {})
        monkeypatch.setattr(common, "_STDIN_RULES", [])
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copied checkout: the rules (with their tests) and a pyproject.toml that names them."""
    proj = tmp_path / "proj"
    shutil.copytree(RULES, proj / "rules")
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.litmus-rules]\nrules = "rules"\n', encoding="utf-8")
    (proj / "sub" / "deeper").mkdir(parents=True)
    return proj


def test_an_edited_rule_in_the_project_is_what_every_command_uses(project: Path) -> None:
    here = project / "sub" / "deeper"
    before = cli("check", str(CLEAN), "--format", "json", cwd=here)
    assert before.returncode == 0, before.stderr
    original = used(before.stderr)
    assert original["origin"] == f"configured in {project / 'pyproject.toml'}"  # (outside the cwd: absolute)
    assert Path(here, original["path"]).resolve() == (project / "rules").resolve()

    with open(project / "rules" / "validity.litmus", "a", encoding="utf-8") as fh:
        fh.write(EDIT)
    after = cli("check", str(CLEAN), "--format", "json", cwd=here)
    edited = used(after.stderr)
    assert edited["hash"] != original["hash"]
    doc = json.loads(after.stdout)
    assert after.returncode == 1 and [r["rule"] for r in doc["verdicts"][0]["reasons"]] == ["edited_in_the_checkout"]
    assert doc["verdicts"][0]["ruleset"]["hash"] == edited["hash"]

    # the project's rule tests run against the edited copy: the clean case now fails
    test = cli("test", "--format", "json", "-k", "the clean base is scored", cwd=here)
    assert used(test.stderr)["hash"] == edited["hash"]
    assert test.returncode == 1 and json.loads(test.stdout)["summary"]["failed"] >= 1


def test_the_authoring_commands_use_the_project_s_rules_too(project: Path, in_process: Any) -> None:
    with open(project / "rules" / "validity.litmus", "a", encoding="utf-8") as fh:
        fh.write(EDIT)
    here = project / "sub"
    code, out, err = in_process(here, "rules", "info", "--format", "json")
    digest = json.loads(out)["hash"]
    assert code == 0 and used(err)["hash"] == digest and json.loads(out)["chosen"] == "config"
    code, out, _ = in_process(here, "rules", "info")
    assert used(out)["hash"] == digest and "edited_in_the_checkout" in out
    code, out, _ = in_process(here, "explain", str(CLEAN), "--id", "clean-transfer-001")
    assert code == 1 and used(out)["hash"] == digest and "edited rule saw clean-transfer-001" in out
    code, out, _ = in_process(here, "lint")
    assert used(out)["hash"] == digest
    code, _, err = in_process(here, "fmt", "--check")
    assert used(err)["hash"] == digest


def test_without_a_config_a_rules_folder_upward_is_used_else_the_shipped_rules(
    project: Path, tmp_path: Path, in_process: Any
) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")  # no table: no stop
    with open(project / "rules" / "validity.litmus", "a", encoding="utf-8") as fh:
        fh.write(EDIT)
    found = cli("check", str(CLEAN), "--format", "jsonl", cwd=project / "sub")
    assert found.returncode == 1 and used(found.stderr)["origin"] == "found from the working directory"
    assert json.loads(found.stdout)["reasons"][0]["rule"] == "edited_in_the_checkout"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = in_process(elsewhere, "check", str(CLEAN), "--format", "jsonl")
    assert code == 0 and used(err)["origin"] == "shipped with litmus-rules" and used(err)["hash"] != used(found.stderr)["hash"]
    # an explicit path wins over everything
    code, _, err = in_process(project / "sub", "check", str(CLEAN), "--rules", str(RULES), "--format", "jsonl")
    assert code == 0 and used(err)["origin"] == "given on the command line"


def test_a_litmus_toml_wins_over_a_pyproject_toml_in_the_same_folder(project: Path, tmp_path: Path, in_process: Any) -> None:
    other = tmp_path / "other-rules"
    shutil.copytree(RULES, other)
    with open(other / "validity.litmus", "a", encoding="utf-8") as fh:
        fh.write(EDIT)
    (project / "litmus.toml").write_text(f'rules = "{other.as_posix()}"\n', encoding="utf-8")
    code, _, err = in_process(project, "check", str(CLEAN), "--format", "jsonl")
    assert code == 1 and used(err)["origin"] == "configured in litmus.toml"


def test_rules_read_from_standard_input(tmp_path: Path, in_process: Any) -> None:
    text = (RULES / "validity.litmus").read_text(encoding="utf-8") + EDIT
    code, out, err = in_process(tmp_path, "check", str(CLEAN), "--rules", "-", "--format", "jsonl", stdin=text)
    assert code == 1 and used(err)["path"] == "<stdin>"
    assert json.loads(out)["reasons"][0]["rule"] == "edited_in_the_checkout"
    code, _, err = in_process(tmp_path, "check", "-", "--rules", "-", stdin=text)
    assert code == 2 and "cannot be both" in err


def test_lint_reads_standard_input_and_names_it(tmp_path: Path) -> None:
    source = 'ruleset t.stdin version "1"\n\nrule r reject when detector.channel == "x"\n'
    run = cli("lint", "-", cwd=tmp_path, stdin=source)
    assert run.returncode == 1 and used(run.stdout)["path"] == "<stdin>"
    assert "<stdin>:3:6: warning[L401]" in run.stdout and "stdin.litmus" not in run.stdout


def test_lint_of_standard_input_that_does_not_parse(tmp_path: Path, in_process: Any) -> None:
    code, out, _ = in_process(tmp_path, "lint", "-", "--format", "json", stdin="ruleset t version\n")
    doc = json.loads(out)
    assert code == 2 and doc["summary"]["files"] == ["<stdin>"]
    assert [d["code"] for d in doc["diagnostics"]] == ["L100"] and doc["diagnostics"][0]["file"] == "<stdin>"


# ---- fmt and installed packages ----------------------------------------------------------------------


def unformatted(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "r.litmus"
    path.write_text('ruleset t.fmt version "1"\nrule r "d" cite "c" reject when detector.channel=="x" because "{detector.channel}"\n',
                    encoding="utf-8")
    return path


def test_fmt_refuses_to_write_inside_an_installed_package(tmp_path: Path) -> None:
    installed = unformatted(tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "pkg" / "rules")
    before = installed.read_text(encoding="utf-8")
    run = cli("fmt", str(installed.parent), cwd=tmp_path)
    assert run.returncode == 2 and "error[L706]" in run.stderr and "installed package" in run.stderr
    assert installed.read_text(encoding="utf-8") == before


def test_fmt_of_configured_rules_inside_an_installed_package_is_refused(tmp_path: Path, in_process: Any) -> None:
    installed = unformatted(tmp_path / "venv" / "lib" / "python3.11" / "dist-packages" / "pkg" / "rules")
    before = installed.read_text(encoding="utf-8")
    assert in_process(tmp_path, "fmt", "--check", str(installed.parent))[0] == 1  # reading is fine
    (tmp_path / "litmus.toml").write_text(f'rules = "{installed.parent.as_posix()}"\n', encoding="utf-8")
    code, _, err = in_process(tmp_path, "fmt")
    assert code == 2 and "error[L706]" in err and installed.read_text(encoding="utf-8") == before


def test_fmt_refuses_the_package_s_own_shipped_rules(tmp_path: Path) -> None:
    import litmus_rules

    data = Path(litmus_rules.__file__).resolve().parent / "_data" / "rules"
    if not data.is_dir():  # a source checkout: the shipped rules are the checkout's (and editable)
        pytest.skip("litmus_rules runs from a source checkout: no _data folder")
    run = cli("fmt", str(data), cwd=tmp_path)
    assert run.returncode == 2 and "error[L706]" in run.stderr


def test_fmt_and_check_keep_an_existing_file_s_mode(tmp_path: Path) -> None:
    rule = unformatted(tmp_path / "rules")
    rule.chmod(0o644)
    run = cli("fmt", str(rule), cwd=tmp_path, umask=0o077)
    assert run.returncode == 0 and "reformatted" in run.stdout
    assert (rule.stat().st_mode & 0o777) == 0o644 and "because" in rule.read_text(encoding="utf-8")

    out = tmp_path / "verdicts.jsonl"
    out.write_text("old\n", encoding="utf-8")
    out.chmod(0o644)
    assert cli("check", str(CLEAN), "--format", "jsonl", "-o", str(out), cwd=tmp_path, umask=0o077).returncode == 0
    assert (out.stat().st_mode & 0o777) == 0o644 and json.loads(out.read_text(encoding="utf-8"))["verdict"] == "SCORED"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".litmus-")] == []


def test_a_new_output_gets_the_umask_s_mode(tmp_path: Path, in_process: Any) -> None:
    previous = os.umask(0o027)
    try:
        code, _, _ = in_process(tmp_path, "check", str(CLEAN), "--format", "json", "-o", str(tmp_path / "new.json"))
    finally:
        os.umask(previous)
    assert code == 0 and ((tmp_path / "new.json").stat().st_mode & 0o777) == 0o640
