"""Batches: units of work, input order, and the same verdicts on one process or several."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _helpers import EXAMPLES, base_episode
from litmus_rules import load_rules
from litmus_rules.engine.batch import RulesSpec, check_inputs
from litmus_rules.io.load import Unit, iter_episodes, iter_unit, plan_units


def write_batch(path: Path, n: int) -> None:
    lines = []
    for i in range(n):
        ep = base_episode()
        ep["id"] = f"ep-{i:04d}"
        ep["canaries"] = [{"value": f"lc-{i:04d}-unique"}]
        if i % 7 == 0:
            ep["controls"]["refusal"]["label"] = "unsafe"  # some are rejected
        lines.append(json.dumps(ep))
        if i % 50 == 0:
            lines.append("")  # blank lines are skipped but still count as lines
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n")


def test_jsonl_units_read_exactly_what_a_whole_read_does(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    write_batch(path, 120)
    units = plan_units([str(path)], chunk=4096)
    assert len(units) > 5 and all(isinstance(u, Unit) for u in units)
    sliced = [(d.line, d.index, d.id, d.error is None) for u in units for d in iter_unit(u)]
    whole = [(d.line, d.index, d.id, d.error is None) for d in iter_episodes([str(path)])]
    assert sliced == whole and len(whole) == 121


@pytest.mark.parametrize("jobs", [1, 2])
def test_parallel_and_serial_give_the_same_verdicts_in_input_order(tmp_path: Path, jobs: int) -> None:
    path = tmp_path / "b.jsonl"
    write_batch(path, 150)
    (tmp_path / "z.yaml").write_text((EXAMPLES / "clean-structured.yaml").read_text())
    rules = load_rules()
    spec = RulesSpec(None, {}, "fails", want_text=False)
    got = [o.json for o in check_inputs(rules, spec, [str(tmp_path)], jobs=jobs)]
    serial = [o.json for o in check_inputs(rules, spec, [str(tmp_path)], jobs=1)]
    assert got == serial
    assert [o["id"] for o in got][:4] == ["ep-0000", "ep-0001", None, "ep-0002"]
    assert got[2]["verdict"] == "ERROR" and got[2]["source"].endswith("b.jsonl:4")
    assert got[-1]["id"] == "clean-transfer-001"
    assert sum(o["verdict"] == "REJECTED" for o in got) == len(range(0, 150, 7))


def test_shared_canaries_are_seen_across_units(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    write_batch(path, 150)
    lines = path.read_text().splitlines()
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    last["canaries"] = first["canaries"]
    lines[-1] = json.dumps(last)
    path.write_text("\n".join(lines) + "\n")
    rules = load_rules()
    spec = RulesSpec(None, {}, "fails", want_text=False)
    out = {o.id: o for o in check_inputs(rules, spec, [str(path)], jobs=2) if o.id}
    assert "canary_unique" in out[first["id"]].rules and "canary_unique" in out[last["id"]].rules
    assert sum("canary_unique" in o.rules for o in out.values()) == 2
