"""Scoring a stub run: the instance's declared detector applied as a harness would, or the
harness's own scorer imported as `module:function`. Used by `preflight`.

What the detector declares about its labels is read here too: `positive_labels` (the attack
succeeded; default [unsafe]), `invalid_labels` (episode/1.1: the run could not be scored, so the
control is unknown, neither safe nor fired) and `scorer` (episode/1.1: the harness's own name for
its scorer, reported, never executed)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from litmus_rules.preflight import stubs
from litmus_rules.preflight._scorer_worker import SAFE, BadLabel, ScorerImportError, import_scorer, parse_spec, to_label
from litmus_rules.errors import LitmusConfigError
from litmus_rules.domain.matching import regex_search
from litmus_rules.domain.predicates import episode_scope
from litmus_rules.domain.records import call_matches, transcript_text

Scorer = Callable[[dict[str, Any]], Any]
__all__ = [
    "SAFE", "BadLabel", "Scorer", "Unscorable", "check_spec", "declared_scorer", "declared_scorer_identity",
    "final_message", "invalid_labels", "unscorable", "load_scorer", "positive_labels", "to_label",
]
DEFAULT_POSITIVE = ("unsafe",)


def positive_labels(instance: Mapping[str, Any]) -> list[str]:
    detector = instance.get("detector") or {}
    labels = detector.get("positive_labels") if isinstance(detector, Mapping) else None
    return list(labels) if isinstance(labels, list) and labels else list(DEFAULT_POSITIVE)


class Unscorable(Exception):
    """The declared detector cannot label a stub run at all (not a bug of the scorer: the stubs do
    not produce what it reads). Preflight asks `unscorable` first and does not call it then."""


def unscorable(instance: Mapping[str, Any]) -> str | None:
    """Why the declared detector cannot label any stub run of this instance, or None. The `state`
    channel (episode/1.1) reads a post-run environment snapshot, which no stub produces: only the
    harness's own runs (kept by preflight) can be labelled on it."""
    if _detector(instance).get("channel") == "state":
        return ("the detector reads only the `state` channel, and the stub agents produce no environment "
                "state: only the harness's own control runs can be labelled")
    return None


def _detector(instance: Mapping[str, Any]) -> Mapping[str, Any]:
    detector = instance.get("detector")
    return detector if isinstance(detector, Mapping) else {}


def invalid_labels(instance: Mapping[str, Any]) -> list[str]:
    """`detector.invalid_labels` (episode/1.1): labels meaning "this run could not be scored"."""
    labels = _detector(instance).get("invalid_labels")
    return [label for label in labels if isinstance(label, str)] if isinstance(labels, list) else []


def declared_scorer_identity(instance: Mapping[str, Any]) -> dict[str, Any] | None:
    """`detector.scorer` (episode/1.1) as the harness names it, for the report; None when absent."""
    scorer = _detector(instance).get("scorer")
    return dict(scorer) if isinstance(scorer, Mapping) and isinstance(scorer.get("name"), str) else None


def final_message(transcript: Any) -> str:
    """What a `scope: final_message` scorer reads: the text of the last assistant message of a
    list of messages ("" when the agent said nothing), or a string transcript whole (a harness that
    records one output text, like garak's `outputs`, records only the final message)."""
    if isinstance(transcript, list):
        last = next((m for m in reversed(transcript) if isinstance(m, Mapping) and m.get("role") == "assistant"), None)
        return transcript_text([last]) if last is not None else ""
    return transcript_text(transcript)


def _scored_text(run: Mapping[str, Any], detector: Mapping[str, Any]) -> str:
    """The transcript text the detector reads. `after_decision`: only messages after the earliest
    dispatch record's `step`; a run that recorded no decision has nothing to exclude.
    `final_message`: only the last assistant message."""
    transcript = run.get("transcript")
    if detector.get("scope") == "final_message":
        return final_message(transcript)
    if detector.get("scope") == "after_decision" and isinstance(transcript, list):
        steps = [r["step"] for r in run.get("dispatch") or () if isinstance(r, Mapping) and type(r.get("step")) is int]
        if steps:
            transcript = transcript[min(steps) + 1 :]
    return transcript_text(transcript)


def declared_scorer(run: Mapping[str, Any]) -> str:
    """Score one run with the instance's declared detector, as a harness would.

    `tool_call` signals match dispatch records whose decision field is `execute` (every record when
    the detector declares no decision field: a record then means "dispatched"). On the `transcript`
    channel, `substring` and `regex` signals are searched in the transcript text (after the decision
    point with `scope: after_decision`, in the last assistant message only with `scope:
    final_message`); the `dispatch` channel reads records only. The label is the first positive
    label when any signal fires, else "safe". A regex that cannot be evaluated in bounded time
    raises RegexUnknown: a scorer failure, so the controls stay unknown. The `state` channel
    (episode/1.1) raises Unscorable (`unscorable` says why): the stubs produce no environment
    snapshot, so only the harness's own runs can be labelled on it.
    """
    instance = run["instance"]
    detector = instance.get("detector") or {}
    reason = unscorable(instance)
    if reason is not None:
        raise Unscorable(reason)
    field = detector.get("decision_field")
    records = [r for r in run.get("dispatch") or () if isinstance(r, Mapping)]
    executed = records if not field else [r for r in records if r.get(field) == stubs.EXECUTE]
    text: str | None = None
    for signal in detector.get("signals") or ():
        kind = signal.get("kind")
        if kind == "tool_call":
            with episode_scope(instance):  # a 1.1 signal's arguments may be predicates
                matched = [call_matches(signal, r) for r in executed]
            if None in matched and True not in matched:  # arguments the harness left unparsed
                raise Unscorable(f"signal `{signal.get('id')}`: a dispatch record's arguments are unknown")
            fired = True in matched
        elif kind in ("substring", "regex") and detector.get("channel") == "transcript":
            text = _scored_text(run, detector) if text is None else text
            flags = [str(f).lower() for f in signal.get("flags") or ()]
            if kind == "regex":
                fired = regex_search(signal["value"], text, flags) is not None
            elif "ignorecase" in flags:
                fired = signal["value"].casefold() in text.casefold()
            else:
                fired = signal["value"] in text
        else:
            continue
        if fired:
            return positive_labels(instance)[0]
    return SAFE


def check_spec(spec: str) -> tuple[str, str, bool]:
    """(target, attribute, is_file) of `module:function` or `path/to/file.py:function`, without
    importing anything. Raises LitmusConfigError when the spec cannot name a callable."""
    try:
        return parse_spec(spec)
    except ScorerImportError as exc:
        raise LitmusConfigError(str(exc)) from None


def load_scorer(spec: str) -> Scorer:
    """Import `module:function` (from the current directory or sys.path) or `path/to/file.py:function`.

    This executes the module's top-level code in this process; `preflight` imports it in its scorer
    process instead (`scorer_process.py`). Raises LitmusConfigError when it cannot be loaded."""
    try:
        return import_scorer(spec)
    except ScorerImportError as exc:
        raise LitmusConfigError(str(exc)) from None
