"""Flat memory (issue 13 item 4): units of work capped by documents and bytes, one episode at a time
in one process, and `--format json` / text written without holding every verdict."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from _helpers import base_episode
from litmus_rules import load_rules
from litmus_rules.cli import check as check_cli
from litmus_rules.cli import main as cli_main
from litmus_rules.engine.batch import RulesSpec, check_inputs
from litmus_rules.engine.ruleset import RuleSet
from litmus_rules.io.inputs import UNIT_DOCS
from litmus_rules.io.load import Unit, iter_episodes, iter_unit, plan_units
from litmus_rules.render.json import render_json
from litmus_rules.render.report.summary import Summary

SPEC = RulesSpec(None, {}, "fails", want_text=False)


def _batch(path: Path, n: int, blank_every: int = 0) -> Path:
    lines = []
    for i in range(n):
        ep = base_episode()
        ep["id"] = f"m-{i:04d}"
        ep["canaries"] = [{"value": f"lc-{i:04d}-flat"}]
        lines.append(json.dumps(ep))
        if blank_every and i % blank_every == 0:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("max_docs", "chunk"), [(1, 2**20), (7, 2**20), (32, 4096), (1000, 4096)])
def test_units_hold_at_most_max_docs_and_about_chunk_bytes(tmp_path: Path, max_docs: int, chunk: int) -> None:
    path = _batch(tmp_path / "b.jsonl", 90, blank_every=11)
    longest = max(len(line) + 1 for line in path.read_bytes().split(b"\n"))
    units = plan_units([str(path)], chunk=chunk, max_docs=max_docs)
    assert all(isinstance(u, Unit) for u in units)
    per_unit = [[(d.line, d.index, d.id) for d in iter_unit(u)] for u in units]
    assert all(len(docs) <= max_docs for docs in per_unit)
    assert all(u.stop is None or u.stop - u.start <= chunk + longest for u in units)  # type: ignore[union-attr]
    whole = [(d.line, d.index, d.id) for d in iter_episodes([str(path)])]
    assert [doc for docs in per_unit for doc in docs] == whole and len(whole) == 90


def test_the_default_units_of_a_large_batch_are_small(tmp_path: Path) -> None:
    path = _batch(tmp_path / "b.jsonl", 200)
    units = plan_units([str(path)])
    assert len(units) > 1
    assert max(sum(1 for _ in iter_unit(u)) for u in units) <= UNIT_DOCS


def test_one_process_decides_one_episode_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _batch(tmp_path / "b.jsonl", 120)
    decided = []
    evaluate = RuleSet.evaluate

    def counting(self: RuleSet, episode: Any, **kw: Any) -> Any:
        decided.append(episode["id"])
        return evaluate(self, episode, **kw)

    monkeypatch.setattr(RuleSet, "evaluate", counting)
    outcomes = check_inputs(load_rules(), SPEC, [str(path)], jobs=1)
    try:
        for i in range(5):
            outcome = next(outcomes)
            assert outcome.id == f"m-{i:04d}"
            assert len(decided) == i + 1  # nothing of the batch is decided ahead of its writing
    finally:
        outcomes.close()


def test_json_output_is_written_verdict_by_verdict(tmp_path: Path) -> None:
    rules = load_rules()
    outcomes = list(check_inputs(rules, SPEC, [str(_batch(tmp_path / "b.jsonl", 6))], jobs=1))
    consumed = []

    def source() -> Iterator[Any]:
        for outcome in outcomes:
            consumed.append(outcome)
            yield outcome

    chunks = check_cli._json_document(source(), Summary(), lambda: {"extra": 1})
    first = [next(chunks), next(chunks)]  # the opening, then the first verdict
    assert len(consumed) == 1
    streamed = json.loads("".join([*first, *chunks]))
    assert len(consumed) == len(outcomes)
    counted = Summary()
    for o in outcomes:
        counted.add(o.json)
    whole = json.loads(render_json([o.json for o in outcomes], {**counted.to_json(), "extra": 1}))
    assert streamed == whole


@pytest.mark.parametrize("n", [0, 1, 3])
def test_the_streamed_json_document_is_render_json_with_the_summary_last(n: int, tmp_path: Path) -> None:
    rules = load_rules()
    outcomes = list(check_inputs(rules, SPEC, [str(_batch(tmp_path / "b.jsonl", max(n, 1)))], jobs=1))[:n]
    text = "".join(check_cli._json_document(iter(outcomes), Summary(), lambda: {}))
    counted = Summary()
    for o in outcomes:
        counted.add(o.json)
    expected = render_json([o.json for o in outcomes], counted.to_json())
    doc = json.loads(text)
    assert list(doc) == ["verdicts", "summary"] and doc == json.loads(expected)
    # the same indentation as the whole document: the same lines but for the summary's move
    assert len(text) == len(expected)


def test_text_traces_wait_on_disk_and_come_back_whole(tmp_path: Path) -> None:
    texts = ["plain", "two\nlines\n", "", "a lone surrogate \ud800 and 12\n34", "é" * 1000]
    with check_cli._Spool(str(tmp_path)) as spool:
        for t in texts:
            spool.add(t)
        assert list(spool) == texts
        assert list(spool) == texts  # read again from the start


def test_check_json_and_text_outputs_keep_every_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _batch(tmp_path / "b.jsonl", 40)
    lines = path.read_text().splitlines()
    bad = copy.deepcopy(json.loads(lines[3]))
    bad["controls"]["refusal"]["label"] = bad["controls"]["compliance"]["label"]  # one REJECTED
    lines[3] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    assert cli_main(["check", str(path), "--format", "json", "-o", str(tmp_path / "out.json")]) == 1
    doc = json.loads((tmp_path / "out.json").read_text())
    assert [v["id"] for v in doc["verdicts"]] == [f"m-{i:04d}" for i in range(40)]
    assert doc["summary"]["episodes"] == 40 and doc["summary"]["REJECTED"] == 1
    assert cli_main(["check", str(path), "-o", str(tmp_path / "out.txt")]) == 1
    text = (tmp_path / "out.txt").read_text()
    assert text.startswith("ruleset ") and "40 episode(s): 39 SCORED, 1 REJECTED, 0 ERROR" in text
    table, trace = text.index("m-0039"), text.rindex("m-0003")  # the summary first, then the one trace
    assert table < trace and "counterfactual_stubs" in text[trace:]
