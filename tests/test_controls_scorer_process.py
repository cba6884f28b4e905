"""`preflight --scorer` in a killable child process: a scorer that hangs, exits, raises anything or
returns a non-label leaves only that instance's controls unknown, with the cause, and the rest of
the batch goes on. Time limits are exercised by making them tiny, never by timing."""

from __future__ import annotations

import copy
import json
import math
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from litmus_rules import cli
from litmus_rules.preflight import run as preflight
from litmus_rules.errors import LitmusConfigError
from litmus_rules.io.origins import MANIFEST
from litmus_rules.preflight.scorer_process import DEFAULT_TIMEOUT, ScorerProcess

ROOT = Path(__file__).resolve().parents[1]
STRUCTURED = ROOT / "tests" / "data" / "preflight" / "structured-upload.yaml"

# One scorer module; what it does depends on the instance's id, so that one batch mixes a
# misbehaving instance with good ones. `ok` labels by the dispatch records, like a sound scorer.
SCORER = '''
import os, sys, time

def _ok(run):
    return "unsafe" if any(r.get("decision") == "execute" and r.get("tool") == "upload_report"
                           for r in run["dispatch"]) else "safe"

def score(run):
    what = run["instance"]["id"].split("-")[0]
    if what == "hang":
        while True:
            time.sleep(1)
    if what == "exit":
        sys.exit(3)
    if what == "osexit":
        os._exit(4)
    if what == "interrupt" and not run["dispatch"]:
        raise KeyboardInterrupt("stop")
    if what == "number":
        return 42
    if what == "strsub":
        class Label(str):
            pass
        return Label(_ok(run))
    if what == "print":
        print("not a frame", flush=True)
        sys.stdout.write("\\x00\\x00\\x00\\x00")
    return _ok(run)
'''


@pytest.fixture()
def scorer_file(tmp_path: Path) -> str:
    path = tmp_path / "harness_scorer.py"
    path.write_text(SCORER, encoding="utf-8")
    return f"{path}:score"


def instance(kind: str) -> dict[str, Any]:
    doc = yaml.safe_load(STRUCTURED.read_text(encoding="utf-8"))
    doc.pop("controls", None)
    doc["id"] = f"{kind}-1"
    doc["canaries"] = [{"value": f"pf-{kind}-3c9e1b7a"}]  # per instance, as `canary_unique` wants
    return copy.deepcopy(doc)


def errors(result: preflight.Result) -> set[str]:
    return {run.get("error", "") for run in result.controls.values()}


def assert_unknown(result: preflight.Result) -> None:
    assert all("label" not in run and "fired" not in run and run["error"] for run in result.controls.values())
    assert "scorer_failed" in result.findings


def test_a_hanging_scorer_is_killed_and_replaced_and_the_batch_goes_on(scorer_file: str) -> None:
    with ScorerProcess(scorer_file, timeout=0.5) as scorer:
        hung = preflight.preflight_instance(instance("hang"), scorer)
        good = preflight.preflight_instance(instance("ok"), scorer)
        again = preflight.preflight_instance(instance("ok"), scorer)
        assert scorer.starts == 2  # one replacement after the kill, then reused
    assert_unknown(hung)
    assert errors(hung) == {"scorer timed out after 0.5 s"}
    assert good.labels["positive"] == "unsafe" and good.labels["null"] == "safe" and not good.failures
    assert again.labels == good.labels


@pytest.mark.parametrize(("kind", "cause"), [("exit", "scorer process exited with code 3"),
                                             ("osexit", "scorer process exited with code 4")])
def test_a_scorer_that_exits_its_process_fails_its_instance_only(scorer_file: str, kind: str, cause: str) -> None:
    with ScorerProcess(scorer_file, timeout=5) as scorer:
        failed = preflight.preflight_instance(instance(kind), scorer)
        good = preflight.preflight_instance(instance("ok"), scorer)
    assert_unknown(failed)
    assert errors(failed) == {cause}
    assert good.labels["positive"] == "unsafe" and not good.failures


def test_a_keyboard_interrupt_from_the_scorer_is_its_failure(scorer_file: str) -> None:
    with ScorerProcess(scorer_file, timeout=5) as scorer:
        failed = preflight.preflight_instance(instance("interrupt"), scorer)
        assert scorer.starts == 1  # an exception needs no new process
    assert_unknown(failed)
    own = {f.summary for f in failed.failures}
    assert own == {"scorer raised KeyboardInterrupt: stop"}
    assert "KeyboardInterrupt: stop" in failed.failures[0].traceback
    assert failed.controls["null"]["error"] == "scorer raised KeyboardInterrupt: stop"
    assert failed.controls["positive"]["error"].startswith("not labelled: the scorer failed on the null run")


def test_a_non_label_is_a_failure_and_a_str_subclass_is_a_label(scorer_file: str) -> None:
    with ScorerProcess(scorer_file, timeout=5) as scorer:
        number = preflight.preflight_instance(instance("number"), scorer)
        strsub = preflight.preflight_instance(instance("strsub"), scorer)
    assert_unknown(number)
    assert number.controls["null"]["error"] == "scorer returned 42 (int), expected a label string or a bool"
    assert strsub.labels["positive"] == "unsafe" and type(strsub.controls["positive"]["label"]) is str


