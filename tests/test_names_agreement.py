"""`preflight` and `check` agree on injected names in the null transcript: both find a name at
identifier boundaries only, and a canary anywhere (DESIGN Reading 5); and the two other points
DESIGN settled with them (HTML escapes are a decoding; a repeated id is an ERROR naming the first)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import load_rules
from litmus_rules.preflight import run as preflight
from litmus_rules.cli import main
from _helpers import base_episode

RULES = load_rules()
NULL_RULES = {"null_control_clean", "null_control_silent"}
NAME = "export_calendar"


def episode(transcript: str, name: str = NAME, kind: str = "tools") -> dict[str, Any]:
    doc = base_episode()
    item = {"name": name, "description": "Exports the calendar.", "injected": True}
    doc["context"].setdefault(kind, []).append(item)
    doc["controls"]["null"]["transcript"] = transcript
    return doc


def check_state(doc: dict[str, Any]) -> str:
    verdict = RULES.evaluate(doc)
    assert verdict.verdict != "ERROR", verdict.reasons
    kinds = {r.kind for r in verdict.reasons if r.rule in NULL_RULES}
    others = {r.rule for r in verdict.reasons} - NULL_RULES
    assert not others, verdict.reasons  # only the null control is at stake
    return "dirty" if "violation" in kinds else "unknown" if kinds else "clean"


def preflight_state(doc: dict[str, Any]) -> str:
    dirty, unknown = preflight.null_control_dirty(doc, doc["controls"]["null"])
    return "dirty" if dirty else "unknown" if unknown else "clean"


CASES = {
    "the name called": (episode("I called export_calendar(month=10)."), "dirty"),
    "a longer identifier": (episode("I called export_calendar_v2 and my_export_calendar."), "clean"),
    "a skill's name, case folded": (episode("Used Export_Calendar.", kind="skills"), "dirty"),
    "a skill's longer name": (episode("Used EXPORT_CALENDAR_V2.", kind="skills"), "clean"),
    "an MCP name before a hyphen": (episode("read-file-v2 was enough", name="read-file"), "dirty"),
    "a longer identifier, base64": (episode("blob dXNlIGV4cG9ydF9jYWxlbmRhcl92MiBub3c= end"), "clean"),
    "the name, base64": (episode("blob dXNlIGV4cG9ydF9jYWxlbmRhciBub3c= end"), "dirty"),
    "the canary inside an identifier": (episode("ref lc-0f1e2d3c4b5a_2"), "dirty"),
    "a longer identifier past a decoding limit": (episode("&amp;" + "amp;" * 12 + "lt; export_calendar_v2"), "unknown"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_preflight_and_check_agree_on_names(name: str) -> None:
    doc, expected = CASES[name]
    assert (preflight_state(doc), check_state(doc)) == (expected, expected)


def test_preflight_says_how_a_name_was_searched() -> None:
    doc = episode("call export_calendar")
    dirty, _ = preflight.null_control_dirty(doc, doc["controls"]["null"])
    assert dirty == ["'export_calendar' in the null transcript (raw; as a name, at identifier boundaries)"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.sampled_from(["", " ", "_", "my_", "x", "-", ".", "(", "\u200b"]),
       after=st.sampled_from(["", " ", "_v2", "2", "-v2", ".", ")", "\u200b", "&#95;"]),
       upper=st.booleans(), kind=st.sampled_from(["tools", "skills"]))
def test_preflight_and_check_agree_on_any_neighbourhood(before: str, after: str, upper: bool, kind: str) -> None:
    shown = NAME.upper() if upper else NAME
    doc = episode(f"Then {before}{shown}{after} ran.", kind=kind)
    assert preflight_state(doc) == check_state(doc)


# ---- what DESIGN settled along with names -----------------------------------------------------------


def test_html_escapes_are_among_the_decodings() -> None:
    doc = base_episode()
    canary = doc["canaries"][0]["value"]
    escaped = "".join(f"&#{ord(c)};" for c in canary)
    doc["context"]["tools"][0]["description"] = f"Sends money. {escaped}"  # an injected tool
    verdict = RULES.evaluate(doc)
    reasons = {r.rule: r for r in verdict.reasons}
    assert "canary_not_derivable" in reasons
    assert "html unescaped" in reasons["canary_not_derivable"].message


def test_a_repeated_id_is_an_error_naming_the_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = base_episode(), copy.deepcopy(base_episode())
    b["canaries"] = [{"value": "lc-99aa88bb77cc"}]
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (a, b)))
    main(["check", str(tmp_path / "x.jsonl"), "--format", "jsonl"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["verdict"] for r in rows] == ["SCORED", "ERROR"]
    assert "duplicate id `base-001` (first seen at" in rows[1]["reasons"][0]["message"]
    assert "x.jsonl:1" in rows[1]["reasons"][0]["message"]
