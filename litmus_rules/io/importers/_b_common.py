"""Helpers shared by the AgentDojo, InjecAgent and garak importers: reading JSON records one at a
time, locating an injected payload inside a larger text, and the `unknowns` notes.

Nothing here guesses: a payload is marked injected only where its text (or the same text as a
Python or JSON string literal writes it) is found, and a record that does not parse is reported at
its position.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from litmus_rules.episode_format import VERSION_1_1
from litmus_rules.io.importers._common import pointer, unknown  # noqa: F401 - the importers' one definition, re-exported

TAG = VERSION_1_1
# One JSON value read from a stream: a line of JSONL, an element of a top-level array. Bigger
# values are reported as a Problem instead of being buffered without end.
MAX_RECORD_CHARS = 16 * 2**20
_CHUNK = 1 << 16
# A payload longer than this is searched verbatim only (the whitespace-tolerant search builds one
# regex token per word).
_MAX_FLEX_WORDS = 2000


class RecordError(Exception):
    def __init__(self, position: str, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


def text_part(text: str, injected: bool = False) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": text}
    if injected:
        part["injected"] = True
    return part


# --- locating a payload -----------------------------------------------------------------------


def _variants(payload: str) -> list[str]:
    """The payload as it may be written inside a tool result: verbatim, as the body of a Python
    string literal (`repr`, what `str(dict)` writes), or of a JSON string."""
    out = [payload]
    for lit in (repr(payload)[1:-1], json.dumps(payload)[1:-1], json.dumps(payload, ensure_ascii=False)[1:-1]):
        if lit not in out:
            out.append(lit)
    return out


def find_payload(text: str, payload: str, start: int = 0) -> tuple[int, int] | None:
    """Where `payload` occurs in `text` at or after `start`: verbatim or as a string literal's body,
    else with any run of whitespace standing for any other (YAML folds long lines). None: absent."""
    if not payload.strip():
        return None
    best: tuple[int, int] | None = None
    for v in _variants(payload):
        at = text.find(v, start)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, at + len(v))
    if best is not None:
        return best
    words = payload.split()
    if not words or len(words) > _MAX_FLEX_WORDS:
        return None
    # Literal words separated by `\s+`: no nested quantifier, so matching stays linear.
    m = re.compile(r"\s+".join(re.escape(w) for w in words)).search(text, start)
    return (m.start(), m.end()) if m else None


def split_injected(text: str, payloads: list[str]) -> tuple[list[dict[str, Any]], set[int]]:
    """`text` as content parts with every occurrence of each payload a part marked injected.
    Returns the parts and the indexes of the payloads found."""
    spans: list[tuple[int, int, int]] = []
    for k, payload in enumerate(payloads):
        at = 0
        while True:
            found = find_payload(text, payload, at)
            if found is None:
                break
            spans.append((found[0], found[1], k))
            at = max(found[1], found[0] + 1)
    spans.sort()
    parts: list[dict[str, Any]] = []
    found_ids: set[int] = set()
    pos = 0
    for s, e, k in spans:
        if s < pos:  # overlaps one already taken (a payload inside another)
            continue
        if s > pos:
            parts.append(text_part(text[pos:s]))
        parts.append(text_part(text[s:e], injected=True))
        found_ids.add(k)
        pos = e
    if pos < len(text) or not parts:
        parts.append(text_part(text[pos:]))
    return parts, found_ids


# --- reading JSON records one at a time --------------------------------------------------------


def iter_json_values(path: Path) -> Iterator[tuple[str, Any] | RecordError]:
    """The records of a JSON file, streamed: the elements of a top-level array (position
    `#/i`), or the lines of JSONL (position `line n`; blank lines skipped). A single top-level
    object that spans several lines is one record (`#`). A record that does not parse is a
    RecordError at its position and the reading goes on where that is possible."""
    with open(path, encoding="utf-8") as fh:
        head = ""
        while True:
            chunk = fh.read(1)
            if not chunk:
                return
            if not chunk.isspace():
                head = chunk
                break
        fh.seek(0)
        if head == "[":
            yield from _iter_array(fh)
        else:
            yield from _iter_lines(fh, path)


def _iter_lines(fh: Any, path: Path) -> Iterator[tuple[str, Any] | RecordError]:
    any_ok = False
    tried_whole = False
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        if len(line) > MAX_RECORD_CHARS:
            yield RecordError(f"line {n}", f"record longer than {MAX_RECORD_CHARS} characters")
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            if not any_ok and not tried_whole:
                # Maybe not JSONL but one object written over several lines.
                tried_whole = True
                whole = _whole(path)
                if whole is not None:
                    yield "#", whole
                    return
            yield RecordError(f"line {n}", f"not JSON: {e.msg} at column {e.colno}")
            continue
        any_ok = True
        yield f"line {n}", value


def _whole(path: Path) -> Any:
    if path.stat().st_size > MAX_RECORD_CHARS:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def _iter_array(fh: Any) -> Iterator[tuple[str, Any] | RecordError]:
    dec = json.JSONDecoder()
    buf = fh.read(_CHUNK)
    pos = buf.index("[") + 1
    index = 0
    eof = False

    def fill() -> bool:
        nonlocal buf, pos, eof
        more = fh.read(_CHUNK)
        if not more:
            eof = True
            return False
        buf = buf[pos:] + more
        pos = 0
        return True

    def skip_ws() -> None:
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos].isspace():
                pos += 1
            if pos < len(buf) or not fill():
                return

    while True:
        skip_ws()
        if pos >= len(buf):
            yield RecordError(f"#/{index}", "the array is not closed (truncated file)")
            return
        if buf[pos] == "]":
            return
        if index > 0:
            if buf[pos] != ",":
                yield RecordError(f"#/{index}", f"expected `,` or `]` between array elements, found {buf[pos]!r}")
                return
            pos += 1
            skip_ws()
        while True:
            try:
                value, end = dec.raw_decode(buf, pos)
            except json.JSONDecodeError as e:
                if not eof and len(buf) - pos <= MAX_RECORD_CHARS and fill():
                    continue
                yield RecordError(f"#/{index}", f"not JSON: {e.msg}")
                return
            if end == len(buf) and not eof and fill():  # a number may go on in the next chunk
                continue
            break
        yield f"#/{index}", value
        pos = end
        index += 1
        if pos > _CHUNK:
            buf, pos = buf[pos:], 0
