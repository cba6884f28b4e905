"""Reading transcripts and dispatch records the same way everywhere: in rules and in preflight."""

from __future__ import annotations

from typing import Any, Mapping

from litmus_rules.signals import same_argument_value


def transcript_text(transcript: Any) -> str:
    """A transcript's text: a string as it is, or a list of messages' contents joined by newlines
    (content parts `{type: text, text: ...}` contribute their text). Raises TypeError otherwise."""
    if isinstance(transcript, str):
        return transcript
    if not isinstance(transcript, list):
        raise TypeError(f"a transcript is a string or a list of messages, not {type(transcript).__name__}")
    out = []
    for message in transcript:
        content = message.get("content") if isinstance(message, Mapping) else message
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
        elif content is not None:
            out.append(str(content))
    return "\n".join(out)


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
