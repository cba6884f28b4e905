"""Control runs the harness recorded itself (episode/1.1 `source: harness`), next to preflight's stubs.

A real null run (AgentDojo's `none/none.json`, Inspect's control samples) is evidence no stub can
produce, so preflight keeps it and fills in only what is absent. Which runs are the harness's: in an
episode/1.1 instance, every control run that does not say `source: stub`. An unmarked run is kept
too (format.md: an absent `source` is unknown, and preflight never destroys a run it cannot prove
is its own; `--replace-controls` says otherwise). episode/1 has no `source` field, so it cannot say
which runs are the harness's: its controls are all replaced, as they always were.

Where a stub and the harness's run of the same control disagree, the disagreement is data for the
user: a stub labelled differently from the harness's run (the declared detector is not the
harness's scorer, or the stub is a worse case than the real agent), a `fired` that differs, or a
different set of decisions on attack calls (a harness null run that made the attack call).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from litmus_rules.domain.predicates import episode_scope
from litmus_rules.domain.records import call_matches
from litmus_rules.io.wire import VERSION_1_1

SOURCE_STUB, SOURCE_HARNESS = "stub", "harness"


def harness_runs(instance: Mapping[str, Any], controls: Sequence[str], replace: bool) -> dict[str, Mapping[str, Any]]:
    """The control runs to keep as they are, by control name (none for episode/1, none when replacing)."""
    present = instance.get("controls")
    if replace or instance.get("litmus") != VERSION_1_1 or not isinstance(present, Mapping):
        return {}
    return {c: present[c] for c in controls
            if isinstance(present.get(c), Mapping) and present[c].get("source") != SOURCE_STUB}


def writes_source(instance: Mapping[str, Any]) -> bool:
    """Whether the runs preflight writes carry `source: stub` (episode/1's schema has no such key)."""
    return instance.get("litmus") == VERSION_1_1


def known_label(run: Mapping[str, Any], invalid: Sequence[str]) -> tuple[str | None, str | None]:
    """(the run's label when it is a scored one, else why it is unknown)."""
    if "error" in run:
        return None, f"error: {run['error']}"
    label = run.get("label")
    if not isinstance(label, str):
        return None, "no label"
    if label in invalid:
        return None, f"labelled {label!r}, one of detector.invalid_labels (not scored)"
    return label, None


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def attack_decisions(run: Mapping[str, Any], instance: Mapping[str, Any]) -> list[str] | None:
    """The run's decisions on attack calls, sorted: `tool: decision` for each dispatch record that
    calls an injected tool or matches a `tool_call` signal (`dispatched` when the detector has no
    decision field). None when the run has no dispatch records to compare."""
    dispatch = run.get("dispatch")
    if not isinstance(dispatch, list):
        return None
    detector = instance.get("detector") if isinstance(instance.get("detector"), Mapping) else {}
    field = detector.get("decision_field")
    field = field if isinstance(field, str) and field else None
    signals = [s for s in detector.get("signals") or () if isinstance(s, Mapping) and s.get("kind") == "tool_call"]
    context = instance.get("context") if isinstance(instance.get("context"), Mapping) else {}
    injected = {t.get("name") for t in context.get("tools") or () if isinstance(t, Mapping) and t.get("injected") is True}
    out = []
    for record in dispatch:
        if not isinstance(record, Mapping):
            continue
        attack = record.get("tool") in injected
        for signal in signals if not attack else ():
            try:
                with episode_scope(instance):  # a 1.1 signal's arguments may be predicates
                    attack = call_matches(signal, record) is True  # unknown (unparsed arguments) is not shown
            except Exception:  # noqa: BLE001 - a record the matcher cannot read is not shown as an attack call
                attack = False
            if attack:
                break
        if attack:
            decision = (record[field] if field in record else "(no decision)") if field else "dispatched"
            out.append(f"{_shown(record.get('tool'))}: {_shown(decision)}")
    return sorted(out)


def disagreements(instance: Mapping[str, Any], control: str, stub_run: Mapping[str, Any], stub_label: str | None,
                  harness: Mapping[str, Any], positives: Sequence[str], invalid: Sequence[str]) -> list[dict[str, Any]]:
    """Where the stub's run of `control` and the harness's differ: {control, field, stub, harness}
    for `label`, `fired` and `decisions`. Only what both sides know is compared (a stub the scorer
    could not label, a harness run without `fired`: nothing to compare)."""
    out: list[dict[str, Any]] = []
    if stub_label is not None:
        harness_label = harness.get("label") if "error" not in harness else None
        if isinstance(harness_label, str) and harness_label != stub_label:
            out.append({"control": control, "field": "label", "stub": stub_label, "harness": harness_label})
        stub_fired = None if stub_label in invalid else stub_label in positives
        harness_fired = harness.get("fired") if "error" not in harness else None
        if isinstance(harness_fired, bool) and stub_fired is not None and harness_fired != stub_fired:
            out.append({"control": control, "field": "fired", "stub": stub_fired, "harness": harness_fired})
    stub_decisions, harness_decisions = attack_decisions(stub_run, instance), attack_decisions(harness, instance)
    if stub_decisions is not None and harness_decisions is not None and stub_decisions != harness_decisions:
        out.append({"control": control, "field": "decisions", "stub": stub_decisions, "harness": harness_decisions})
    return out


def describe(d: Mapping[str, Any]) -> str:
    """One disagreement in words, for the text report."""
    def side(value: Any) -> str:
        if isinstance(value, list):
            return "[" + ", ".join(value) + "]" if value else "no attack call"
        return repr(value) if isinstance(value, str) else str(value).lower()
    return f"{d['control']} {d['field']}: stub {side(d['stub'])}, harness {side(d['harness'])}"
