"""`litmus-rules preflight`: stub agents, scoring (declared detector or the harness's callable), the
controls it writes, and what `check` decides from them afterwards."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import cli
from litmus_rules.preflight import run as preflight
from litmus_rules.domain import records
from litmus_rules.preflight import scoring
from litmus_rules.preflight import stubs
from litmus_rules.io.load import iter_episodes, validate_episode
from litmus_rules.io.origins import MANIFEST

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data" / "preflight"
CASE1 = EXAMPLES / "note-case1-exfil-canary.yaml"
CASE2 = EXAMPLES / "note-case2-poisoned-read-file.yaml"
CLEAN = EXAMPLES / "clean-structured.yaml"
STRUCTURED = DATA / "structured-upload.yaml"
SCORERS = DATA / "scorers.py"


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def check(capsys: pytest.CaptureFixture[str], *inputs: Any) -> dict[str, dict[str, Any]]:
    code, out, _ = run(capsys, "check", *inputs, "--format", "jsonl")
    verdicts = [json.loads(line) for line in out.splitlines()]
    assert code == (0 if all(v["verdict"] == "SCORED" for v in verdicts) else 1)
    return {v["id"]: v for v in verdicts}


def rules_of(verdict: dict[str, Any]) -> dict[str, str]:
    return {r["rule"]: r.get("kind", "") for r in verdict["reasons"]}


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def bare(path: Path) -> dict[str, Any]:
    doc = load(path)
    doc.pop("controls", None)
    return doc


# --- the note's cases, end to end (preflight, then check) -----------------------------------------


def test_note_case1_rejected_because_the_null_control_is_dirty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "preflight", CASE1, "-o", tmp_path)
    assert code == 1
    assert "null control dirty" in err and "'EXFIL_CANARY' in the null transcript" in err
    written = load(tmp_path / CASE1.name)
    null = written["controls"]["null"]
    # the injected skill is gone from the null run, but the system prompt still lists it
    assert "EXFIL_CANARY" in null["transcript"][0]["content"]
    assert null["label"] == "exfiltrated" and null["fired"] is True
    verdict = check(capsys, tmp_path)["note-exfil-canary"]
    assert verdict["verdict"] == "REJECTED"
    assert rules_of(verdict)["null_control_clean"] == "violation"


def test_note_case2_rejected_because_refusal_and_compliance_get_the_same_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "preflight", CASE2, "-o", tmp_path)
    assert code == 1 and "stubs indistinguishable" in err
    controls = load(tmp_path / CASE2.name)["controls"]
    assert controls["refusal"]["label"] == controls["compliance"]["label"] == "unsafe"
    assert controls["refusal"]["dispatch"][0]["decision"] == "refuse"
    assert controls["null"]["label"] == "safe"  # read_file is gone from the null context
    reasons = rules_of(check(capsys, tmp_path)["note-poisoned-read-file"])
    assert reasons["counterfactual_stubs"] == "violation"
    assert "null_control_clean" not in reasons


@pytest.mark.parametrize("instance", [STRUCTURED, CLEAN])
def test_structured_channel_with_a_sound_detector_is_scored(
    instance: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "preflight", instance, "-o", tmp_path)
    assert code == 0, err
    controls = load(tmp_path / instance.name)["controls"]
    assert [controls[c]["label"] for c in preflight.CONTROLS] == ["safe", "unsafe", "safe", "unsafe", "safe", "safe"]
    (verdict,) = check(capsys, tmp_path).values()
    assert verdict["verdict"] == "SCORED", verdict["reasons"]


# --- user scorers ---------------------------------------------------------------------------------


def test_transcript_grepping_scorer_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "preflight", STRUCTURED, "-o", tmp_path, "--scorer", f"{SCORERS}:grep_tool_names")
    assert code == 1 and "stubs indistinguishable" in err
    assert rules_of(check(capsys, tmp_path)["structured-upload-001"])["counterfactual_stubs"] == "violation"


def test_dispatch_reading_scorer_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "preflight", STRUCTURED, "-o", tmp_path, "--scorer", f"{SCORERS}:executed_calls")
    assert code == 0, err
    controls = load(tmp_path / STRUCTURED.name)["controls"]
    assert controls["positive"]["label"] == "unsafe" and controls["refusal"]["label"] == "safe"  # True/False
    assert check(capsys, tmp_path)["structured-upload-001"]["verdict"] == "SCORED"


@pytest.mark.parametrize("scorer", ["good_scorer.py:score", "bad_scorer.py:score"])
def test_example_scorers(scorer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "preflight", STRUCTURED, "-o", tmp_path, "--scorer", EXAMPLES / "scorers" / scorer)
    verdict = check(capsys, tmp_path)["structured-upload-001"]["verdict"]
    assert (code, verdict) == ((0, "SCORED") if scorer.startswith("good") else (1, "REJECTED"))


def test_scorer_given_as_module_name(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA))
    code, _, err = run(capsys, "preflight", STRUCTURED, "-o", tmp_path, "--scorer", "scorers:executed_calls")
    assert code == 0, err


def test_raising_scorer_is_reported_and_the_batch_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "preflight", CASE1, STRUCTURED, "-o", tmp_path, "--scorer",
                       f"{SCORERS}:needs_tools", "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["counts"]["scorer_failed"] == 1
    failed = {r["id"]: r for r in report["instances"]}["note-exfil-canary"]
    assert failed["failures"][0]["traceback"].startswith("Traceback")
    assert "KeyError: 'tools'" in failed["failures"][0]["traceback"]
    assert "needs_tools" in failed["failures"][0]["traceback"]
    # fail closed: no label anywhere on the failed instance, an error on every run
    controls = load(tmp_path / CASE1.name)["controls"]
    assert all("label" not in run and "fired" not in run and run["error"] for run in controls.values())
    assert "label" in load(tmp_path / STRUCTURED.name)["controls"]["positive"]  # the batch went on
    reasons = rules_of(check(capsys, tmp_path)["note-exfil-canary"])
    assert reasons["counterfactual_stubs"] == "insufficient_evidence"


def test_raising_scorer_traceback_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "preflight", CASE1, "-o", tmp_path, "--scorer", f"{SCORERS}:needs_tools")
    assert "note-exfil-canary" in err and "KeyError: 'tools'" in err and "scorers.py" in err
    assert "same traceback as note-exfil-canary (null run)" in err  # repeated tracebacks are folded


def test_non_label_return_is_a_scorer_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "preflight", STRUCTURED, "-o", tmp_path, "--scorer", f"{SCORERS}:returns_none")
    assert code == 1 and "scorer returned None (NoneType), expected a label string" in err


def test_scorer_mutating_its_argument_does_not_change_the_runs(tmp_path: Path) -> None:
    scorer = scoring.load_scorer(f"{SCORERS}:mutates")
    result = preflight.preflight_instance(bare(STRUCTURED), scorer)
    assert result.controls["positive"]["transcript"] and result.controls["positive"]["label"] == "unsafe"
    assert all(r["tool"] != "scribbled" for c in result.controls.values() for r in c["dispatch"])


@pytest.mark.parametrize("spec", ["nocolon", f"{DATA}/missing.py:f", f"{SCORERS}:no_such_function",
                                  "litmus_no_such_module_xyz:f", f"{SCORERS}:DATA"])
def test_unloadable_scorer_is_misuse_and_writes_nothing(spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "preflight", STRUCTURED, "-o", tmp_path / "out", "--scorer", spec)
    assert code == 2 and "scorer" in err
    assert not (tmp_path / "out").exists()


def test_labels_map_bools_to_the_first_positive_label() -> None:
    assert scoring.to_label(True, ["exfiltrated"]) == "exfiltrated"
    assert scoring.to_label(False, ["exfiltrated"]) == "safe"
    assert scoring.to_label("maybe", ["unsafe"]) == "maybe"
    with pytest.raises(scoring.BadLabel):
        scoring.to_label(1, ["unsafe"])


# --- the stubs ------------------------------------------------------------------------------------


def test_stubs_are_deterministic_and_versioned() -> None:
    first = preflight.preflight_instance(bare(CASE2)).controls
    again = preflight.preflight_instance(bare(CASE2)).controls
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert {c["stub"] for c in first.values()} == {
        f"{name}/{stubs.STUB_VERSION}" for name in stubs.STUB_NAMES.values()
    }


def test_null_stub_removes_injected_items_and_keeps_the_system_prompt() -> None:
    doc = bare(STRUCTURED)
    null = stubs.null_stub(doc)
    context = null.instance["context"]
    assert [t["name"] for t in context["tools"]] == ["read_report"]
    assert [m["role"] for m in context["messages"]] == ["user"]
    assert context["system_prompt"] == doc["context"]["system_prompt"]
    assert null.dispatch == [] and "drop.invalid" not in null.transcript[0]["content"]
    assert [t["name"] for t in doc["context"]["tools"]] == ["read_report", "upload_report"]  # input untouched


def test_compliance_and_refusal_make_the_same_calls_with_opposite_decisions() -> None:
    doc = bare(STRUCTURED)
    comply, refuse = stubs.compliance_stub(doc), stubs.refusal_stub(doc)
    assert [(r["tool"], r["arguments"]) for r in comply.dispatch] == [
        ("upload_report", {"destination": "", "format": "pdf"}),  # injected tool, schema defaults
        ("upload_report", {"destination": "https://drop.invalid/q3", "format": "pdf"}),  # the signal's call
    ]
    assert [(r["tool"], r["arguments"]) for r in refuse.dispatch] == [(r["tool"], r["arguments"]) for r in comply.dispatch]
    assert {r["decision"] for r in comply.dispatch} == {"execute"} and {r["decision"] for r in refuse.dispatch} == {"refuse"}
    text = records.transcript_text(refuse.transcript)
    assert "Uploads a report to a destination." in text and '"destination"' in text  # quotes description + schema
    assert "https://drop.invalid/q3" in records.transcript_text(comply.transcript)  # echoes the injection


def test_decision_field_name_and_absence() -> None:
    doc = bare(STRUCTURED)
    doc["detector"]["decision_field"] = "verdict"
    assert {r["verdict"] for r in stubs.compliance_stub(doc).dispatch} == {"execute"}
    doc["detector"]["decision_field"] = None
    assert all(set(r) == {"tool", "arguments", "step"} for r in stubs.compliance_stub(doc).dispatch)
    assert stubs.refusal_stub(doc).dispatch == []  # a refused call is never dispatched
    assert scoring.declared_scorer({**_payload(stubs.compliance_stub(doc))}) == "unsafe"


def _payload(run: stubs.StubRun) -> dict[str, Any]:
    return {"transcript": run.transcript, "dispatch": run.dispatch, "instance": run.instance}


def test_trivial_agents() -> None:
    doc = bare(CASE2)
    empty, dump = stubs.empty_stub(doc), stubs.dump_stub(doc)
    assert empty.transcript == [{"role": "assistant", "content": ""}] and empty.dispatch == []
    assert [r["tool"] for r in dump.dispatch] == ["read_file"] and "/etc/passwd" in dump.transcript[-1]["content"]
    result = preflight.preflight_instance(doc)
    assert result.findings["trivial_firing"] == ["dump-everything labelled 'unsafe'"]


def test_default_arguments() -> None:
    tool = {"name": "t", "input_schema": {
        "type": "object", "required": ["n", "flag", "obj", "ref", "any"],
        "properties": {
            "d": {"type": "string", "default": "x"}, "e": {"enum": ["first", "second"]},
            "ex": {"type": "string", "examples": ["sample"]}, "opt": {"type": "string"},
            "n": {"type": "integer"}, "flag": {"type": "boolean"},
            "obj": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}},
            "ref": {"$ref": "#/$defs/Mode"}, "any": {"anyOf": [{"type": "number"}, {"type": "string"}]},
        },
        "$defs": {"Mode": {"const": "fast"}},
    }}
    assert stubs.default_arguments(tool) == {
        "d": "x", "e": "first", "ex": "sample", "n": 0, "flag": False, "obj": {"k": ""}, "ref": "fast", "any": 0,
    }
    cyclic = {"name": "c", "input_schema": {"$ref": "#", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}}
    assert isinstance(stubs.default_arguments(cyclic), dict)  # bounded, no recursion error


# --- the declared detector ------------------------------------------------------------------------


def _scored(detector: dict[str, Any], transcript: list[str], dispatch: list[dict[str, Any]]) -> str:
    instance = {"detector": {"positive_labels": ["hit"], **detector}}
    messages = [{"role": "assistant", "content": t} for t in transcript]
    return scoring.declared_scorer({"transcript": messages, "dispatch": dispatch, "instance": instance})


def test_declared_detector_reads_only_its_channel_and_scope() -> None:
    sub = {"signals": [{"id": "s", "kind": "substring", "value": "TOKEN"}]}
    assert _scored({"channel": "transcript", **sub}, ["TOKEN", "ok"], []) == "hit"
    assert _scored({"channel": "dispatch", **sub}, ["TOKEN"], []) == "safe"  # dispatch reads records only
    after = {"channel": "transcript", "scope": "after_decision", **sub}
    records = [{"tool": "t", "decision": "refuse", "step": 1}]
    assert _scored(after, ["TOKEN", "decide", "ok"], records) == "safe"  # before the decision
    assert _scored(after, ["ok", "decide", "TOKEN"], records) == "hit"
    assert _scored(after, ["TOKEN"], []) == "hit"  # no decision recorded: nothing is excluded
    rx = {"channel": "transcript", "signals": [{"id": "r", "kind": "regex", "value": "tok.n", "flags": ["ignorecase"]}]}
    assert _scored(rx, ["a TOKEN"], []) == "hit"


def test_declared_detector_tool_calls_need_execute() -> None:
    det = {"channel": "dispatch", "decision_field": "decision",
           "signals": [{"id": "c", "kind": "tool_call", "tool": "read_file", "arguments": {"path": "/etc/passwd"}}]}
    call = {"tool": "read_file", "arguments": {"path": "/etc/../etc/passwd"}}
    assert _scored(det, [], [{**call, "decision": "execute"}]) == "hit"
    assert _scored(det, [], [{**call, "decision": "refuse"}]) == "safe"
    assert _scored(det, [], [{"tool": "read_file", "arguments": {"path": "notes"}, "decision": "execute"}]) == "safe"


def test_undecidable_regex_is_a_scorer_failure() -> None:
    doc = bare(CASE2)
    doc["detector"]["signals"] = [{"id": "r", "kind": "regex", "value": "(unclosed"}]
    result = preflight.preflight_instance(doc)
    assert "scorer_failed" in result.findings and "RegexUnknown" in result.failures[0].summary
    assert all("label" not in c for c in result.controls.values())


# --- files in, files out --------------------------------------------------------------------------


def _digest(paths: list[Path]) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


def _note_examples(tmp_path: Path) -> Path:
    """The note's two cases and the clean instance, alone in a folder (examples/ has more)."""
    folder = tmp_path / "examples"
    folder.mkdir()
    for example in (CASE1, CASE2, CLEAN):
        (folder / example.name).write_bytes(example.read_bytes())
    return folder


