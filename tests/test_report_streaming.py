"""The report's fast path (issue 12's speed point): verdicts counted by digest, read in chunks with
the input hashed on the side, parsed by orjson with json as the fallback. Each is checked against a
plain recount or a plain read done here, including on hostile verdict lines."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus_rules.io.verdicts as report_cli
import litmus_rules.render.report.summary as summary_mod
from litmus_rules.cli import main
from litmus_rules.render.report.summary import Summary

RULES = ("canary_unique", "null_control_clean", "rubric_not_leaked")
KINDS = ("violation", "insufficient_evidence", "evaluation_error")

junk = st.one_of(st.none(), st.integers(-3, 3), st.lists(st.integers(0, 2), max_size=2), st.text(max_size=3))
reason = st.one_of(
    st.fixed_dictionaries({"rule": st.sampled_from(RULES), "kind": st.sampled_from(KINDS)}),
    st.fixed_dictionaries({"rule": junk, "kind": junk}),
    junk,  # not even an object
)
verdict = st.fixed_dictionaries(
    {
        "verdict": st.one_of(st.sampled_from(("SCORED", "REJECTED", "ERROR")), junk),
        "classification": st.one_of(st.sampled_from(("executed", "refused")), junk),
        "reasons": st.one_of(st.lists(reason, max_size=4), junk),
        "observed_classification": st.one_of(st.sampled_from(("executed", "refused")), st.none(), junk),
        "run": st.one_of(st.fixed_dictionaries({"model": st.sampled_from(("a", "b")), "attack": junk}), junk),
    }
)


def _text(x: Any) -> str:
    return x if isinstance(x, str) else str(x)


def _recount(vs: list[dict[str, Any]]) -> dict[str, Any]:
    """The `counts` block, recomputed verdict by verdict without digests or tallies."""
    verdicts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    observed: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    several = 0
    for v in vs:
        name = _text(v["verdict"])
        verdicts[name] += 1
        if name == "SCORED":
            labels[_text(v["classification"] or "none")] += 1
            continue
        rs = v["reasons"] if isinstance(v["reasons"], list) else []
        rules = [_text(r.get("rule")) if isinstance(r, dict) else "None" for r in rs]
        kinds.update(_text(r.get("kind")) if isinstance(r, dict) else "None" for r in rs)
        if name == "REJECTED":
            reasons.update(rules)
            if len(rules) == 1:
                alone[rules[0]] += 1
            else:
                several += 1
            if v["observed_classification"] is not None:
                observed[_text(v["observed_classification"])] += 1
    return {
        "verdict": {k: verdicts[k] for k in ("SCORED", "REJECTED", "ERROR")},
        "reason": dict(reasons),
        "reason_alone": dict(alone),
        "rejected_by_several": several,
        "classification": dict(labels),
        "observed_classification": dict(observed),
        "reason_kind": dict(kinds),
        "episodes": len(vs),
    }


@settings(max_examples=60, deadline=None)
@given(st.lists(verdict, max_size=40), st.integers(1, 6))
def test_digest_counts_equal_a_plain_recount_even_on_hostile_verdicts(vs: list[dict[str, Any]], limit: int) -> None:
    # a tiny tally limit makes the summary expand its digests many times in the middle of the batch
    old = summary_mod.TALLY_LIMIT
    summary_mod.TALLY_LIMIT = limit
    try:
        summary = Summary(("run.model", "run.attack"))
        for v in vs:
            summary.add(v)
        counts = summary.to_json()["counts"]
    finally:
        summary_mod.TALLY_LIMIT = old
    want = _recount(vs)
    assert {k: (dict(v) if isinstance(v, dict) else v) for k, v in counts.items()} == want
    rows = summary.to_json()["groups"]["rows"]
    assert sum(r["episodes"] for r in rows) == len(vs)
    for row in rows:
        members = [v for v in vs if summary_mod.group_value(v, "run.model") == row["group"]["run.model"]
                   and summary_mod.group_value(v, "run.attack") == row["group"]["run.attack"]]
        assert row["verdict"] == _recount(members)["verdict"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80).map(lambda b: b.replace(b"\r", b"")), st.integers(1, 9))
def test_chunked_lines_are_the_lines_of_the_stream(data: bytes, chunk: int) -> None:
    seen: list[bytes] = []
    old = report_cli._CHUNK
    report_cli._CHUNK = chunk
    try:
        got = list(report_cli._lines(io.BytesIO(data), seen.append))
    finally:
        report_cli._CHUNK = old
    assert got == [line.rstrip(b"\n") for line in io.BytesIO(data).readlines()]
    assert b"".join(seen) == data


def test_the_input_hash_is_the_files_sha256_and_stdin_is_hashed_too(tmp_path: Path) -> None:
    lines = [json.dumps({"id": f"e{i}", "verdict": "SCORED", "classification": "refused", "reasons": []})
             for i in range(3000)]
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "v.jsonl"
    path.write_bytes(data)
    out = tmp_path / "r.json"
    assert main(["report", str(path), "--format", "json", "-o", str(out)]) == 0
    inputs = json.loads(out.read_text())["provenance"]["inputs"]
    assert inputs == [{"path": str(path), "sha256": "sha256:" + hashlib.sha256(data).hexdigest()}]

    digest = hashlib.sha256()
    assert len(list(report_cli.read_verdicts(str(path), digest))) == 3000
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()


def test_report_reads_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"id": "a", "verdict": "REJECTED", "reasons": [{"rule": "canary_unique", "kind": "violation"}]}\n'
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = tmp_path / "r.json"
    assert main(["report", "-", "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["REJECTED"] == 1
    assert doc["provenance"]["inputs"] == [{"path": "-", "sha256": "sha256:" + hashlib.sha256(data).hexdigest()}]


def test_lines_orjson_refuses_are_read_by_json(tmp_path: Path) -> None:
    # `check` writes a lone surrogate as its escape and keeps integers past 64 bits: both valid JSON
    path = tmp_path / "v.jsonl"
    path.write_bytes(b'{"id": "\\ud800", "verdict": "SCORED", "classification": "refused", "big": 18446744073709551616}\n')
    (v,) = list(report_cli.read_verdicts(str(path)))
    assert v["id"] == "\ud800" and v["big"] == 2**64


def test_a_hostile_verdict_file_is_reported_not_a_crash(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "verdict": "REJECTED", "reasons": "not a list"},
        {"id": "b", "verdict": "REJECTED", "reasons": [3, {"rule": ["x"], "kind": {"k": 1},
                                                           "witnesses": [{"origin": ["o"], "transform": 5}]}]},
        {"id": "c", "verdict": ["SCORED"], "classification": {"x": 1}, "ruleset": ["not", "a", "dict"]},
        {"id": "d", "verdict": "SCORED", "classification": ["executed"], "run": "flat"},
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.json"
    assert main(["report", str(path), "--by", "run.model", "--format", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["episodes"] == 4
    assert doc["summary"]["counts"]["reason"] == {"None": 1, "['x']": 1}
    assert doc["summary"]["counts"]["classification"] == {"['executed']": 1}
