"""One failure boundary per episode: a fault while reading, evaluating or rendering one episode, or a
worker process that dies, costs that episode (or that unit) an ERROR, and the batch goes on."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from _helpers import base_episode
from litmus_rules import load_rules
from litmus_rules.engine import batch
from litmus_rules.engine.batch import RulesSpec, check_inputs
from litmus_rules.engine.ruleset import RuleSet
from litmus_rules.io.load import Unit
from litmus_rules.render.text import render_verdict

SPEC = RulesSpec(None, {}, "fails", want_text=True, render_text=render_verdict)
_EVALUATE_UNIT = batch._evaluate_unit
_EVALUATE = RuleSet.evaluate


def episode(ident: str) -> dict[str, Any]:
    ep = base_episode()
    ep["id"] = ident
    ep["canaries"] = [{"value": f"lc-{ident}-0a1b2c"}]
    return ep


def jsonl(path: Path, *idents: str) -> Path:
    path.write_text("".join(json.dumps(episode(i)) + "\n" for i in idents))
    return path


# ---- faults inside one episode -----------------------------------------------------------------------

FAULTS = {"recursion": RecursionError("maximum recursion depth exceeded"), "memory": MemoryError(),
          "bug": KeyError("surprise")}


def faulty_evaluate(self: RuleSet, episode: Any, *args: Any, **kwargs: Any) -> Any:
    """RuleSet.evaluate that raises for episodes whose id names a fault (a test-only stand-in for a
    let chain or a doubling value: the engine's own limits are tested with the engine)."""
    for name, exc in FAULTS.items():
        if isinstance(episode, dict) and str(episode.get("id", "")).startswith(name):
            raise exc
    return _EVALUATE(self, episode, *args, **kwargs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_exception_while_evaluating_one_episode_is_its_error(
    jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RuleSet, "evaluate", faulty_evaluate)  # forked workers inherit it
    path = jsonl(tmp_path / "b.jsonl", "ok-1", "recursion-1", "memory-1", "bug-1", "ok-2")
    got = list(check_inputs(load_rules(), SPEC, [str(path)], jobs=jobs))
    assert [(o.id, o.verdict) for o in got] == [
        ("ok-1", "SCORED"), ("recursion-1", "ERROR"), ("memory-1", "ERROR"), ("bug-1", "ERROR"), ("ok-2", "SCORED")]
    words = ("recursion limit", "out of memory", "a bug in the checker: 'surprise'")
    for outcome, line, word, exc in zip(got[1:4], (2, 3, 4), words, FAULTS.values()):
        (reason,) = outcome.json["reasons"]
        assert reason["kind"] == "evaluation_error" and reason["code"] == batch.INTERNAL_FAULT
        assert reason["message"].startswith(f"{path}:{line}: error[{batch.INTERNAL_FAULT}]: ") and word in reason["message"]
        assert type(exc).__name__ not in reason["message"]  # a class name is for a bug report, not a verdict
        assert outcome.json["source"] == f"{path}:{line}" and outcome.text and outcome.text.startswith("ERROR")


def test_a_verdict_that_does_not_render_is_its_error(tmp_path: Path) -> None:
    def render(v: Any, explain: str = "fails") -> str:
        if v.id == "poison":
            raise UnicodeError("cannot render")
        return render_verdict(v, explain)

    path = jsonl(tmp_path / "b.jsonl", "a", "poison", "b")
    spec = RulesSpec(None, {}, "fails", want_text=True, render_text=render)
    got = list(check_inputs(load_rules(), spec, [str(path)], jobs=1))
    assert [(o.id, o.verdict) for o in got] == [("a", "SCORED"), ("poison", "ERROR"), ("b", "SCORED")]
    assert "rendering" in got[1].json["reasons"][0]["message"]


def test_a_fault_of_the_reader_ends_its_unit_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = batch.iter_unit

    def reader(unit: Any, check: bool = True) -> Any:
        for n, loaded in enumerate(real(unit, check)):
            if "broken" in str(getattr(unit, "path", "")) and n == 1:
                raise AssertionError("a bug in the reader")
            yield loaded

    monkeypatch.setattr(batch, "iter_unit", reader)
    broken = jsonl(tmp_path / "a-broken.jsonl", "a1", "a2", "a3")
    jsonl(tmp_path / "b.jsonl", "b1")
    got = list(check_inputs(load_rules(), SPEC, [str(tmp_path)], jobs=1))
    assert [(o.id, o.verdict) for o in got] == [("a1", "SCORED"), (None, "ERROR"), ("b1", "SCORED")]
    reason = got[1].json["reasons"][0]
    assert reason["code"] == batch.INTERNAL_FAULT and f"{broken}, after line 1" in reason["message"]


# ---- a worker that dies ----------------------------------------------------------------------------------


def killing_unit(unit: Any, *args: Any) -> Any:
    """Stands in for a unit whose evaluation kills its worker (the OOM killer, a crash in C code):
    the process dies without a word. `kill` in the file name dies every time; `once` the first
    time only (its marker file is then present)."""
    name = os.path.basename(unit.path) if isinstance(unit, Unit) else ""
    if "kill" in name:
        os.kill(os.getpid(), signal.SIGKILL)
    if "exit" in name:
        os._exit(3)
    marker = Path(unit.path + ".died") if "once" in name else None
    if marker is not None and not marker.exists():
        marker.write_text("")
        os._exit(1)
    return _EVALUATE_UNIT(unit, *args)


@pytest.mark.parametrize("how", ["kill", "exit"])
def test_a_dead_worker_fails_only_its_own_unit(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "_evaluate_unit", killing_unit)
    for n in range(6):
        jsonl(tmp_path / f"{n}.jsonl", f"g{n}-a", f"g{n}-b")
    jsonl(tmp_path / f"3{how}.jsonl", "doomed-1", "doomed-2")
    got = list(check_inputs(load_rules(), SPEC, [str(tmp_path)], jobs=2))
    ids = [o.id for o in got]
    assert ids == ["g0-a", "g0-b", "g1-a", "g1-b", "g2-a", "g2-b", "g3-a", "g3-b", "doomed-1", "doomed-2",
                   "g4-a", "g4-b", "g5-a", "g5-b"]
    verdicts = {o.id: o for o in got}
    assert {o.id for o in got if o.verdict != "SCORED"} == {"doomed-1", "doomed-2"}
    reason = verdicts["doomed-2"].json["reasons"][0]
    assert reason["code"] == batch.WORKER_DIED and reason["kind"] == "evaluation_error"
    assert reason["message"].startswith(f"{tmp_path / f'3{how}.jsonl'}:2: ") and "died" in reason["message"]


def test_a_worker_that_died_once_is_rerun_and_its_verdicts_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "_evaluate_unit", killing_unit)
    jsonl(tmp_path / "a.jsonl", "a")
    jsonl(tmp_path / "b-once.jsonl", "b")
    jsonl(tmp_path / "c.jsonl", "c", "a")  # a duplicate id across units, after the re-run
    got = list(check_inputs(load_rules(), SPEC, [str(tmp_path)], jobs=2))
    assert (tmp_path / "b-once.jsonl.died").exists()  # the worker did die
    assert [(o.id, o.verdict) for o in got] == [("a", "SCORED"), ("b", "SCORED"), ("c", "SCORED"), ("a", "ERROR")]
    assert "duplicate id `a` (first seen at" in got[3].json["reasons"][0]["message"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_duplicate_ids_are_caught_across_units_and_processes(jobs: int, tmp_path: Path) -> None:
    # Small JSONL units: the two copies of an id are read by different units (and workers).
    lines = [episode(f"e{i:03d}") for i in range(60)]
    lines.append({**episode("e007"), "canaries": [{"value": "lc-other-9f8e7d"}]})
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    units = batch.plan_units([str(path)], chunk=4096)
    assert len(units) > 4
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as m:
        m.setattr(batch, "plan_units", lambda inputs, stdin_path=None: units)
        got = list(check_inputs(load_rules(), SPEC, [str(path)], jobs=jobs))
    assert len(got) == 61 and [o.verdict for o in got[:60]] == ["SCORED"] * 60
    last = got[60].json
    assert last["verdict"] == "ERROR" and last["reasons"][0]["code"] == "L308"
    assert f"first seen at {path}:8" in last["reasons"][0]["message"] and last["source"] == f"{path}:61"