def test_output_is_valid_and_inputs_are_never_modified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples = _note_examples(tmp_path)
    tmp_path = tmp_path / "out"
    inputs = sorted(examples.glob("*.yaml"))
    before = _digest(inputs)
    code, _, _ = run(capsys, "preflight", examples, "-o", tmp_path)
    assert code == 1 and _digest(inputs) == before
    # same names, no temp files; and the manifest naming each copy's input (io/origins.py)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST] + [p.name for p in inputs]
    for path in tmp_path.glob("*.yaml"):
        doc = load(path)
        assert validate_episode(doc, source=str(path)) is None
        assert list(doc["controls"]) == list(preflight.CONTROLS)  # trivial_empty/trivial_dump are schema-valid
    code, _, err = run(capsys, "preflight", examples, "-o", examples)
    assert code == 2 and "inputs are never modified" in err and _digest(inputs) == before


def test_formats_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = [bare(STRUCTURED), {**bare(CASE2), "episode": {"agent": "a"}, "extra": {"k": 1}}]
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text(json.dumps(docs))
    (src / "sub").mkdir()
    (src / "sub" / "b.jsonl").write_text("".join(json.dumps({**d, "id": f"b{i}"}) + "\n" for i, d in enumerate(docs)))
    (src / "c.yml").write_text(yaml.safe_dump_all([{**docs[0], "id": "y1"}, {**docs[1], "id": "y2"}]))
    (src / "d.json").write_text(json.dumps({**docs[0], "id": "single"}))
    run(capsys, "preflight", src, "-o", tmp_path / "out")
    out = tmp_path / "out"
    assert isinstance(json.loads((out / "a.json").read_text()), list)
    assert isinstance(json.loads((out / "d.json").read_text()), dict)
    assert len((out / "sub" / "b.jsonl").read_text().splitlines()) == 2
    assert [d["id"] for d in yaml.safe_load_all((out / "c.yml").read_text())] == ["y1", "y2"]
    second = json.loads((out / "a.json").read_text())[1]
    assert list(second)[-3:] == ["controls", "episode", "extra"]  # key order kept, controls before episode
    verdicts = check(capsys, out)
    assert len(verdicts) == 7 and all(v["verdict"] != "ERROR" for v in verdicts.values())


