"""The harness's own verdict on the agent run (episode/1.1 `episode.label` / `fired`): carried into
the verdict as `harness`, and set by the report beside the validated number."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from _helpers import CORPUS
from litmus_rules import load_rules, read_episodes
from litmus_rules.io import wire
from litmus_rules.io.importers import read
from litmus_rules.render.report.compute import build_report

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
INJECAGENT = CORPUS / "injecagent"


@pytest.fixture(scope="module")
def rules() -> Any:
    return load_rules()


def upgraded(**run: Any) -> dict[str, Any]:
    [loaded] = read_episodes([str(EXAMPLES / "clean-structured.yaml")])
    doc = wire.upgrade(loaded.data)
    doc["episode"] = {**doc.get("episode", {}), **run}
    return doc


@pytest.mark.parametrize(("run", "expected"), [
    ({"label": "unsafe"}, {"label": "unsafe", "fired": True}),
    ({"label": "safe"}, {"label": "safe", "fired": False}),
    ({"label": "unsafe", "fired": False}, {"label": "unsafe", "fired": False}),  # as recorded
    ({"fired": True}, {"label": None, "fired": True}),
])
def test_the_verdict_carries_the_harness_s_own_verdict(rules: Any, run: dict[str, Any], expected: dict[str, Any]) -> None:
    doc = upgraded(**run)
    assert "unsafe" in doc["detector"]["positive_labels"]
    assert rules.evaluate(doc).to_json()["harness"] == expected


def test_an_invalid_label_is_no_verdict(rules: Any) -> None:
    doc = upgraded(label="garbled")
    doc["detector"]["invalid_labels"] = ["garbled"]
    assert rules.evaluate(doc).to_json()["harness"] == {"label": "garbled", "fired": None}


def test_no_label_no_key_and_the_same_verdict(rules: Any) -> None:
    doc = upgraded()
    plain = rules.evaluate(doc).to_json()
    assert "harness" not in plain
    labelled = rules.evaluate(upgraded(label="unsafe")).to_json()
    assert {k: v for k, v in labelled.items() if k != "harness"} == plain  # never read by the rules


def verdict(state: str, fired: bool | None, model: str) -> dict[str, Any]:
    return {"id": f"{state}-{fired}-{model}", "verdict": state, "reasons": [], "classification": None,
            "run": {"model": model}, "harness": {"label": None, "fired": fired}}


def test_the_report_sets_the_naive_rate_beside_the_validated_one() -> None:
    batch = ([verdict("SCORED", True, "a")] * 2 + [verdict("SCORED", False, "a")] * 6
             + [verdict("REJECTED", True, "a")] * 7 + [verdict("REJECTED", False, "a")]
             + [verdict("REJECTED", True, "b")] * 3 + [verdict("SCORED", None, "b")])
    report = build_report(batch, by=("run.model",))
    rows = {g["label"]: g for g in report["harness"]["groups"]}
    # independent counts: attacked over every labelled episode, and over the SCORED ones
    assert (rows["all"]["naive"]["k"], rows["all"]["naive"]["n"]) == (12, 19)
    assert (rows["all"]["validated"]["k"], rows["all"]["validated"]["n"]) == (2, 8)
    assert (rows["model=a"]["naive"]["k"], rows["model=a"]["naive"]["n"]) == (9, 16)
    assert rows["model=b"]["validated"]["n"] == 0 and rows["model=b"]["validated"]["rate"] is None
    assert rows["model=b"]["unknown"] == 1 and rows["all"]["rejected"] == 11


def test_without_harness_verdicts_the_section_says_so() -> None:
    assert build_report([verdict("SCORED", None, "a") | {"harness": None}])["harness"]["available"] is False


@pytest.mark.skipif(not INJECAGENT.is_dir(), reason="../shared/corpus is absent")
def test_injecagent_transcripts_naive_rate_beside_all_rejected(rules: Any) -> None:
    # The note's point on real data: InjecAgent's own scorer reports an attack-success rate on
    # instances that litmus_rules rejects, every one of them: the number measures the harness.
    results = INJECAGENT / "results" / "BASE" / "Llama-3-70b-chat-hf" / "test_cases_dh_base.json"
    episodes = itertools.islice(read("injecagent", results, tools=str(INJECAGENT / "data" / "tools.json")), 120)
    verdicts = [rules.evaluate(e).to_json(with_traces=False) for e in episodes]
    report = build_report(verdicts, by=("run.detector",))
    prompted = next(g for g in report["harness"]["groups"] if g["label"] == "detector=prompted")
    assert prompted["naive"]["n"] > 0 and prompted["naive"]["rate"] is not None
    assert prompted["validated"]["n"] == 0 and prompted["rejected"] == prompted["naive"]["n"]
