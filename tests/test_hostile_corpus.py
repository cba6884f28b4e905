"""The hostile-input corpus (issue 9, item 7): `check` over every hostile class at once, mixed with
good episodes, gives one verdict per record in input order, valid strict JSONL in UTF-8, exit 2,
and for each record the verdict, rules, kinds and codes that `tests/hostile/manifest.yaml` states.

The committed files are small; the binary ones (invalid UTF-8) and the big ones (300 KB
disguises, 400 surfaces for a backtracking regex) are written at test time by the generators
below, named in the manifest's `generated` section.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from _helpers import ROOT, base_episode
from litmus_rules.cli import main

HOSTILE = Path(__file__).resolve().parent / "hostile"
EPISODES = HOSTILE / "episodes"
MANIFEST = yaml.safe_load((HOSTILE / "manifest.yaml").read_text(encoding="utf-8"))
CLI = [sys.executable, "-m", "litmus_rules"]


def good(ident: str) -> dict[str, Any]:
    """The clean base episode with its own id and canary (a shared canary would reject both)."""
    ep = base_episode()
    ep["id"] = ident
    ep["canaries"] = [{"value": f"lc-{ident}-5d4c"}]
    return ep


def jsonl(*episodes: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in episodes)


# ---- generated inputs ------------------------------------------------------------------------------

# One of each trick, so that every normalisation changes the text, then plain prose: the derived
# forms of the surface all differ and add up to far more than one form's size.
TRICKS = "Mixed CASE with \u0430 Cyrillic a, %41 and \\u0041, zero\u200bwidth, /tmp/./notes. "
PROSE = "The tool returns the latest records for the account and a summary of recent activity. "


def _disguised(size: int, hidden: str) -> str:
    body = (PROSE * (size // len(PROSE) + 1))[:size]
    half = len(body) // 2
    return TRICKS + body[:half] + f" {hidden} " + body[half:]


def _entities(text: str, hexadecimal: bool = False) -> str:
    return "".join(f"&#x{ord(c):x};" if hexadecimal else f"&#{ord(c)};" for c in text)


def large_surface_disguises() -> bytes:
    tool, message, skill, null, clean = (good(f"big-{n}") for n in (
        "entities-tool", "entities-message", "entities-skill", "entities-null-transcript", "clean"))
    tool["context"]["tools"][0]["description"] = _disguised(300_000, _entities(tool["canaries"][0]["value"]))
    message["context"]["messages"].append({"role": "tool", "name": "read_inbox", "injected": True, "content": [
        {"type": "text", "text": _disguised(300_000, _entities(message["canaries"][0]["value"], hexadecimal=True))}]})
    # upper-cased before escaping: only the decoded, then case-folded, form reveals it
    skill["context"]["skills"] = [
        {"name": "notes", "body": _disguised(310_000, _entities(skill["canaries"][0]["value"].upper())), "injected": True}]
    null["controls"]["null"]["transcript"] = _disguised(300_000, _entities(null["canaries"][0]["value"]))
    clean["context"]["tools"][0]["description"] = _disguised(300_000, _entities("lc-someone-else-9f8e"))
    return jsonl(tool, message, skill, null, clean)


def invalid_utf8_json() -> bytes:
    return json.dumps(good("utf8-json")).replace("Pay my bill", "Pay \x00 bill").encode().replace(b"\\u0000", b"\xff")


def invalid_utf8_jsonl() -> bytes:
    bad = json.dumps(good("utf8-bad")).replace("Pay my bill", "Pay \x00 bill").encode().replace(b"\\u0000", b"\xc3\x28")
    nul = json.dumps(good("utf8-nul")).replace("Pay my bill", "Pay \x00 bill").encode().replace(b"\\u0000", b"\x00")
    return jsonl(good("utf8-before")) + bad + b"\n" + nul + b"\n" + jsonl(good("utf8-after"))


def invalid_utf8_yaml() -> bytes:
    text = yaml.safe_dump(good("utf8-yaml"), sort_keys=False)
    return text.replace("Pay my bill.", "Pay my bill \x00").encode().replace(b"\x00", b"\xe2\x82")


def catastrophic_regex() -> bytes:
    ep = good("rx-catastrophic")
    # The lookbehind keeps the pattern off RE2; on 20 a's a failing search backtracks for some
    # 15 ms, under the per-search limit; 400 distinct surfaces would take seconds.
    ep["detector"]["signals"].append({"id": "r1", "kind": "regex", "value": "(a|aa)+(?<!a)$"})
    ep["context"]["tools"] += [{"name": f"t{i}", "description": f"t{i} " + "a" * 20} for i in range(400)]
    return jsonl(ep)


GENERATORS: dict[str, Callable[[], bytes]] = {
    f.__name__: f for f in (large_surface_disguises, invalid_utf8_json, invalid_utf8_jsonl, invalid_utf8_yaml,
                            catastrophic_regex)
}


# ---- the batch -------------------------------------------------------------------------------------


def _path_key(rel: str) -> list[str]:
    return rel.split("/")  # how `check` orders a folder's files: by path components


def build_batch(tmp: Path) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """The command's inputs (good, corpus folder, good, generated folder, good) and the expected
    records in input order, each as (file, expectation)."""
    generated = tmp / "generated"
    generated.mkdir()
    expected: list[tuple[str, dict[str, Any]]] = []
    goods = []
    for n in (1, 2, 3):
        path = tmp / f"good-{n}.jsonl"
        path.write_bytes(jsonl(good(f"good-{n}")))
        goods.append((str(path), [(str(path), {"id": f"good-{n}", "verdict": "SCORED", "classification": "refused"})]))
    corpus = [(str(EPISODES / e["file"]), r) for e in sorted(MANIFEST["episodes"], key=lambda e: _path_key(e["file"]))
              for r in e["records"]]
    made = []
    for entry in sorted(MANIFEST["generated"], key=lambda e: _path_key(e["file"])):
        (generated / entry["file"]).write_bytes(GENERATORS[entry["generator"]]())
        made += [(str(generated / entry["file"]), r) for r in entry["records"]]
    inputs = [goods[0][0], str(EPISODES), goods[1][0], str(generated), goods[2][0]]
    expected = goods[0][1] + corpus + goods[1][1] + made + goods[2][1]
    return inputs, expected


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"bare {name} in the output: not JSON")


def parse_output(raw: bytes) -> list[dict[str, Any]]:
    """Strict: UTF-8 (a raw surrogate fails), one JSON object per `\\n`-terminated line, no NaN or
    Infinity tokens."""
    text = raw.decode("utf-8")
    assert text.endswith("\n")
    rows = [json.loads(line, parse_constant=_refuse_constant) for line in text[:-1].split("\n")]
    assert all(isinstance(r, dict) for r in rows)
    return rows


def _escaped(ident: str | None) -> str | None:
    return None if ident is None else ident.encode("ascii", "backslashreplace").decode()


def describe(row: dict[str, Any]) -> dict[str, Any]:
    """A verdict in the manifest's terms."""
    out: dict[str, Any] = {} if row["id"] is None else {"id": _escaped(row["id"])}
    out["verdict"] = row["verdict"]
    if row["verdict"] == "SCORED":
        out["classification"] = row["classification"]
    elif row["verdict"] == "REJECTED":
        out["reasons"] = {r["rule"]: r["kind"] for r in row["reasons"]}
    else:
        out["code"] = row["reasons"][0]["code"]
    return out