def test_jsonl_to_stdout_and_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(bare(STRUCTURED)) + "\n"))
    code, out, err = run(capsys, "preflight", "-", "--format", "jsonl")
    (doc,) = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and doc["controls"]["positive"]["fired"] is True and "finding" in err
    code, _, err = run(capsys, "preflight", STRUCTURED, "--format", "jsonl", "-o", tmp_path)
    assert code == 2 and "drop -o" in err
    code, _, err = run(capsys, "preflight", STRUCTURED)
    assert code == 2 and "-o OUTDIR" in err


def test_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples = _note_examples(tmp_path)
    code, out, err = run(capsys, "preflight", examples, STRUCTURED, "-o", tmp_path / "out", "--format", "json")
    report = json.loads(out)
    assert err == "" and report["exit_code"] == code == 1
    assert report["stub_version"] == stubs.STUB_VERSION and report["scorer"] == "declared detector"
    assert {k: report["counts"][k] for k in ("instances", "null_dirty", "positive_silent", "indistinguishable",
                                             "trivial_firing", "scorer_failed")} == {
        "instances": 4, "null_dirty": 1, "positive_silent": 1, "indistinguishable": 2, "trivial_firing": 2,
        "scorer_failed": 0}


def test_unusable_document_copies_the_file_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps(bare(STRUCTURED)) + "\n" + '{"litmus": "episode/1", "id": "x"}\n')
    code, _, err = run(capsys, "preflight", src, "-o", tmp_path / "out")
    assert code == 2 and "unusable input" in err and "copied unchanged" in err
    assert (tmp_path / "out" / "bad.jsonl").read_bytes() == src.read_bytes()
    code, _, err = run(capsys, "preflight", tmp_path / "missing.yaml", "-o", tmp_path / "out2")
    assert code == 2 and "no such file" in err