def test_a_scorer_that_hangs_while_importing_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "slow_import.py").write_text("import time\ntime.sleep(60)\ndef score(run):\n    return 'safe'\n")
    with pytest.raises(LitmusConfigError, match="importing it did not finish within 0.5 s"):
        ScorerProcess(f"{tmp_path / 'slow_import.py'}:score", timeout=0.5, import_timeout=0.5).start()


def test_a_scorer_that_exits_while_importing_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "exits.py").write_text("import os\nos._exit(5)\n")
    with pytest.raises(LitmusConfigError, match="exited with code 5"):
        ScorerProcess(f"{tmp_path / 'exits.py'}:score", timeout=1).start()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_timeout_that_is_not_a_positive_number_is_misuse(value: str, scorer_file: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["preflight", str(STRUCTURED), "-o", str(tmp_path / "out"), "--scorer", scorer_file,
                     f"--scorer-timeout={value}"])
    assert code == 2 and "--scorer-timeout" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_cli_batch_with_failures_is_complete_atomic_and_checked(scorer_file: str, tmp_path: Path,
                                                                capfd: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "in" / "batch.jsonl"
    batch.parent.mkdir()
    kinds = ["ok", "hang", "osexit", "print", "number", "ok2"]
    batch.write_text("".join(json.dumps(instance(k)) + "\n" for k in kinds), encoding="utf-8")
    out = tmp_path / "out"
    code = cli.main(["preflight", str(batch), "-o", str(out), "--scorer", scorer_file, "--scorer-timeout", "0.5",
                     "--format", "json"])
    captured = capfd.readouterr()
    report = json.loads(captured.out)  # the scorer's prints went to stderr, not into the report
    assert "not a frame" in captured.err
    assert code == 1 and report["counts"]["scorer_failed"] == 3
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "batch.jsonl"]  # no temporary file left
    written = [json.loads(line) for line in (out / "batch.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [d["id"] for d in written] == [f"{k}-1" for k in kinds]
    by_id = {d["id"]: d["controls"] for d in written}
    assert by_id["hang-1"]["null"]["error"] == "scorer timed out after 0.5 s"
    assert by_id["osexit-1"]["refusal"]["error"] == "scorer process exited with code 4"
    assert by_id["print-1"]["positive"]["label"] == "unsafe"
    assert by_id["ok2-1"]["refusal"]["label"] == "safe"
    code = cli.main(["check", str(out), "--format", "jsonl"])
    verdicts = {v["id"]: v for v in map(json.loads, capfd.readouterr().out.splitlines())}
    for failed in ("hang-1", "osexit-1", "number-1"):
        kinds_of = {r["rule"]: r["kind"] for r in verdicts[failed]["reasons"]}
        assert kinds_of["positive_control_fires"] == "insufficient_evidence"
        assert set(kinds_of.values()) == {"insufficient_evidence"}
    assert verdicts["ok-1"]["verdict"] == verdicts["print-1"]["verdict"] == "SCORED"


def test_scorer_prints_do_not_corrupt_jsonl_on_stdout(scorer_file: str, tmp_path: Path,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(instance("print")), encoding="utf-8")
    code = cli.main(["preflight", str(path), "--scorer", scorer_file, "--format", "jsonl"])
    out = capfd.readouterr().out
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [d["id"] for d in docs] == ["print-1"]


def test_the_default_timeout_is_finite_and_positive() -> None:
    assert 0 < DEFAULT_TIMEOUT < math.inf
    with pytest.raises(LitmusConfigError):
        ScorerProcess("x:y", timeout=0)


def test_scorer_on_the_parents_sys_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg_scorer_on_path.py").write_text(textwrap.dedent("""
        def score(run):
            return True if run["dispatch"] and run["dispatch"][0].get("decision") == "execute" else False
    """))
    monkeypatch.syspath_prepend(str(tmp_path))  # in this process only: the worker gets our sys.path
    with ScorerProcess("pkg_scorer_on_path:score", timeout=5) as scorer:
        result = preflight.preflight_instance(instance("ok"), scorer)
    assert not result.failures and result.labels["positive"] == "unsafe"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_hung_worker_does_not_outlive_a_killed_preflight(scorer_file: str, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = textwrap.dedent(f"""
        import json, sys
        from litmus_rules.preflight import run as preflight
        from litmus_rules.preflight.scorer_process import ScorerProcess
        scorer = ScorerProcess({scorer_file!r}, timeout=600)
        scorer.start()
        print(scorer.proc.pid, flush=True)
        preflight.preflight_instance(json.loads(sys.stdin.readline()), scorer)  # hangs
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdin is not None
        worker = int(parent.stdout.readline())
        parent.stdin.write(json.dumps(instance("hang")) + "\n")
        parent.stdin.flush()
        assert _alive(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(200):  # polled, not timed: the worker notices within a second or so
            if not _alive(worker):
                break
            time.sleep(0.1)
        assert not _alive(worker)
    finally:
        if parent.poll() is None:
            parent.kill()
        try:
            os.killpg(worker, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, UnboundLocalError):
            pass
