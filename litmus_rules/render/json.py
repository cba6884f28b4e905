"""Pure renderers for machines: the verdict JSON (`--format json` and `jsonl`), always valid and
always UTF-8, whatever an episode carried."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from litmus_rules.render.report.summary import Summary


def render_json(verdicts: Sequence[dict[str, Any]], summary: Mapping[str, Any] | None = None) -> str:
    """The `--format json` document: a summary and every verdict's contract JSON.

    `summary` is what the caller counted while the verdicts streamed (render/report/summary.py,
    with provenance); without it, the counts are made here. Its `episodes`, `SCORED`, `REJECTED`
    and `ERROR` keys are those the summary always had; the rest is additive."""
    if summary is None:
        counter = Summary()
        for v in verdicts:
            counter.add(v)
        summary = counter.to_json()
    doc = {"summary": dict(summary), "verdicts": list(verdicts)}
    return dumps(doc, indent=2) + "\n"


def json_line(verdict: dict[str, Any]) -> str:
    return dumps(verdict) + "\n"


def dumps(value: Any, indent: int | None = None) -> str:
    """JSON that is always valid and always encodes as UTF-8, whatever an episode carried: a
    non-finite number (YAML `.nan`, JSON `NaN`) becomes the string "NaN", "Infinity" or "-Infinity",
    and a lone surrogate (`"\\ud800"` is valid JSON input) is written back as its `\\uXXXX`
    escape. Both repairs run only when needed: a plain line costs one dumps and an isascii."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:  # JSON has no NaN or Infinity
        text = json.dumps(_finite(value), ensure_ascii=False, indent=indent)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # Every non-ASCII character of dumps' output sits inside a string literal, where
            # `\\ud800` is exactly the JSON escape of the surrogate: the document means the same.
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        if "\u2028" in text or "\u2029" in text or "\x85" in text:
            # line separators that str.splitlines() (and JavaScript) break on: one verdict, one line
            text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
    return text


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