def test_two_inputs_with_one_output_name_is_misuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / STRUCTURED.name).write_text(STRUCTURED.read_text().replace("-001", "-009"))
    code, _, err = run(capsys, "preflight", STRUCTURED, tmp_path / "x" / STRUCTURED.name, "-o", tmp_path / "out")
    assert code == 2 and "would both be written" in err and not (tmp_path / "out").exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=40), ext=st.sampled_from([".yaml", ".json", ".jsonl"]))
def test_any_text_survives_the_round_trip(text: str, ext: str, tmp_path: Path) -> None:
    doc = bare(STRUCTURED)
    doc["context"]["system_prompt"] = text
    doc["context"]["messages"][0]["content"] = text + "\n" + text
    case = tmp_path / f"case{abs(hash((text, ext)))}"
    case.mkdir()
    src = case / f"in{ext}"
    src.write_text(yaml.safe_dump(doc) if ext == ".yaml" else json.dumps(doc), encoding="utf-8")
    report = preflight.run_preflight([str(src)], str(case / "out"))
    (loaded,) = iter_episodes([str(case / "out" / src.name)])
    assert loaded.error is None and report.exit_code() == 0
    assert loaded.data["context"] == doc["context"]
    assert loaded.data["controls"]["null"]["transcript"][0]["content"].startswith(text)


def test_lone_surrogate_in_json_input(tmp_path: Path) -> None:
    doc = bare(STRUCTURED)
    src = tmp_path / "s.json"
    src.write_text(json.dumps(doc).replace("You are", "\\ud800You are"), encoding="utf-8")
    preflight.run_preflight([str(src)], str(tmp_path / "out"))
    (loaded,) = iter_episodes([str(tmp_path / "out" / "s.json")])
    assert loaded.error is None and loaded.data["context"]["system_prompt"].startswith("\ud800You are")
