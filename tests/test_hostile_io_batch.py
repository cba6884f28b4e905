"""Acceptance (issue 9): `check` on a batch that mixes hostile records with good ones gives one
verdict per record, valid UTF-8 JSONL, and exit 2, on one process or several."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _helpers import base_episode
from litmus_rules.io import load
from litmus_rules.cli import main


def good(ident: str) -> dict[str, Any]:
    ep = base_episode()
    ep["id"] = ident
    ep["canaries"] = [{"value": f"lc-{ident}-7c6d5e4f"}]
    return ep


def hostile_batch(path: Path) -> list[tuple[str | None, str, str | None]]:
    """Writes the batch; returns per record (id, verdict, reason code) as expected."""
    surrogate = good("PLACEHOLDER")
    nan = good("nan-values")
    nan["detector"]["signals"][0]["arguments"] = {"iban": float("nan"), "amount": float("inf")}
    nan["episode"]["dispatch"][0]["arguments"] = {"iban": float("nan"), "amount": float("-inf")}
    records: list[bytes] = [
        json.dumps(good("good-1")).encode(),
        json.dumps(surrogate).replace("PLACEHOLDER", "x-\\ud800").encode(),  # valid JSON, not encodable
        json.dumps(nan).encode(),  # bare NaN and Infinity, as Python writes them
        json.dumps(good("bad-utf8")).replace("Pay my bill", "Pay \xff bill").encode("latin-1"),
        b"[1, 2, 3]",
        b"[" * 10_000 + b"]" * 10_000,
        b'{"id": "huge", "pad": "' + b"x" * (load.MAX_DOCUMENT_SIZE + 10) + b'"}',
        json.dumps(good("good-2")).encode(),
        json.dumps(good("good-1")).encode(),  # a duplicate id
        json.dumps(good("good-3")).encode(),
    ]
    path.write_bytes(b"\n".join(records) + b"\n")
    return [
        ("good-1", "SCORED", None),
        ("x-\ud800", "SCORED", None),
        ("nan-values", "SCORED", None),
        (None, "ERROR", load.UNPARSEABLE),
        (None, "ERROR", load.NOT_AN_OBJECT),
        (None, "ERROR", load.LIMIT),
        (None, "ERROR", load.LIMIT),
        ("good-2", "SCORED", None),
        ("good-1", "ERROR", "L308"),
        ("good-3", "SCORED", None),
    ]


def refuse_constant(name: str) -> Any:
    raise ValueError(f"bare {name} in the output")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_hostile_mix_gives_one_verdict_per_record_valid_jsonl_and_exit_2(
    jobs: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "mix.jsonl"
    expected = hostile_batch(batch)
    out = tmp_path / "verdicts.jsonl"
    code = main(["check", str(batch), "--format", "jsonl", "--explain", "full", "--jobs", jobs, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("ruleset ") and err.count("\n") == 1  # only the ruleset used
    lines = out.read_bytes().decode("utf-8").splitlines()  # strict UTF-8: a raw surrogate would fail here
    rows = [json.loads(line, parse_constant=refuse_constant) for line in lines]
    assert len(rows) == len(expected)
    got = [(r["id"], r["verdict"], r["reasons"][0].get("code") if r["verdict"] == "ERROR" else None) for r in rows]
    assert got == expected
    assert [r["source"] for r in rows] == [f"{batch}:{n}" for n in range(1, 11)]
    assert '"NaN"' in lines[2] and '"Infinity"' in lines[2]
    assert "first seen at " + f"{batch}:1" in rows[8]["reasons"][0]["message"]
