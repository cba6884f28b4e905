"""`litmus-rules completion bash|zsh|fish`, through the real command line: a script for each shell,
generated from the parser (every command and the options of `check` are in it), that the shell
itself accepts where it is installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from litmus_rules.cli import build_parser

CLI = [sys.executable, "-m", "litmus_rules"]
SYNTAX = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}


def commands() -> list[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]  # noqa: SLF001
    return list(sub.choices)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_a_completion_script_for_each_shell_names_every_command_and_option(shell: str, tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "completion", shell], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    script = done.stdout
    for name in commands():
        assert name in script, name
    for option in ("--format", "--jobs", "--explain", "--color", "--quiet"):
        assert option in script or option.lstrip("-") in script, option
    assert "junit" in script and "sarif" in script  # the choices of check --format
    if shutil.which(SYNTAX[shell][0]):
        path = tmp_path / f"litmus-rules.{shell}"
        path.write_text(script, encoding="utf-8")
        checked = subprocess.run([*SYNTAX[shell], str(path)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr


def test_bash_completes_the_commands_when_sourced(tmp_path: Path) -> None:
    if not shutil.which("bash"):
        pytest.skip("no bash")
    script = subprocess.run([*CLI, "completion", "bash"], capture_output=True, text=True, timeout=120).stdout
    (tmp_path / "c.bash").write_text(script, encoding="utf-8")
    probe = (f"source {tmp_path / 'c.bash'}; COMP_WORDS=(litmus-rules ch); COMP_CWORD=1; "
             "COMP_LINE='litmus-rules ch'; COMP_POINT=${#COMP_LINE}; "
             "$(complete -p litmus-rules | sed -E 's/.*-F ([^ ]+).*/\\1/') litmus-rules ch litmus-rules; "
             "printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert "check" in done.stdout.split(), done.stdout + done.stderr


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = subprocess.run([*CLI, "completion", "powershell"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "invalid choice" in done.stderr
