"""JSON text, read strictly and located: one value decoded at an offset (a repeated key is an error,
as it is in YAML), and the line of a path inside a JSON text, found by stepping over siblings with
the C decoder. No validation here: that is `load`.

Finding repeated keys with the stdlib decoder needs a Python call per object (`_unique_pairs`),
which made decoding 1.5-3x slower than a plain `json.loads`. When jiter is installed (an optional
accelerator), a document that is the whole text is first read by it with `catch_duplicate_keys`,
in Rust: no cheaper exact check exists in the stdlib (counting keys in the text against entries in
the value costs a pass over the text plus a walk or a hook per object, over 20% either way). jiter
only ever answers "this value" for texts the stdlib path reads to the same value; everything it
refuses (a repeated key, a lone surrogate escape, 200 levels, an integer past Python's digit limit,
any syntax error) is read again by the stdlib path, whose messages and limits are the contract.
tests/test_json_duplicates*.py checks both on generated texts."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from litmus_rules.io.inputs import LIMIT, UNPARSEABLE

__all__ = ["BadInput", "decode", "json_line", "short", "ws"]


def short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_WS = re.compile(r"[ \t\n\r]*")
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_skip = json.JSONDecoder().raw_decode


def ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def json_line(text: str, pos: int, path: tuple[Any, ...]) -> int | None:
    """Line of `path` in the JSON document at `pos`: a small scan that steps over siblings with the
    C decoder. None when the text is not the JSON expected."""
    mark = pos = ws(text, pos)
    try:
        for part in path:
            if text[pos] == "{" and isinstance(part, str):
                found, pos = None, ws(text, pos + 1)
                while text[pos] != "}":
                    key, after = _scanstring(text, pos + 1)
                    value_at = ws(text, ws(text, after) + 1)  # past the ':'
                    if key == part:
                        found = (pos, value_at)  # scan on: the last duplicate wins
                    pos = ws(text, _skip(text, value_at)[1])
                    pos = ws(text, pos + 1) if text[pos] == "," else pos
                if found is None:
                    return None
                mark, pos = found
            elif text[pos] == "[" and isinstance(part, int):
                pos = ws(text, pos + 1)
                for _ in range(part):
                    pos = ws(text, ws(text, _skip(text, pos)[1]) + 1)
                mark = pos
            else:
                return None
    except (ValueError, IndexError, RecursionError):
        return None
    return text.count("\n", 0, mark) + 1


class BadInput(Exception):
    """A document that does not parse; `pos` is the offset it refers to (-1: where it starts)."""

    def __init__(self, message: str, code: str = UNPARSEABLE, pos: int = -1) -> None:
        super().__init__(message)
        self.message, self.code, self.pos = message, code, pos


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # plain json keeps the last of repeated keys, silently
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise BadInput(f"duplicate key `{short(key)}`")
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)
_JSON_WS = " \t\n\r"

_jiter: Any = ...  # the optional accelerator, looked up on first use (None: not installed)


def _accelerator() -> Any:
    global _jiter
    if _jiter is ...:
        try:
            import jiter
        except ImportError:  # optional: without it, every document takes the stdlib path
            jiter = None
        _jiter = jiter
    return _jiter


def decode(text: str, at: int, max_depth: int) -> tuple[Any, int]:
    """One JSON value at `at`; every failure becomes a BadInput."""
    fast = _accelerator()
    if fast is not None and ws(text, 0) == at:  # the document may be the whole text (JSONL, one object)
        try:
            value = fast.from_json(text.encode("utf-8"), catch_duplicate_keys=True, cache_mode="keys")
        except Exception:  # noqa: BLE001 -- whatever jiter refuses, for whatever reason
            pass  # read again below: the stdlib path says what is wrong, as it always did
        else:
            return value, len(text.rstrip(_JSON_WS))
    return _exact(text, at, max_depth)


def _exact(text: str, at: int, max_depth: int) -> tuple[Any, int]:
    """The stdlib path: the reference for values, limits and every message."""
    try:
        return _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as e:
        raise BadInput(f"invalid JSON: {e.msg.lower()} at column {e.colno}", pos=e.pos) from None
    except BadInput as e:
        raise BadInput(e.message, pos=at) from None
    except RecursionError:
        raise BadInput(f"document nests deeper than {max_depth} levels", LIMIT, at) from None
    except ValueError as e:  # e.g. an integer beyond Python's digit limit
        raise BadInput(f"invalid JSON: {e}", pos=at) from None
