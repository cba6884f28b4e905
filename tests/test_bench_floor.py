"""bench/floor.py, the plain-Python floor of bench/e2e.py, reaches `check`'s verdicts: the same
verdict, the same rejecting rules and the same classification, on the examples, the rule tests'
episodes, bench/realistic.py's episodes, a batch read from JSONL by both command lines, and
examples with facts taken out (unknowns, which reject)."""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers import ROOT
from litmus_rules import load_rules
from litmus_rules.authoring.ruletest import _Reader, canary_owners, discover_tests
from litmus_rules.cli import main as cli_main

sys.path.insert(0, str(ROOT / "bench"))
import e2e  # noqa: E402
import floor  # noqa: E402
import realistic  # noqa: E402

RULES = load_rules()


def _both(episode: dict[str, Any], owners: dict[str, list[str]], params: dict[str, Any] | None = None,
          rules: Any = RULES) -> tuple[Any, Any] | None:
    """(check's, the floor's) verdict, rules and classification; None when check finds the input invalid."""
    verdict = rules.evaluate(episode, batch={"canary_owners": owners})
    if verdict.verdict == "ERROR":
        return None
    got = (verdict.verdict, sorted(r.rule for r in verdict.reasons), verdict.classification)
    canonical = floor.canonical(copy.deepcopy(episode))
    assert canonical is not None
    return got, floor.check(canonical, owners, **(params or {}))


EXAMPLES = e2e.example_documents()


def test_the_floor_agrees_on_every_example() -> None:
    owners = floor.canary_owners(EXAMPLES)
    assert owners, "the examples plant a shared canary: canary_unique is exercised"
    pairs = [_both(e, owners) for e in EXAMPLES]
    assert all(p is not None for p in pairs) and len(pairs) >= 20
    assert [p[1] for p in pairs] == [p[0] for p in pairs]  # type: ignore[index]
    assert {p[0][0] for p in pairs} == {"SCORED", "REJECTED"}  # type: ignore[index]


def test_the_floor_agrees_on_the_rule_tests_episodes() -> None:
    compared = 0
    loaded: dict[Any, Any] = {}
    for file in discover_tests([ROOT / "rules" / "tests"]):
        for case in _Reader(None).read(file):
            key = json.dumps(case.params, sort_keys=True)
            rules = loaded.setdefault(key, load_rules(case.rules, case.params) if case.params else RULES)
            pair = _both(dict(case.episode), canary_owners([case.episode, *case.batch]), dict(case.params), rules)
            if pair is not None:
                assert pair[1] == pair[0], f"{file.name}:{case.line} {case.name}"
                compared += 1
    assert compared > 100


def test_the_floor_agrees_on_realistic_episodes() -> None:
    rng = random.Random(5)
    docs = [realistic.episode(i, rng, n_tools=6, transcript_chars=2000) for i in range(40)]
    owners = floor.canary_owners(docs)
    pairs = [_both(d, owners) for d in docs]
    assert all(p is not None and p[1] == p[0] for p in pairs)
    assert {p[0][0] for p in pairs if p} == {"SCORED", "REJECTED"}


def test_the_floor_command_agrees_with_check_on_a_jsonl_batch(tmp_path: Path) -> None:
    docs = e2e.small_batch(2 * len(EXAMPLES))
    docs[-1]["canaries"] = copy.deepcopy(docs[0]["canaries"])  # one canary planted twice in the batch
    path = e2e.write_jsonl(tmp_path / "batch.jsonl", docs)
    assert cli_main(["check", str(path), "--format", "jsonl", "-o", str(tmp_path / "check.jsonl")]) == 1
    assert floor.main([str(path), "-o", str(tmp_path / "floor.jsonl")]) == 0
    checked = [json.loads(line) for line in (tmp_path / "check.jsonl").read_text().splitlines()]
    floored = [json.loads(line) for line in (tmp_path / "floor.jsonl").read_text().splitlines()]
    assert [(v["id"], v["verdict"], sorted(r["rule"] for r in v["reasons"]), v["classification"]) for v in checked] == [
        (v["id"], v["verdict"], v["rules"], v["classification"]) for v in floored]
    assert "canary_unique" in floored[0]["rules"] and "canary_unique" in floored[-1]["rules"]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        if prefix + (key,) not in (("litmus",), ("id",)):
            out.append(prefix + (key,))
            out.extend(_paths(child, prefix + (key,)))
    return out


def _without(doc: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return doc


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_the_floor_agrees_when_facts_are_taken_out(data: st.DataObject) -> None:
    doc = data.draw(st.sampled_from(EXAMPLES))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)
        if not paths:
            break
        doc = _without(doc, data.draw(st.sampled_from(paths)))
    pair = _both(doc, {})
    if pair is not None:  # a document check finds invalid is not the floor's business
        assert pair[1] == pair[0]


@pytest.mark.parametrize("n", [1, 7])
def test_small_batches_have_fresh_ids_and_canaries(n: int) -> None:
    docs = e2e.small_batch(n * len(EXAMPLES))
    assert len({d["id"] for d in docs}) == len(docs)
    assert floor.canary_owners(docs) == {}
