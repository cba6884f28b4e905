"""Pure renderers for machines: the verdict JSON (`--format json` and `jsonl`), always valid and
always UTF-8, whatever an episode carried.

Written with orjson when it is importable (8-12x faster than `json.dumps` on verdicts), else with
the standard library; both give the same JSON values (the whitespace differs: orjson writes a line
without spaces after `:` and `,`). A document orjson refuses (a lone surrogate, an integer past 64
bits, a key that is not a string) is written by the standard library path instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Sequence

from litmus_rules.engine.verdict import VerdictJSON
from litmus_rules.render.report.summary import Summary

try:
    import orjson as _orjson
except ImportError:  # an optional speed-up: the standard library writes the same JSON
    _orjson = None  # type: ignore[assignment]

# Line separators that str.splitlines() (and JavaScript) break on: escaped, so one verdict is one line.
_SEPARATORS = ("\u2028", "\u2029", "\x85")
_SEPARATOR_BYTES = tuple(c.encode("utf-8") for c in _SEPARATORS)


def orjson_available() -> bool:
    return _orjson is not None


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
    a lone surrogate (`"\\ud800"` is valid JSON input) is written back as its `\\uXXXX` escape, and
    U+2028, U+2029 and U+0085 are escaped, so that a one-line document stays one line. `indent` 2
    (or None: one line) is written by orjson, any other by the standard library."""
    if _orjson is not None and indent in (None, 2):
        text = _orjson_dumps(value, indent)
        if text is not None:
            return text
    return stdlib_dumps(value, indent)


def _orjson_dumps(value: Any, indent: int | None) -> str | None:
    """orjson's document, or None when orjson refuses it (the caller falls back)."""
    assert _orjson is not None
    if _has_nonfinite(value):  # orjson would write null: the names need the standard library's pass
        value = _finite(value)
    try:
        out = _orjson.dumps(value, option=_orjson.OPT_INDENT_2 if indent == 2 else 0)
    except (TypeError, _orjson.JSONEncodeError):  # lone surrogate, int past 64 bits, non-str key
        return None
    if not out.isascii() and any(sep in out for sep in _SEPARATOR_BYTES):
        out = out.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029").replace(b"\xc2\x85", b"\\u0085")
    return out.decode("utf-8")


def stdlib_dumps(value: Any, indent: int | None = None) -> str:
    """`dumps` with the standard library only (the path without orjson, and its fallback)."""
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
            text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
    return text


def _has_nonfinite(value: Any) -> bool:
    """Does `value` hold a NaN or an infinity? Not searched inside a `VerdictJSON`, which has none."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        cls = item.__class__
        if cls is dict or cls is list:
            push(item.values() if cls is dict else item)
        elif cls is float:
            if item - item != 0:
                return True
        elif cls is VerdictJSON or cls is str:
            continue
        elif isinstance(item, Mapping):
            push(item.values())
        elif isinstance(item, (list, tuple)):
            push(item)
        elif isinstance(item, float) and not math.isfinite(item):
            return True
    return False


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
