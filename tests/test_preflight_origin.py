"""After `preflight -o OUT`, `check OUT` names the file the user gave: a verdict's `source` is the
origin (with the line of the same document in it), `checked` the copy that was read. Fail closed:
a copy or an origin changed since preflight, or a manifest that is not one, leaves `source` naming
the copy. Through the real command line, in a subprocess (io/origins.py, preflight/run.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import EXAMPLES, base_episode
from litmus_rules.io import origins
from litmus_rules.io.inputs import plan_units
from litmus_rules.io.origins import MANIFEST, Origin

CLI = [sys.executable, "-m", "litmus_rules"]
CASE1 = EXAMPLES / "note-case1-exfil-canary.yaml"


def cli(cwd: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*CLI, *argv], cwd=cwd, capture_output=True, text=True, timeout=300, input=stdin)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def check(cwd: Path, *inputs: str, fmt: str = "jsonl") -> list[dict[str, Any]]:
    done = cli(cwd, "check", "--format", fmt, "--no-traces", *inputs)
    assert done.returncode in (0, 1, 2), done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def by_id(verdicts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["id"]: v for v in verdicts}


def with_id(text: str, ident: str) -> str:
    return text.replace("id: note-exfil-canary", f"id: {ident}")


def write_inputs(folder: Path) -> None:
    """One YAML episode, a YAML stream of three (comments between them, so the copy's documents
    start on other lines once their controls are filled in), JSONL with blank lines, a JSON array."""
    folder.mkdir(parents=True)
    text = CASE1.read_text(encoding="utf-8")
    (folder / "one.yaml").write_text(text, encoding="utf-8")
    stream = "\n".join(f"# document {n}\n" + with_id(text, f"multi-{n}") + ("---" if n < 2 else "")
                       for n in range(3))
    (folder / "multi.yaml").write_text(stream, encoding="utf-8")
    docs = []
    for n in range(4):
        doc = base_episode()
        doc["id"] = f"line-{n}"
        docs.append(doc)
    (folder / "eps.jsonl").write_text("\n\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    for n, doc in enumerate(docs):
        doc["id"] = f"array-{n}"
    (folder / "arr.json").write_text(json.dumps(docs, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("origin")
    write_inputs(work / "eps")
    done = cli(work, "preflight", "eps", "-o", "out")
    assert done.returncode in (0, 1), done.stderr
    return {"work": work, "direct": by_id(check(work, "eps")), "copies": by_id(check(work, "out"))}


def test_source_names_the_input_file_and_checked_the_copy(made: dict[str, Any]) -> None:
    direct, copies = made["direct"], made["copies"]
    assert set(copies) == set(direct) and len(copies) == 12
    shifted = 0
    for ident, verdict in copies.items():
        # the same file and line as checking the file the user gave, whatever its format
        assert verdict["source"] == direct[ident]["source"], ident
        path, _, line = verdict["source"].rpartition(":")
        assert path.startswith("eps/") and line.isdigit()
        copy_path, _, copy_line = verdict["checked"].rpartition(":")
        assert copy_path == "out/" + path[len("eps/"):] and copy_line.isdigit()
        shifted += copy_line != line
        assert "checked" not in direct[ident]  # not a copy: no `checked`
    assert shifted >= 4  # the YAML stream's later documents and the JSON array's moved in the copy


def test_from_another_working_directory_the_origin_is_absolute(made: dict[str, Any]) -> None:
    work: Path = made["work"]
    elsewhere = work / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    found = by_id(check(elsewhere, str(work / "out" / "multi.yaml")))
    assert len(found) == 3
    for ident, verdict in found.items():
        assert verdict["source"] == str(work / made["direct"][ident]["source"])  # /.../eps/multi.yaml:LINE
        assert verdict["checked"].startswith(str(work / "out" / "multi.yaml") + ":")


def test_ci_formats_locate_results_at_the_origin(made: dict[str, Any]) -> None:
    work: Path = made["work"]
    done = cli(work, "check", "--format", "sarif", "out/one.yaml")
    results = json.loads(done.stdout)["runs"][0]["results"]
    assert results
    for result in results:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "eps/one.yaml"
        assert f"eps/one.yaml:{physical['region']['startLine']}" == made["direct"]["note-exfil-canary"]["source"]
        assert result["properties"]["checked"].startswith("out/one.yaml:")
    done = cli(work, "check", "--format", "github", "out/one.yaml")
    assert done.stdout.startswith("::error file=eps/one.yaml,line=")


def test_a_copy_or_origin_changed_since_preflight_is_not_attributed(tmp_path: Path) -> None:
    text = CASE1.read_text(encoding="utf-8")
    work = tmp_path / "work"
    (work / "eps").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (work / "eps" / f"{name}.yaml").write_text(with_id(text, name), encoding="utf-8")
    # a file with an unusable document is copied byte for byte: its lines are the origin's
    (work / "eps" / "d.yaml").write_text(with_id(text, "d") + "---\n# not an episode\nid: [unclosed\n", encoding="utf-8")
    assert cli(work, "preflight", "eps/a.yaml", "eps/c.yaml", "eps/d.yaml", "-o", "out").returncode == 2
    assert cli(work, "preflight", "eps/b.yaml", "-o", "out").returncode == 1  # merged into the manifest
    stream = json.dumps({**base_episode(), "id": "from-stdin"}) + "\n"
    assert cli(work, "preflight", "-", "-o", "out", stdin=stream).returncode in (0, 1)
    manifest = json.loads((work / "out" / MANIFEST).read_text(encoding="utf-8"))
    assert sorted(manifest["files"]) == ["a.yaml", "b.yaml", "c.yaml", "d.yaml"]  # standard input has no origin
    with open(work / "out" / "a.yaml", "a", encoding="utf-8") as fh:
        fh.write("# edited after preflight\n")
    with open(work / "eps" / "b.yaml", "a", encoding="utf-8") as fh:
        fh.write("# the origin edited after preflight\n")
    verdicts = check(work, "out")
    found = by_id(verdicts)
    assert found["a"]["source"].startswith("out/a.yaml:") and "checked" not in found["a"]
    assert found["b"]["source"].startswith("out/b.yaml:") and "checked" not in found["b"]
    assert found["from-stdin"]["source"] == "out/stdin.jsonl:1" and "checked" not in found["from-stdin"]
    assert found["c"]["source"].startswith("eps/c.yaml:") and found["c"]["checked"].startswith("out/c.yaml:")
    assert found["d"]["source"] == "eps/d.yaml:4" and found["d"]["checked"] == "out/d.yaml:4"
    errors = [v for v in verdicts if v["verdict"] == "ERROR"]
    assert [v["source"].rpartition(":")[0] for v in errors] == ["eps/d.yaml"]
    assert errors[0]["source"].rpartition(":")[2] == errors[0]["checked"].rpartition(":")[2]
    # the whole tree moved (or checked out elsewhere): the origin is found relative to the manifest
    moved = tmp_path / "moved"
    shutil.move(str(work), str(moved))
    found = by_id(check(moved, "out"))
    assert found["c"]["source"].startswith("eps/c.yaml:") and found["c"]["checked"].startswith("out/c.yaml:")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_hostile_manifest_is_ignored_with_one_warning(made: dict[str, Any], tmp_path: Path) -> None:
    copy = (made["work"] / "out" / "one.yaml").read_bytes()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    elsewhere = {"origin": str(fifo), "relative": "../../../../../../../../etc/passwd", "sha256": _sha(copy),
                 "origin_sha256": _sha(b""), "origin_size": 0}
    manifests: dict[str, Any] = {
        "not-json": b"{\"litmus\": ",
        "wrong-shape": json.dumps({"litmus": origins.FORMAT, "files": ["one.yaml"]}).encode(),
        "wrong-types": json.dumps({"litmus": origins.FORMAT, "files": {"one.yaml": {"origin": 3, "sha256": []}}}).encode(),
        "huge": json.dumps({"litmus": origins.FORMAT, "files": {}, "pad": "x" * (origins.MAX_MANIFEST_BYTES + 1)}).encode(),
        "elsewhere": json.dumps({"litmus": origins.FORMAT, "files": {"one.yaml": elsewhere}}).encode(),
        "a-fifo": None,
    }
    for name, manifest in manifests.items():
        folder = tmp_path / name
        folder.mkdir()
        ident = b"id: " + name.encode()  # ids unique in the batch; `elsewhere` holds the copy as written
        (folder / "one.yaml").write_bytes(copy if name == "elsewhere" else copy.replace(b"id: note-exfil-canary", ident))
        if manifest is None:
            os.mkfifo(folder / MANIFEST)  # opened, it would block the check
        else:
            (folder / MANIFEST).write_bytes(manifest)
    done = cli(tmp_path, "check", "--format", "jsonl", "--no-traces", *manifests)
    assert done.returncode == 1  # REJECTED, as the copies are: no ERROR, no crash
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(v["source"].split("/")[0] for v in verdicts) == sorted(manifests)
    for verdict in verdicts:
        assert verdict["source"].endswith("/one.yaml:4") and "checked" not in verdict
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 5, done.stderr  # one line for each manifest that is not one; none for `elsewhere`
    assert all(MANIFEST in line for line in warnings) and not any("elsewhere" in line for line in warnings)


def test_only_a_copy_with_an_entry_is_hashed_and_once(made: dict[str, Any], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[str] = []
    real = origins.sha256_file
    monkeypatch.setattr(origins, "sha256_file", lambda path: hashed.append(path) or real(path))
    work: Path = made["work"]
    units = plan_units([str(work / "eps")], chunk=64)  # no manifest there: nothing hashed
    assert len(units) > 4 and hashed == [] and all(u.origin is None for u in units)
    units = plan_units([str(work / "out" / "eps.jsonl")], chunk=64)  # one file, cut into units
    assert len(units) == 4 and len(hashed) == 2  # the copy, then its origin: once each
    assert len({u.origin for u in units}) == 1 and units[0].origin is not None
    assert all(u.origin is None for u in plan_units([str(work / "out")], find_origins=False)) and len(hashed) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), max_size=30), st.booleans())
def test_the_recorded_lines_give_back_each_document_s_line(steps: list[int], absolute: bool) -> None:
    lines = [sum(steps[: i + 1]) for i in range(len(steps))]  # increasing, as documents' lines are
    runs = origins._runs(lines)
    assert runs is not None
    origin = Origin("/data/x.jsonl" if absolute else "x.jsonl", tuple(map(tuple, runs)), len(lines))  # type: ignore[arg-type]
    for index, line in enumerate(lines):
        assert origin.location(index, copy_line=999) == f"{origin.path}:{line}"
    assert origin.location(len(lines), copy_line=999) == origin.path  # a document it does not know
