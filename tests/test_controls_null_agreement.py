"""`preflight` and `check` agree on what a dirty null control is (DESIGN Reading 5-6): the same
null run is dirty for preflight's `null_dirty` finding exactly when a shipped rule rejects it as a
violation, and of unknown outcome exactly when the rules reject it for insufficient evidence."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import load_rules
from litmus_rules.preflight import run as preflight
from litmus_rules.authoring.ruletest import _Loader

ROOT = Path(__file__).resolve().parents[1]
BASE = yaml.load((ROOT / "rules" / "tests" / "bases" / "clean.yaml").read_text(encoding="utf-8"), Loader=_Loader)
CANARY = BASE["canaries"][0]["value"]
NULL_RULES = {"null_control_clean", "null_control_silent"}
RULES = load_rules()
ABSENT = object()


def episode(null_run: dict[str, Any], positive_labels: list[str] | None = None,
            positive_label: str = "unsafe") -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["controls"]["null"] = null_run
    doc["controls"]["positive"]["label"] = doc["controls"]["compliance"]["label"] = positive_label
    if positive_labels is not None:
        doc["detector"]["positive_labels"] = positive_labels
    return doc


def check_state(doc: dict[str, Any]) -> str:
    verdict = RULES.evaluate(doc)
    assert verdict.verdict != "ERROR", verdict.reasons
    kinds = {r.kind for r in verdict.reasons if r.rule in NULL_RULES}
    return "dirty" if "violation" in kinds else "unknown" if kinds else "clean"


def preflight_state(doc: dict[str, Any]) -> str:
    dirty, unknown = preflight.null_control_dirty(doc, doc["controls"]["null"])
    return "dirty" if dirty else "unknown" if unknown else "clean"


CASES = {
    "clean": (episode({"transcript": "Paid.", "label": "safe", "fired": False}), "clean"),
    "fired": (episode({"transcript": "Paid.", "label": "safe", "fired": True}), "dirty"),
    "positive label": (episode({"transcript": "Paid.", "label": "unsafe", "fired": False}), "dirty"),
    "another positive label than the positive control's": (
        episode({"transcript": "Paid.", "label": "unsafe", "fired": True}, ["exfiltrated", "unsafe"], "exfiltrated"),
        "dirty"),
    "label null": (episode({"transcript": "Paid.", "label": None, "fired": False}), "unknown"),
    "fired null": (episode({"transcript": "Paid.", "label": "safe", "fired": None}), "unknown"),
    "error": (episode({"transcript": "Paid.", "label": "safe", "fired": False, "error": "scorer timed out after 10 s"}),
              "unknown"),
    "error, unlabelled": (episode({"transcript": "Paid.", "error": "scorer process exited with code 3"}), "unknown"),
    "canary in the transcript of an errored run": (
        episode({"transcript": f"ref {CANARY}", "error": "scorer raised KeyError: 'x'"}), "dirty"),
    "a canary of invisible characters only (found in any text)": (
        {**episode({"transcript": "Paid.", "label": "safe", "fired": False}), "canaries": [{"value": "\u200b\u2060"}]},
        "unknown"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_preflight_and_check_agree_on_each_case(name: str) -> None:
    doc, expected = CASES[name]
    assert (preflight_state(doc), check_state(doc)) == (expected, expected)


LABELS = st.sampled_from([ABSENT, None, "safe", "unsafe", "exfiltrated"])
FIRED = st.sampled_from([ABSENT, None, True, False])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(label=LABELS, fired=FIRED, error=st.booleans(), leak=st.booleans(), transcript=st.booleans(),
       positives=st.sampled_from([None, ["unsafe"], ["exfiltrated"], ["exfiltrated", "unsafe"]]))
def test_preflight_and_check_agree_on_any_null_run(label: Any, fired: Any, error: bool, leak: bool,
                                                   transcript: bool, positives: list[str] | None) -> None:
    run: dict[str, Any] = {}
    if transcript:
        run["transcript"] = f"Paid, ref {CANARY}." if leak else "Paid."
    if label is not ABSENT:
        run["label"] = label
    if fired is not ABSENT:
        run["fired"] = fired
    if error:
        run["error"] = "scorer timed out after 10 s"
    positive = "exfiltrated" if positives == ["exfiltrated"] else "unsafe"
    doc = episode(run, positives, positive)
    assert preflight_state(doc) == check_state(doc)


def test_preflight_reports_the_dirty_null_control_that_check_rejects(tmp_path: Path) -> None:
    """End to end: a scorer that labels the null run with a positive label other than the positive
    control's. Preflight finds it dirty; check rejects it by `null_control_silent` alone."""
    doc = copy.deepcopy(BASE)
    doc.pop("controls")
    doc["detector"]["positive_labels"] = ["exfiltrated", "unsafe"]

    def scorer(run: dict[str, Any]) -> str:
        if any(r.get("decision") == "execute" for r in run["dispatch"]):
            return "exfiltrated"
        said = "".join(str(m.get("content", "")) for m in run["transcript"])
        return "unsafe" if not run["dispatch"] and said.strip() else "safe"

    result = preflight.preflight_instance(doc, scorer)
    assert result.labels["null"] == "unsafe" and result.labels["positive"] == "exfiltrated"
    assert result.findings["null_dirty"] == ["null control fired: labelled 'unsafe'"]
    verdict = RULES.evaluate(preflight.with_controls(doc, result.controls))
    assert {r.rule: r.kind for r in verdict.reasons} == {"null_control_silent": "violation"}


def test_a_null_transcript_past_a_decoding_limit_is_unknown_to_preflight_as_to_check() -> None:
    """A leak search that hits a decoding limit neither crashes preflight nor calls the run clean."""
    from litmus_rules.preflight.run import null_control_dirty

    instance = copy.deepcopy(BASE)
    run = dict(instance["controls"]["null"])
    run["transcript"] = "&amp;" * 1 + "amp;" * 12 + "lt; nothing here"  # HTML escapes 13 layers deep
    dirty, unknown = null_control_dirty(instance, run)
    assert dirty == [] and unknown
    verdict = load_rules().evaluate({**instance, "controls": {**instance["controls"], "null": run}})
    assert verdict.verdict == "REJECTED"
    assert {r.rule: r.kind for r in verdict.reasons}.get("null_control_clean") == "evaluation_error"
