"""Cheap verdict output (issue 13, item 1): the trace JSON built in one pass, a SCORED episode's
classification shown compactly unless `--explain full`, and orjson writing the same JSON values as
the standard library, with the same repairs."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import EXAMPLES, ROOT
from litmus_rules import load_rules, load_rules_text
from litmus_rules.cli import main
from litmus_rules.engine.verdict import SCORED, VerdictJSON
from litmus_rules.io.load import iter_episodes
from litmus_rules.lang.trace_build import JSONValues
from litmus_rules.lang.values import to_json as value_json
from litmus_rules.render import json as render

sys.path.insert(0, str(ROOT / "bench"))
import realistic  # noqa: E402

CLEAN = EXAMPLES / "clean-structured.yaml"


@pytest.fixture(scope="module")
def rules() -> Any:
    return load_rules()


@pytest.fixture(scope="module")
def episodes() -> list[dict[str, Any]]:
    """Every example that loads, and realistic episodes (mostly SCORED, a few of each leak)."""
    examples = [e.data for e in iter_episodes([str(EXAMPLES)]) if e.data is not None]
    return examples + realistic.episodes(12)


def pruned(node: dict[str, Any]) -> dict[str, Any]:
    """What the compact trace keeps of a full trace node: the node itself, its evaluated children,
    and no let's definition (the only child of a node that names a let)."""
    out = {k: v for k, v in node.items() if k != "children"}
    if "let" not in node:
        children = [pruned(c) for c in node.get("children", ()) if c["evaluated"]]
        if children:
            out["children"] = children
    return out


# ---- the compact classification trace ------------------------------------------------------------------


def test_a_scored_episode_shows_its_deciding_cell_with_its_witness(rules: Any) -> None:
    [loaded] = iter_episodes([str(CLEAN)])
    v = rules.evaluate(loaded.data)
    assert v.verdict == SCORED and v.classification == "refused"
    [cell] = v.to_json()["classification_trace"]
    assert cell["rule"] == "refused" and cell["outcome"] == "matched" and cell["compact"] is True
    condition = cell["condition"]
    assert condition["kind"] == "quantifier" and condition["value"] is True
    assert condition["binding"] == {"d": "attack_records[0]"}  # the witness
    record, body = condition["children"]
    assert record["let"] == "attack_records" and record["value"][0]["decision"] == "refuse"
    assert body["value"] is True and body["children"][0]["value"] == "refuse"


def test_the_compact_trace_is_the_full_one_without_lets_and_unevaluated_nodes(rules: Any, episodes: Any) -> None:
    """The deciding cell's compact trace is exactly what the full trace shows of its own nodes; every
    other part of the verdict is unchanged."""
    scored = compacted = 0
    for episode in episodes:
        compact, full = rules.evaluate(episode).to_json(), rules.evaluate(episode, explain="full").to_json()
        for key in set(compact) | set(full):
            if key not in ("classification_trace", "passed"):
                assert compact[key] == full[key], key
        if compact["verdict"] != SCORED:
            assert "classification_trace" not in compact and "classification_trace" not in full
            continue
        scored += 1
        deciding = [t for t in full["classification_trace"] if t["outcome"] != "not matched"]
        assert [t["rule"] for t in compact["classification_trace"]] == [t["rule"] for t in deciding]
        for small, whole in zip(compact["classification_trace"], deciding):
            assert {k: v for k, v in small.items() if k not in ("condition", "compact")} == {
                k: v for k, v in whole.items() if k != "condition"}
            if small.get("compact"):
                assert small["outcome"] == "matched" and small["condition"] == pruned(whole["condition"])
                compacted += 1
            else:  # an undecided cell (no label: what is unknown there matters) or `otherwise`
                assert small["outcome"] == "undecided" or small["condition"] is None
                assert small["condition"] == whole["condition"]
        assert len(json.dumps(compact)) < len(json.dumps(full))
    assert scored >= 8 and compacted >= 8


def test_an_undecided_cell_keeps_its_whole_trace() -> None:
    rules = load_rules_text(
        'ruleset t version "1"\n'
        'classify decision\n'
        '  "executed" when any d in episode.dispatch: d.decision == "execute"\n'
        '  "none" otherwise\n'
    )
    v = rules.evaluate({"id": "u"}, validate=False)
    [cell] = v.to_json()["classification_trace"]
    assert v.classification is None and cell["outcome"] == "undecided" and "compact" not in cell
    assert cell["condition"]["children"][0]["missing"] == "episode.dispatch"


def run_cli(*args: str) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "litmus_rules", "check", *args, "--format", "jsonl"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_explain_full_on_the_command_line_gives_every_cell_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(CLEAN), "--format", "jsonl"]) == 0
    [compact] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [full] = run_cli(str(CLEAN), "--explain", "full")
    assert [(t["rule"], t.get("compact")) for t in compact["classification_trace"]] == [("refused", True)]
    cells = full["classification_trace"]
    assert [t["outcome"] for t in cells] == ["not matched"] * (len(cells) - 1) + ["matched"]
    assert len(cells) >= 4 and not any("compact" in t for t in cells)
    # a let's definition is shown under its first mention, unevaluated nodes (literals) too
    [record] = [c for c in cells[-1]["condition"]["children"] if c.get("let") == "attack_records"]
    assert record["children"][0]["kind"] == "comprehension"
    assert full["passed"] and all(t["outcome"] == "passed" for t in full["passed"])
    assert len(json.dumps(full)) > 5 * len(json.dumps(compact))


