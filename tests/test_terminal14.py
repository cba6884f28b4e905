"""Terminal conventions, through the real command line in a subprocess: `--version`, `-q`, colour
(`--color`, NO_COLOR), progress on a pseudo-terminal and none on a pipe, argument validation,
`test -x`, a broken pipe, ERROR rows that name their file and witness origins never cut."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path
from typing import Any

import pytest

from _helpers import EXAMPLES, base_episode
from test_ruletest import make

CLI = [sys.executable, "-m", "litmus_rules"]
LEAKS = str(EXAMPLES / "leaks")
CLEAN = str(EXAMPLES / "clean-structured.yaml")
PREFLIGHT_INPUT = Path(__file__).resolve().parent / "data" / "preflight" / "structured-upload.yaml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def env(**extra: str) -> dict[str, str]:
    """The environment of a child: no colour variables of the caller's, a known terminal."""
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "TERM")}
    return {**base, "TERM": "xterm", **extra}


def run(*argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, env=env(**extra), timeout=300)


def on_pty(argv: list[str], stream: str, **extra: str) -> tuple[int, str, str]:
    """Run with `stream` ("stdout" or "stderr") on a pseudo-terminal and the other on a pipe:
    (exit status, what the terminal showed, what the pipe got)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    kwargs: dict[str, Any] = {"stdout": slave, "stderr": subprocess.PIPE} if stream == "stdout" else {
        "stdout": subprocess.PIPE, "stderr": slave}
    proc = subprocess.Popen([*CLI, *argv], stdin=subprocess.DEVNULL, env=env(**extra), **kwargs)
    os.close(slave)
    other = proc.stderr if stream == "stdout" else proc.stdout
    assert other is not None
    piped: list[bytes] = []
    reader = threading.Thread(target=lambda: piped.append(other.read()))  # a full pipe would block the child
    reader.start()
    shown = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                chunk = b""
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    code = proc.wait(60)
    reader.join(60)
    return code, shown.decode("utf-8", "replace"), b"".join(piped).decode()


def batch(path: Path, n: int, rejected_every: int = 0) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            ep = base_episode()
            ep["id"], ep["canaries"] = f"e{i:05d}", [{"value": f"lc-{i:08d}-term"}]
            if rejected_every and i % rejected_every == 0:
                ep["controls"]["refusal"]["label"] = "unsafe"
            fh.write(json.dumps(ep) + "\n")
    return path


# ---- --version, -q -----------------------------------------------------------------------------------


def test_version_prints_the_package_version() -> None:
    from importlib.metadata import version

    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"litmus-rules {version('litmus_rules')}"


def test_quiet_prints_the_outcome_only_and_verbose_adds_the_timing() -> None:
    quiet = run("check", "-q", LEAKS)
    assert quiet.returncode == 1 and quiet.stdout.strip().splitlines() == [
        "11 episode(s): 0 SCORED, 11 REJECTED, 0 ERROR"]
    loud = run("-v", "check", LEAKS)  # before the command name too
    assert loud.returncode == 1 and "reject reason" in loud.stdout and "episodes/s" not in loud.stdout
    assert re.search(r"11 episode\(s\).* in [0-9.]+ s", loud.stderr)


# ---- colour --------------------------------------------------------------------------------------------


def test_color_always_on_a_pipe_has_ansi_and_never_on_a_terminal_has_none() -> None:
    always = run("check", "--color", "always", LEAKS)
    assert ANSI.search(always.stdout) and "REJECTED" in ANSI.sub("", always.stdout)
    code, shown, _ = on_pty(["check", "--color", "never", LEAKS], "stdout")
    assert code == 1 and "REJECTED" in shown and not ANSI.search(shown)


def test_auto_colours_a_terminal_unless_no_color_is_set() -> None:
    code, shown, _ = on_pty(["check", LEAKS], "stdout")
    assert code == 1 and ANSI.search(shown)
    code, shown, _ = on_pty(["check", LEAKS], "stdout", NO_COLOR="1")
    assert code == 1 and "REJECTED" in shown and not ANSI.search(shown)
    forced = run("check", "--color", "always", LEAKS, NO_COLOR="1")  # an explicit choice wins
    assert ANSI.search(forced.stdout)
    plain = run("check", LEAKS, NO_COLOR="")  # empty: not set (no-color.org); a pipe is plain anyway
    assert not ANSI.search(plain.stdout)


def test_a_pipe_gets_no_colour_by_default_and_the_same_text_as_never() -> None:
    auto, never = run("check", LEAKS), run("check", "--color", "never", LEAKS)
    assert not ANSI.search(auto.stdout) and auto.stdout == never.stdout


# ---- progress ------------------------------------------------------------------------------------------


def test_check_progress_on_a_terminal_has_a_total_a_rate_and_an_eta(tmp_path: Path) -> None:
    big = batch(tmp_path / "b.jsonl", 30, rejected_every=3)
    code, shown, out = on_pty(["check", str(big), "--format", "jsonl"], "stderr")
    assert code == 1 and len(out.splitlines()) == 30
    plain = ANSI.sub("", shown)
    assert "30/30 episodes" in plain and "/s" in plain and "ETA" in plain, plain[-500:]


def test_no_progress_on_a_pipe(tmp_path: Path) -> None:
    big = batch(tmp_path / "b.jsonl", 30)
    done = run("check", str(big), "--format", "jsonl")
    # stderr holds the one line naming the ruleset used, and nothing drawn
    assert done.returncode == 0 and done.stderr.startswith("ruleset ") and done.stderr.count("\n") == 1, done.stderr
    assert "\r" not in done.stderr and "\x1b" not in done.stderr


def test_quiet_hides_the_progress_on_a_terminal(tmp_path: Path) -> None:
    code, shown, _ = on_pty(["check", "-q", str(batch(tmp_path / "b.jsonl", 5)), "--format", "jsonl"], "stderr")
    assert code == 0 and "episodes" not in shown


def test_preflight_shows_progress_and_a_summary_not_a_row_per_instance(tmp_path: Path) -> None:
    code, shown, _ = on_pty(["preflight", str(PREFLIGHT_INPUT), "-o", str(tmp_path / "out")], "stderr")
    plain = ANSI.sub("", shown)
    assert code == 0 and "1/1 instances" in plain and "ETA" in plain, plain[-800:]
    assert "finding" in plain and "structured-upload-001 " not in plain  # no per-instance row
    assert "-v lists every instance" in plain
    verbose = run("preflight", "-v", str(PREFLIGHT_INPUT), "-o", str(tmp_path / "out2"))
    assert verbose.returncode == 0 and "structured-upload-001 " in verbose.stderr and "ETA" not in verbose.stderr


# ---- argument validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["0", "-3", "two"])
def test_jobs_below_one_is_a_usage_error(jobs: str) -> None:
    done = run("check", CLEAN, "--jobs", jobs)
    assert done.returncode == 2 and "argument --jobs" in done.stderr and "usage:" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_fail_under_without_coverage_is_a_usage_error() -> None:
    done = run("test", "--fail-under", "90")
    assert done.returncode == 2 and "--fail-under needs --coverage" in done.stderr and "usage:" in done.stderr


def test_exitfirst_stops_at_the_first_failed_case(tmp_path: Path) -> None:
    rules = make(tmp_path, """\
        base: base
        cases:
          - name: first fails
            expect: {verdict: REJECTED}
          - name: second fails
            expect: {verdict: REJECTED}
          - name: third passes
            expect: {verdict: SCORED}
        """)
    full = run("test", str(rules))
    assert full.returncode == 1 and "1 passed, 2 failed" in full.stdout
    first = run("test", "-x", str(rules))
    assert first.returncode == 1 and "FAIL first fails" in first.stdout and "second fails" not in first.stdout
    assert "0 passed, 1 failed" in first.stdout and "-x" in first.stdout


# ---- broken pipe -----------------------------------------------------------------------------------------


def test_a_reader_that_closes_early_gets_a_non_zero_status_and_no_traceback(tmp_path: Path) -> None:
    # Every episode SCORED and decided before the first byte is written (text output comes at the
    # end): the reader still did not get it all, so exit 0 would be a lie in a `pipefail` job.
    big = batch(tmp_path / "b.jsonl", 40)
    proc = subprocess.Popen([*CLI, "check", str(big), "--explain", "full"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env())
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"ruleset ")
    proc.stdout.close()  # as `| head -1` does
    code, err = proc.wait(120), proc.stderr.read().decode()
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1 and "broken pipe" in err


def test_a_command_that_decides_nothing_also_fails_on_a_broken_pipe() -> None:
    # A one-page pipe: the script (over 8 KiB) cannot all fit before the reader closes it.
    proc = subprocess.Popen([*CLI, "completion", "bash"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(),
                            pipesize=4096)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    code, err = proc.wait(60), proc.stderr.read().decode()
    assert code == 2 and "Traceback" not in err and "broken pipe" in err


# ---- text output: ERROR rows, witness origins ------------------------------------------------------------


def test_an_error_row_names_its_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(base_episode() | {"id": "ok-1"}) + "\n{not json\n", encoding="utf-8")
    done = run("check", str(bad))
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("<no id>")]  # the summary's row
    assert row.split()[-1] == f"{bad}:2" and " ERROR " in row, done.stdout


def test_witness_origins_are_never_cut_in_a_trace() -> None:
    episode = str(EXAMPLES / "leaks" / "base64-canary-in-ref-enum.yaml")
    origin = "context.tools[1].input_schema.$defs.SyncMode.enum[2]"
    done = run("explain", episode, "--id", "leak-base64-canary-ref-enum", "--full")
    trace_lines = [line for line in done.stdout.splitlines() if "| " in line and "origin:" in line]
    assert trace_lines and all("origin: '" in line for line in trace_lines)
    assert any(f"origin: '{origin}'" in line for line in trace_lines)
    cut = [m for line in trace_lines for m in re.findall(r"origin: '([^']*)'", line) if m.endswith("...")]
    assert cut == []


def test_rules_info_renderer_lists_every_rule_and_param_in_a_rich_table() -> None:
    from litmus_rules import load_rules
    from litmus_rules.authoring.lint import ruleset_info
    from litmus_rules.render.text import render_rules_info

    info = ruleset_info(None)
    plain, coloured = render_rules_info(info), render_rules_info(info, color=True)
    assert not ANSI.search(plain) and ANSI.search(coloured) and ANSI.sub("", coloured) == plain
    params = [line.split() for line in plain.splitlines() if line.startswith("  ") and "= " in line]
    assert [p[0] for p in params] == [p["name"] for p in info["params"]]
    for rule in load_rules().ast.rules:
        assert f"  {rule.name}  (" in plain
