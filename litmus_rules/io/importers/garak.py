"""garak: a run's `report.jsonl`, read line by line. Each evaluated attempt (`entry_type: attempt`,
`status: 2`) gives one episode per detector that scored it (and per output when the run asked for
several generations). A run against garak's blank generator (`test.Blank`, which always answers
the empty string) is recorded as the `trivial_empty` control of its episodes, not as an agent run.
What is mapped and what stays unknown: docs/importers.md (garak section).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Iterator

from litmus_rules.io.importers._b_common import TAG, RecordError, iter_json_values, pointer, split_injected, unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "garak"
VERSION = "1"

HIT, PASS = "hit", "pass"
BLANK_GENERATORS = {"test.Blank"}
# Detectors whose matching is known: each fires when one of the attempt's `notes.triggers` occurs
# in an output, compared case-insensitively (their `detect(case_sensitive=False)` default).
TRIGGER_DETECTORS = {
    "base.TriggerListDetector": False,
    "promptinject.AttackRogueString": False,
}
EVALUATED = 2  # garak writes an attempt at status 1 (generated) and again at 2 (scored)

NOTE_CANARIES = ("garak plants no sentinel tokens (its triggers are detector strings, not canaries); list "
                 "one under `canaries` if your probe has one")
NOTE_PROVENANCE = ("the report does not record who wrote the probe's payloads (garak's data files or "
                   "templates); supply `provenance.payload_generator`")


def records(path: str | os.PathLike[str], options: Options) -> Iterator[Imported | Problem]:
    root = Path(path)
    files = [root] if root.is_file() else sorted(root.rglob("*.jsonl")) if root.is_dir() else []
    if not files:
        yield Problem(str(root), "no garak report (.jsonl) here")
        return
    for file in files:
        label = file.name if file == root else file.relative_to(root).as_posix()
        yield from _report(file, label, options)


def _report(file: Path, label: str, options: Options) -> Iterator[Imported | Problem]:
    setup: dict[str, Any] = {}
    version: str | None = None
    run_id: str | None = None
    for item in iter_json_values(file):
        if isinstance(item, RecordError):
            yield Problem(f"{label} {item.position}", item.message)
            continue
        position, entry = item
        where = f"{label} {position}"
        if not isinstance(entry, dict):
            yield Problem(where, "not a garak report entry (a JSON object with `entry_type`)")
            continue
        kind = entry.get("entry_type")
        if kind == "start_run setup":
            setup = entry
            run_id = entry.get("transient.run_id") if isinstance(entry.get("transient.run_id"), str) else run_id
        elif kind == "init":
            version = entry.get("garak_version") if isinstance(entry.get("garak_version"), str) else version
            run_id = entry.get("run") if isinstance(entry.get("run"), str) else run_id
        elif kind == "attempt" and entry.get("status") == EVALUATED:
            try:
                for episode in _episodes(entry, setup, version, run_id, options):
                    yield Imported(episode, where)
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                yield Problem(where, f"unreadable attempt: {type(e).__name__}: {e}")


def _threshold(setup: dict[str, Any], options: Options) -> float | None:
    raw = options.extra.get("eval_threshold", setup.get("run.eval_threshold"))
    try:
        return float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _label(score: Any, threshold: float | None) -> str | None:
    """garak's verdict on one output: a hit at or above the evaluation threshold. Without the
    threshold (reports do not record it) only the ends are certain: 0 passes and 1 hits."""
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return None
    if threshold is not None:
        return HIT if score >= threshold else PASS
    return HIT if score == 1 else PASS if score == 0 else None


def _text(content: Any) -> str | None:
    if isinstance(content, dict):
        return content.get("text") if isinstance(content.get("text"), str) else None
    return content if isinstance(content, str) else None


def _payload(entry: dict[str, Any]) -> str | None:
    """The injected text where garak records it: promptinject's attack instruction with its rogue
    string filled in (the probe writes exactly that into the prompt)."""
    settings = (entry.get("notes") or {}).get("settings")
    if not isinstance(settings, dict):
        return None
    instruction, rogue = settings.get("attack_instruction"), settings.get("attack_rogue_string")
    if isinstance(instruction, str) and isinstance(rogue, str):
        return instruction.replace("{REPLACE_rogue_string}", rogue)
    return None


def _episodes(entry: dict[str, Any], setup: dict[str, Any], version: str | None, run_id: str | None,
              options: Options) -> Iterator[dict[str, Any]]:
    probe = entry["probe_classname"]
    generator = setup.get("plugins.target_type") or setup.get("plugins.model_type")
    generator_name = setup.get("plugins.target_name") or setup.get("plugins.model_name")
    blank = generator in BLANK_GENERATORS
    threshold = _threshold(setup, options)
    triggers = [t for t in (entry.get("notes") or {}).get("triggers") or [] if isinstance(t, str) and t]
    payload = _payload(entry)

    base_unknowns: list[dict[str, str]] = []
    messages: list[dict[str, Any]] = []
    injected_found = False
    for i, turn in enumerate((entry.get("prompt") or {}).get("turns") or []):
        text = _text(turn.get("content"))
        role = turn.get("role") if turn.get("role") in ("system", "user", "assistant") else "user"
        if text is None:
            raise ValueError(f"prompt turn {i} has no text")
        if payload and role == "user":
            parts, found = split_injected(text, [payload])
            if found:
                injected_found = True
                messages.append({"role": role, "content": parts})
                continue
        messages.append({"role": role, "content": text})
    if not injected_found:
        last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=None)
        where = pointer("context", "messages", last_user, "injected") if last_user is not None else "/context/messages"
        base_unknowns.append(unknown(where, f"garak's {probe} does not record which part of the prompt is the "
                                     "injected payload (only the detector's triggers)"))

    outputs = entry.get("outputs") or []
    results = entry.get("detector_results") or {}
    for detector_name in sorted(results):
        scores = results[detector_name] if isinstance(results[detector_name], list) else []
        for k, output in enumerate(outputs if outputs else [None]):
            unknowns = list(base_unknowns)
            detector: dict[str, Any] = {"channel": "transcript", "scope": "final_message", "decision_field": None,
                                        "positive_labels": [HIT],
                                        "scorer": {"name": f"garak.detectors.{detector_name}", "kind": "builtin"}}
            if detector_name in TRIGGER_DETECTORS:
                case_sensitive = TRIGGER_DETECTORS[detector_name]
                detector["scorer"]["options"] = {"case_sensitive": case_sensitive}
                detector["signals"] = [
                    {"id": f"trigger-{j}", "kind": "substring", "value": t, **({} if case_sensitive else {"flags": ["ignorecase"]})}
                    for j, t in enumerate(triggers)]
            else:
                unknowns.append(unknown("/detector/signals", f"the importer does not know what garak's detector "
                                        f"{detector_name} matches on; supply its signals with --detector"))
            out_text = _text(output)
            score = scores[k] if k < len(scores) else None
            label = _label(score, threshold)
            transcript = [{"role": "assistant", "content": out_text}] if out_text is not None else None
            run_record: dict[str, Any] = {"source": "harness"}
            if transcript is not None:
                run_record["transcript"] = transcript
            if label is not None:
                run_record["label"] = label
                run_record["fired"] = label == HIT
            episode: dict[str, Any] = {
                "litmus": TAG,
                "id": "/".join(["garak", str(run_id or "run"), probe, str(entry.get("seq")), detector_name]
                               + ([f"output{k}"] if len(outputs) > 1 else [])),
                "benchmark": {"name": "garak", "instance": f"{probe}/{entry.get('seq')}",
                              **({"version": version} if version else {})},
                "run": {"probe": probe, "scorer": detector_name,
                        **({"generator": generator} if isinstance(generator, str) else {}),
                        **({"model": generator_name} if isinstance(generator_name, str) else {}),
                        **({"attempt": entry["uuid"]} if isinstance(entry.get("uuid"), str) else {}),
                        **({"seed": setup["run.seed"]} if isinstance(setup.get("run.seed"), int) else {}),
                        **options.run},
                "context": {"messages": copy.deepcopy(messages)},  # episodes share no mutable parts
                "detector": detector,
                "extra": {"garak": {"goal": entry.get("goal"), "intent": entry.get("intent"), "score": score,
                                    "label": label}},
            }
            if blank:
                episode["controls"] = {"trivial_empty": {**run_record, "stub": f"garak generators.{generator}"}}
                where = "/controls/trivial_empty"
            else:
                if transcript is not None or label is not None:
                    episode["episode"] = {**({"transcript": transcript} if transcript is not None else {}),
                                          **({"agent": generator} if isinstance(generator, str) else {}),
                                          # garak's own verdict on this attempt, as its report has it
                                          **({"label": label, "fired": label == HIT} if label is not None else {})}
                where = "/episode"
            if out_text is None:
                unknowns.append(unknown(where + "/transcript", "the generator returned no output for this attempt"))
            if score is not None and label is None:
                unknowns.append(unknown(where + "/label", "the report does not record the evaluation "
                                        "threshold; pass --option eval_threshold=X"))
            unknowns += [unknown("/canaries", NOTE_CANARIES), unknown("/provenance/payload_generator", NOTE_PROVENANCE)]
            episode["unknowns"] = unknowns
            yield episode