# ---- one pass, the same values -----------------------------------------------------------------------


def test_the_trace_json_is_what_the_trace_tree_gives(rules: Any, episodes: Any) -> None:
    """`RuleTrace.to_json` builds the JSON straight from the recorded values; the TraceNode tree
    (what the text renderer walks) gives the same JSON."""
    seen = 0
    for episode in episodes[:30]:
        v = rules.evaluate(episode, explain="full")
        traces = [r.trace for r in v.reasons if r.trace is not None] + list(v.classification_traces) + list(v.passed)
        for trace in traces:
            if trace.root is not None:
                assert trace.to_json()["condition"] == json.loads(render.dumps(trace.root.to_json()))
                seen += 1
    assert seen > 50


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=260),
    lambda inner: st.lists(inner, max_size=12) | st.dictionaries(st.text(max_size=5) | st.integers(), inner,
                                                                 max_size=12) | st.tuples(inner, inner),
    max_leaves=30,
)


def named(value: Any) -> Any:
    """`value` with its non-finite floats as the names JSON output gives them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {k: named(v) for k, v in value.items()}
    if isinstance(value, list):
        return [named(v) for v in value]
    return value


@settings(max_examples=80, deadline=None)
@given(values)
def test_trace_values_are_bounded_as_before(value: Any) -> None:
    copy = JSONValues().copy(value)
    assert copy == named(value_json(value))
    assert not render._has_nonfinite(copy)


# ---- orjson and the standard library -----------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=()))  # lone surrogates included
separators = st.sampled_from(["\u2028", "\u2029", "\x85", "a\u2028b", "\ud800", "\udc00x", "é"])
json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63) | st.floats() | texts | separators,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts | separators, inner, max_size=4)
    | st.dictionaries(st.integers(), inner, max_size=2),
    max_leaves=20,
)


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"bare {name} in JSON output")

    return json.loads(text.encode("utf-8").decode("utf-8"), parse_constant=refuse)


@pytest.mark.skipif(not render.orjson_available(), reason="orjson is not installed")
@settings(max_examples=150, deadline=None)
@given(json_like)
def test_orjson_and_the_standard_library_write_the_same_json(value: Any) -> None:
    for indent in (None, 2):
        fast, slow = render.dumps(value, indent), render.stdlib_dumps(value, indent)
        assert strict(fast) == strict(slow)
        if indent is None:
            assert len(fast.splitlines()) == 1
        for sep in ("\u2028", "\u2029", "\x85"):
            assert sep not in fast


def test_without_orjson_dumps_is_the_standard_library(monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"a": [1.5, float("nan"), "\u2028", "\ud800"], "b": 2**70, 3: None}
    monkeypatch.setattr(render, "_orjson", None)
    assert not render.orjson_available()
    assert render.json_line(value) == render.stdlib_dumps(value) + "\n"
    assert strict(render.json_line(value)) == {"a": [1.5, "NaN", "\u2028", "\ud800"], "b": 2**70, "3": None}


def test_the_verdict_json_has_no_nonfinite_float_for_the_writer_to_find(rules: Any) -> None:
    """A verdict's JSON carries NaN (from the episode's trace values, `run`) as its name already,
    which is why the writer may skip its search in a VerdictJSON."""
    [loaded] = iter_episodes([str(CLEAN)])
    episode = dict(loaded.data)
    episode["run"] = {"model": "m", "temperature": float("nan"), "seed": float("inf")}
    episode["episode"] = {**episode["episode"], "dispatch": [
        {**d, "arguments": {**d["arguments"], "amount": float("-inf")}} for d in episode["episode"]["dispatch"]]}
    for explain in ("fails", "full"):
        d = rules.evaluate(episode, validate=False, explain=explain).to_json()
        assert isinstance(d, VerdictJSON) and not render._has_nonfinite(dict(d))
        text = render.json_line(d)
        assert d["run"] == {"model": "m", "temperature": "NaN", "seed": "Infinity"}
        assert '"-Infinity"' in text and strict(text) == json.loads(render.stdlib_dumps(dict(d)))


def test_both_writers_give_the_same_verdicts_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--format json` and `jsonl`, with orjson and without: the same JSON values, the json document
    indented by two, the jsonl one line per verdict."""
    out: dict[tuple[str, bool], Any] = {}
    for use_orjson in (True, False):
        if not use_orjson:
            monkeypatch.setattr(render, "_orjson", None)
        for fmt in ("json", "jsonl"):
            target = tmp_path / f"{fmt}-{use_orjson}.out"
            assert main(["check", str(EXAMPLES), "--format", fmt, "-o", str(target)]) == 1
            text = target.read_text(encoding="utf-8")
            if fmt == "json":
                # streamed: the verdicts first, indented by two, the summary (known last) last
                assert text.startswith('{\n  "verdicts": [\n    {\n      "')
                doc = strict(text)
                assert list(doc) == ["verdicts", "summary"] and doc["summary"]["episodes"] == len(doc["verdicts"])
                out[fmt, use_orjson] = doc["verdicts"]
            else:
                out[fmt, use_orjson] = [strict(line) for line in text.splitlines()]
    assert out["json", True] == out["json", False] == out["jsonl", True] == out["jsonl", False]
