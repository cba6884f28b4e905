"""`check --engine dask` on a LocalCluster (2 worker processes, one cluster for the module): the
same bytes and exit status as the local engine, canaries shared across units found by the group-by
on the workers, a worker that dies, an unreachable scheduler, and cancelling."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

distributed = pytest.importorskip("distributed")  # the `dask` extra; CI installs it (.ci/run)

import cloudpickle  # noqa: E402 -- a dependency of distributed

from litmus_rules import load_rules  # noqa: E402
from litmus_rules.cli import main  # noqa: E402
from litmus_rules.engine import batch  # noqa: E402
from litmus_rules.engine import distributed as engine  # noqa: E402
from litmus_rules.engine.batch import RulesSpec, check_inputs  # noqa: E402
from litmus_rules.io.load import iter_episodes  # noqa: E402
from litmus_rules.render.text import render_verdict  # noqa: E402

import report12_batch  # noqa: E402
from _helpers import base_episode  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SPEC = RulesSpec(None, {}, "fails", True, render_verdict, True)

# the worker-killing task below travels by value: the workers cannot import this test module
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with engine.local_cluster(2) as cluster, distributed.Client(cluster) as c:
        yield c


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def both(inputs: list[str], client: Any, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[Any, Any]:
    """(exit, stdout) of the local engine (one process) and of the dask engine on the cluster."""
    local = run(["check", *inputs, *options, "--jobs", "1"], capsys)
    dask = run(["check", *inputs, *options, "--engine", "dask", "--scheduler", client.scheduler.address], capsys)
    assert "litmus-rules: dask: 2 workers" in dask[2]  # the one line about the cluster, on stderr
    return local[:2], dask[:2]


def test_the_examples_give_the_same_bytes_and_exit_status(client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    local, dask = both([str(EXAMPLES)], client, capsys, "--format", "jsonl")
    assert local[0] == 1 and local[1]  # the examples have rejections
    assert dask == local


def mixed_batch(folder: Path, files: int) -> set[str]:
    """The report tests' generated batch (two models, three attacks, contamination), spread over
    `files` JSONL files, with canaries shared between episodes of different files, a duplicate id
    in a later file and a line that is not JSON."""
    docs = [report12_batch.episode(p) for p in report12_batch.plan(seed=16, per_cell=6)]
    sharing = set()
    for i in range(0, len(docs) - 5, 5):  # episode i plants the canary of episode i+4 (another file)
        docs[i]["canaries"].append(dict(docs[i + 4]["canaries"][0]))
        sharing |= {docs[i]["id"], docs[i + 4]["id"]}
    docs.append(dict(docs[3]))  # a duplicate id, far from the first
    folder.mkdir()
    for f in range(files):
        lines = [json.dumps(d) for d in docs[f::files]]
        if f == 2:
            lines.insert(1, "{not json")
        (folder / f"part-{f:02d}.jsonl").write_text("\n".join(lines) + "\n")
    return sharing


def test_a_generated_batch_with_canaries_shared_across_units_gives_the_same_bytes(
    tmp_path: Path, client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    sharing = mixed_batch(tmp_path / "batch", files=19)  # more units than the group-by merges at once: a tree
    local, dask = both([str(tmp_path / "batch")], client, capsys, "--format", "text")  # the summary, the traces
    assert dask == local and local[0] == 2
    local = run(["check", str(tmp_path / "batch"), "--format", "jsonl", "--jobs", "1"], capsys)
    verdicts = [json.loads(line) for line in local[1].splitlines()]
    shared = {v["id"] for v in verdicts if any(r["rule"] == "canary_unique" for r in v["reasons"])}
    assert shared == sharing  # the planted pairs, both sides, found across files
    assert sum("duplicate id" in r["message"] for v in verdicts for r in v["reasons"]) == 1
    unordered = run(["check", str(tmp_path / "batch"), "--format", "jsonl", "--engine", "dask",
                     "--scheduler", client.scheduler.address, "--unordered"], capsys)
    assert unordered[0] == local[0]
    assert sorted(unordered[1].splitlines()) == sorted(local[1].splitlines())


def test_the_group_by_finds_a_value_with_one_owner_in_each_bucket_tree_branch(tmp_path: Path, client: Any) -> None:
    # 20 units of one episode each; the first and the last plant the same canary: they meet only
    # at the root of the merge tree (FAN_IN units per leaf merge)
    assert engine.FAN_IN < 19
    for i in range(20):
        canaries = [{"value": f"own-{i}"}] + ([{"value": "the-shared-one"}] if i in (0, 19) else [])
        (tmp_path / f"u{i:02d}.jsonl").write_text(json.dumps({"id": f"e{i}", "canaries": canaries}) + "\n")
    units = engine.plan_units([str(tmp_path)])
    for buckets in (1, 3):
        assert engine.shared_canaries(client, units, f"t{buckets}", buckets) == {"the-shared-one": ["e0", "e19"]}


def test_evaluate_batch_on_the_cluster_gives_the_local_verdicts_in_order(client: Any) -> None:
    rules = load_rules()
    episodes = [loaded.data for loaded in iter_episodes([str(EXAMPLES / "leaks"), str(EXAMPLES / "clean-structured.yaml")])
                if loaded.data is not None]  # the shared-canary pair among them
    local = rules.evaluate_batch(episodes, explain="full")
    dask = rules.evaluate_batch(episodes, explain="full", engine="dask", scheduler=client)
    assert [json.dumps(v.to_json(), default=str) for v in dask] == [json.dumps(v.to_json(), default=str) for v in local]


def test_preflight_on_the_cluster_writes_the_same_files_and_report(tmp_path: Path, client: Any,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    reports = {}
    for engine_name, extra in (("local", []), ("dask", ["--engine", "dask", "--scheduler", client.scheduler.address])):
        code, out, _ = run(["preflight", str(EXAMPLES), "-o", str(tmp_path / engine_name), "--format", "json", *extra],
                           capsys)
        report = json.loads(out)
        for entry in [report, *report["files"], *report["instances"]]:
            entry.pop("output", None), entry.pop("seconds", None)  # where it was written, how long it took
        reports[engine_name] = (code, report)
    assert reports["dask"] == reports["local"]
    written = {p.relative_to(tmp_path / "local"): p.read_bytes() for p in (tmp_path / "local").rglob("*") if p.is_file()}
    assert written and written == {
        p.relative_to(tmp_path / "dask"): p.read_bytes() for p in (tmp_path / "dask").rglob("*") if p.is_file()}


def test_an_unreachable_scheduler_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", 0.5)
    code, out, err = run(["check", str(EXAMPLES), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler at `tcp://127.0.0.1:9`" in lines[0]


def test_closing_the_run_early_cancels_the_cluster_work(tmp_path: Path, client: Any) -> None:
    for i in range(12):
        (tmp_path / f"{i:02d}.jsonl").write_text(episode_line(f"e{i}"))
    run = engine.check_inputs_dask(load_rules(), SPEC, [str(tmp_path)], scheduler=client, window=6, task=slow_unit)
    assert next(run).id == "e0"
    run.close()  # what Ctrl-C does to the generator (cli/_common.stoppable raises into it)

    def left(dask_scheduler: Any) -> list[str]:
        return [str(k) for k in dask_scheduler.tasks if "litmus-evaluate" in str(k)]

    for _ in range(100):  # the scheduler forgets cancelled tasks shortly after
        if not client.run_on_scheduler(left):
            break
        time.sleep(0.1)
    assert client.run_on_scheduler(left) == []


def episode_line(ident: str) -> str:
    doc = base_episode()
    doc["id"], doc["canaries"] = ident, [{"value": f"lc-{ident}"}]
    return json.dumps(doc) + "\n"


def slow_unit(unit: Any, *args: Any) -> Any:
    time.sleep(0.5)
    return engine._evaluate_task(unit, *args)


def killing_unit(unit: Any, *args: Any) -> Any:
    """A unit whose evaluation kills its worker: `kill` in the file name every time, `once` the
    first time only (its marker file then exists)."""
    name = os.path.basename(getattr(unit, "path", ""))
    if "kill" in name:
        os._exit(3)
    marker = Path(unit.path + ".died") if "once" in name else None
    if marker is not None and not marker.exists():
        marker.write_text("")
        os._exit(1)
    return engine._evaluate_task(unit, *args)


# last: it kills workers (the nanny starts new ones)
def test_a_worker_that_dies_fails_only_its_unit_and_one_that_died_once_is_rerun(tmp_path: Path, client: Any) -> None:
    rules = load_rules()
    killing = tmp_path / "killing"
    killing.mkdir()
    for n in range(4):
        (killing / f"{n}.jsonl").write_text(episode_line(f"g{n}-a") + episode_line(f"g{n}-b"))
    (killing / "2kill.jsonl").write_text(episode_line("doomed-1") + episode_line("doomed-2"))
    got = list(engine.check_inputs_dask(rules, SPEC, [str(killing)], scheduler=client, task=killing_unit))
    want = list(check_inputs(rules, SPEC, [str(killing)], jobs=1))
    assert [o.id for o in got] == [o.id for o in want]
    assert {g.id for g, w in zip(got, want) if g != w} == {"doomed-1", "doomed-2"}
    reason = next(o for o in got if o.id == "doomed-2").json["reasons"][0]
    assert reason["code"] == batch.WORKER_DIED and reason["kind"] == "evaluation_error"
    assert reason["message"].startswith(f"{killing / '2kill.jsonl'}:2: ")

    once = tmp_path / "once"  # no other unit kills here: this one's first run is its first attempt
    once.mkdir()
    (once / "a.jsonl").write_text(episode_line("a"))
    (once / "b-once.jsonl").write_text(episode_line("b"))
    (once / "c.jsonl").write_text(episode_line("c") + episode_line("a"))  # a duplicate id, after the re-run
    got = list(engine.check_inputs_dask(rules, SPEC, [str(once)], scheduler=client, task=killing_unit))
    assert (once / "b-once.jsonl.died").exists()  # that worker did die
    assert got == list(check_inputs(rules, SPEC, [str(once)], jobs=1))
    assert [(o.id, o.verdict) for o in got] == [("a", "SCORED"), ("b", "SCORED"), ("c", "SCORED"), ("a", "ERROR")]
