"""What several format modules share: reading JSON documents with positions and limits, the
shape of an `unknowns` entry, labels from scores, tools from provider tool definitions."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

from litmus_rules.episode_format import json_pointer
from litmus_rules.io.importers._contract import Problem

MAX_JSON_FILE = 256 * 2**20  # a whole-file JSON document (a .json log) is parsed in one piece
MAX_LINE = 64 * 2**20  # one JSONL line


def unknown(path: str, note: str) -> dict[str, str]:
    """An `unknowns` entry: the JSON pointer of a fact the input does not record, and why/what to supply."""
    return {"path": path, "note": note}


def pointer(*parts: object) -> str:
    """A JSON Pointer from path parts (RFC 6901 escapes)."""
    return json_pointer(parts)


def label(value: Any) -> str | None:
    """A score as a label string: strings as they are, booleans `true`/`false`, numbers as JSON
    writes them; anything else (a dict of several values) has no single label."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return None


def json_documents(path: str) -> Iterator[tuple[str, Any] | Problem]:
    """(position, parsed value) for each document of a JSON or JSONL file: JSONL (by extension, or
    a first line that is a whole JSON value followed by more lines) is read line by line; anything
    else is one JSON value, parsed whole (within `MAX_JSON_FILE`)."""
    with open(path, "rb") as fh:
        first = fh.readline(MAX_LINE + 1)
        second = fh.readline(MAX_LINE + 1)
        jsonl = path.lower().endswith(".jsonl") or (_whole_value(first) and bool(second.strip()) and _whole_value(second))
        fh.seek(0)
        if jsonl:
            for number, raw in enumerate(iter(lambda: fh.readline(MAX_LINE + 1), b""), 1):
                if len(raw) > MAX_LINE:
                    yield Problem(f"line {number}", f"line longer than {MAX_LINE // 2**20} MiB: not read")
                    return
                if not raw.strip():
                    continue
                try:
                    yield f"line {number}", json.loads(raw)
                except (ValueError, RecursionError) as exc:
                    yield Problem(f"line {number}", f"not valid JSON: {_json_error(exc)}")
            return
        if os.fstat(fh.fileno()).st_size > MAX_JSON_FILE:
            yield Problem("", f"file over the {MAX_JSON_FILE // 2**20} MiB limit for one JSON document")
            return
        raw = fh.read()
    try:
        yield "", json.loads(raw)
    except (ValueError, RecursionError) as exc:
        yield Problem("", f"not valid JSON: {_json_error(exc)}")


def _whole_value(line: bytes) -> bool:
    try:
        json.loads(line)
        return True
    except (ValueError, RecursionError):
        return False


def _json_error(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).splitlines()[0] if str(exc) else "cannot decode"


def tool(name: str, description: Any = None, schema: Any = None, **more: Any) -> dict[str, Any]:
    """An episode tool: `input_schema` is the provider's parameters schema, unchanged."""
    out: dict[str, Any] = {"name": name}
    if isinstance(description, str):
        out["description"] = description
    if isinstance(schema, Mapping):
        out["input_schema"] = dict(schema)
    out.update({k: v for k, v in more.items() if v is not None})
    return out
