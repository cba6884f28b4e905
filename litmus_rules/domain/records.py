"""Reading transcripts and dispatch records the same way everywhere: in rules and in preflight."""

from __future__ import annotations

from typing import Any, Mapping

from litmus_rules.domain.signals import same_argument_value
from litmus_rules.domain.walk import walk_value


def transcript_text(transcript: Any) -> str:
    """A transcript's text: a string as it is, or every text of a list of messages, one per line,
    in order: each message read as the context's messages are (walk.py), so any content-part shape
    contributes all its text (`text`, `content`, `output`, a tool_use's `input`, a document's
    source, nested parts, keys nobody planned for) and nothing is dropped. Raises TypeError for
    anything else, and WalkLimit (an EvaluationError) past the walk's bounds."""
    if isinstance(transcript, str):
        return transcript
    if not isinstance(transcript, list):
        raise TypeError(f"a transcript is a string or a list of messages, not {type(transcript).__name__}")
    return "\n".join([s.text for s in walk_value(transcript, "transcript", "message")])


def call_matches(signal: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Does a dispatch record call the signal's tool with every argument value the signal names?

    Values compare as `fillable_call` compares them with schema values: raw, normalised, or as
    canonical (percent-decoded) paths, so `/etc/../etc/passwd` and `%2Fetc%2Fpasswd` are `/etc/passwd`.
    """
    if record.get("tool") != signal.get("tool"):
        return False
    actual = record.get("arguments")
    actual = actual if isinstance(actual, Mapping) else {}
    for name, want in (signal.get("arguments") or {}).items():
        if name not in actual:
            return False
        if not same_argument_value(want, actual[name]):
            return False
    return True
