"""A `where` name in a trace: one bound to a fact path reads as that path (the element the loop
variable stands for, then the fields: `context.tools[1].input_schema.properties.tag.type`, never
with an invented `[?]` index for the name); one with a computed value shows its name and
definition (`where l = len(d)`) and claims no fact path (lang/trace.py, render/text.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import base_episode
from litmus_rules import load_rules

RULES = '''ruleset where_paths version "1"

rule upload_tool
  "An upload tool whose schema asks for a tag."
  reject when any t in context.tools where d = t.description, s = t.input_schema, p = s.properties, l = len(d):
    "Uploads" in d and l > 3 and p.tag.type == "string"
  because "tool {t.name}: {d!r}"
'''


def tool(n: int, upload: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {"path": {"type": "string"}}
    if upload:
        properties["tag"] = {"type": "string"}
    return {"name": f"tool_{n}", "description": "Uploads a report." if upload else "Reads a file.",
            "input_schema": {"type": "object", "properties": properties}}


def episode(count: int, at: int) -> dict[str, Any]:
    ep = base_episode()
    ep["id"] = "where-paths"
    ep["context"]["tools"] = [tool(n, n == at) for n in range(count)]
    return ep


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("where-rules")
    (folder / "where.litmus").write_text(RULES, encoding="utf-8")
    return folder


def nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children", ()):
        yield from nodes(child)


def condition(rules_dir: Path, count: int, at: int) -> dict[str, Any]:
    verdict = load_rules(rules_dir).evaluate(episode(count, at))
    (reason,) = [r for r in verdict.reasons if r.rule == "upload_tool"]
    assert reason.trace is not None and reason.trace.root is not None
    as_json = reason.trace.to_json()["condition"]
    assert as_json == reason.trace.root.to_json()  # the JSON and the tree the text is drawn from agree
    return as_json


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6).flatmap(lambda count: st.tuples(st.just(count), st.integers(0, count - 1))))
def test_a_where_name_bound_to_a_fact_path_reads_as_that_path(rules_dir: Path, shape: tuple[int, int]) -> None:
    count, at = shape
    found = list(nodes(condition(rules_dir, count, at)))
    reads = {n["expr"]: n.get("reads") for n in found if n.get("evaluated")}
    tool_path = f"context.tools[{at}]"
    assert reads["d"] == f"{tool_path}.description"
    assert reads["s.properties"] == f"{tool_path}.input_schema.properties"  # a name bound to a name bound to a path
    assert reads["p.tag.type"] == f"{tool_path}.input_schema.properties.tag.type"
    assert not any("[?]" in (n.get("reads") or "") for n in found)


def test_a_computed_where_name_shows_its_definition_and_no_path(rules_dir: Path) -> None:
    found = list(nodes(condition(rules_dir, 3, 2)))
    (l_node,) = [n for n in found if n["expr"] == "l"]
    assert l_node["where"] == "l = len(d)" and l_node["value"] == len("Uploads a report.") and "reads" not in l_node
    assert all("where" not in n for n in found if n is not l_node)  # the path-bound names are no `where`


def test_explain_shows_the_fact_path_and_the_definition(rules_dir: Path) -> None:
    path = rules_dir.parent / "where-episode.json"
    path.write_text(json.dumps(episode(3, 1)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "litmus_rules", "explain", "--rules", str(rules_dir), str(path),
                           "--id", "where-paths"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr  # REJECTED
    lines = done.stdout.splitlines()
    shown = {line.split("|")[-1].strip().split("  = ")[0]: line for line in lines if "|" in line}
    assert shown["p.tag.type"].endswith("(context.tools[1].input_schema.properties.tag.type)")
    assert shown["d"].endswith("(context.tools[1].description)")
    assert shown["l"].endswith("(where l = len(d))")
    assert "[?]" not in done.stdout