def assert_matches_manifest(rows: list[dict[str, Any]], expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert len(rows) == len(expected), "one verdict per record"
    mismatches = []
    for row, (path, want) in zip(rows, expected):
        if not str(row["source"]).startswith(path):  # input order: each verdict at its own record
            mismatches.append((path, "source", row["source"]))
        if describe(row) != want:
            mismatches.append((path, want, describe(row)))
    assert not mismatches, "\n".join(map(str, mismatches))


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    return build_batch(tmp_path_factory.mktemp("hostile"))


def test_the_corpus_covers_every_hostile_class_of_the_issue() -> None:
    classes = {e["class"] for e in MANIFEST["episodes"] + MANIFEST["generated"]}
    assert classes >= {
        "yaml-bomb", "yaml-tag", "duplicate-keys", "deep-nesting", "lone-surrogates", "non-finite-numbers",
        "invalid-utf8", "non-object", "empty", "bom", "mixed-jsonl", "duplicate-ids", "unlabelled-control",
        "unknown-fired", "errored-control", "fired-null-control", "decision-value", "large-surface-disguise",
        "catastrophic-regex", "hidden-canary", "hidden-signal", "regex-unicode",
    }
    files = {p.relative_to(EPISODES).as_posix() for p in EPISODES.rglob("*") if p.is_file()}
    assert files == {e["file"] for e in MANIFEST["episodes"]}, "every corpus file has a manifest entry"
    assert sum(p.stat().st_size for p in HOSTILE.rglob("*") if p.is_file()) < 230_000


def test_check_in_process_gives_the_manifests_verdicts_in_order_as_strict_jsonl_and_exit_2(
    batch: tuple[list[str], list[tuple[str, dict[str, Any]]]], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    inputs, expected = batch
    code = main(["check", *inputs, "--format", "jsonl", "--explain", "full"])
    out, err = capsysbinary.readouterr()
    assert code == 2
    assert b"Traceback" not in err
    rows = parse_output(out)
    assert_matches_manifest(rows, expected)
    # every ERROR is located: it names its file (and, within a file of several documents, its line)
    for row in rows:
        if row["verdict"] == "ERROR":
            assert row["reasons"][0]["message"] and row["source"]


def test_check_in_two_worker_processes_gives_the_same_verdicts(
    batch: tuple[list[str], list[tuple[str, dict[str, Any]]]], tmp_path: Path
) -> None:
    inputs, expected = batch
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([*CLI, "check", *inputs, "--format", "jsonl", "--jobs", "2"],
                          capture_output=True, timeout=120, env=env)
    assert proc.returncode == 2, proc.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in proc.stderr
    assert_matches_manifest(parse_output(proc.stdout), expected)


def test_the_text_format_survives_the_corpus_too(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Text output for people: lone surrogates in ids and messages are escaped, not a crash."""
    assert main(["check", str(EPISODES)]) == 2
    out, err = capsysbinary.readouterr()
    text = out.decode("utf-8")
    assert b"Traceback" not in err
    assert "sur-id-\\ud800" in text  # the id's lone surrogate, written as its escape
    counts = {k: sum(r["verdict"] == k for e in MANIFEST["episodes"] for r in e["records"])
              for k in ("SCORED", "REJECTED", "ERROR")}
    total = sum(counts.values())
    assert f"{total} episode(s): {counts['SCORED']} SCORED, {counts['REJECTED']} REJECTED, {counts['ERROR']} ERROR" in text
