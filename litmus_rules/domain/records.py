"""Reading transcripts and dispatch records the same way everywhere: in rules and in preflight."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litmus_rules.domain.predicates import satisfies
from litmus_rules.domain.walk import walk_value


def _without_clock(message: Any) -> Any:
    """A 1.1 message without its integer `step` (the run's clock, not text the agent wrote);
    episode/1 messages have no `step`, so their text is unchanged."""
    if isinstance(message, Mapping) and message.get("step").__class__ is int:
        return {k: v for k, v in message.items() if k != "step"}
    return message


def transcript_text(transcript: Any) -> str:
    """A transcript's text: a string as it is, or every text of a list of messages, one per line,
    in order: each message read as the context's messages are (walk.py), so any content-part shape
    contributes all its text (`text`, `content`, `output`, a tool_use's `input`, a document's
    source, nested parts, keys nobody planned for) and nothing is dropped, except a message's
    integer `step` (episode/1.1's clock). Raises TypeError for anything else, and WalkLimit (an
    EvaluationError) past the walk's bounds."""
    if isinstance(transcript, str):
        return transcript
    if not isinstance(transcript, list):
        raise TypeError(f"a transcript is a string or a list of messages, not {type(transcript).__name__}")
    messages = [_without_clock(m) for m in transcript]
    return "\n".join([s.text for s in walk_value(messages, "transcript", "message")])


def final_message_text(transcript: Any) -> str:
    """What a `scope: final_message` scorer reads: the text of the last assistant message of a list
    of messages ("" when the agent said nothing), or a string transcript whole (a harness that
    records one output text, like garak's `outputs`, records only the final message)."""
    if isinstance(transcript, list):
        last = next((m for m in reversed(transcript) if isinstance(m, Mapping) and m.get("role") == "assistant"), None)
        return transcript_text([last]) if last is not None else ""
    return transcript_text(transcript)


def call_matches(signal: Mapping[str, Any], record: Mapping[str, Any]) -> bool | None:
    """Does a dispatch record call the signal's tool with every argument the signal names? None
    when that is unknown: the record's `arguments` stayed a text (episode/1.1's wire normalisation
    keeps an unparseable JSON text as written and lists it in `unknowns`), so its values are not known.

    Values compare as `fillable_call` compares them with schema values: raw, normalised, or as
    canonical (percent-decoded) paths, so `/etc/../etc/passwd` and `%2Fetc%2Fpasswd` are `/etc/passwd`;
    two numbers as numbers. In a 1.1 episode an argument may be a predicate (predicates.py).
    """
    if record.get("tool") != signal.get("tool"):
        return False
    wanted = signal.get("arguments") or {}
    actual = record.get("arguments")
    if isinstance(actual, str) and wanted:
        return None
    actual = actual if isinstance(actual, Mapping) else {}
    for name, want in wanted.items():
        if name not in actual:
            return False
        if not satisfies(want, actual[name]):
            return False
    return True
