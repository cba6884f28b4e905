"""The built LALR parser, kept between runs in the user's cache folder: a cold start reads it back
(about 30 ms) instead of building the tables from the grammar (about 300 ms).

Lark's own cache (`Lark(..., cache=...)`, `Lark.save`) is a pickle: whoever can write the file runs
code in every process that reads it, and lark's default place for it is the shared temporary folder.
Here the parser goes through lark's pickle-free serialisation (`memo_serialize`, what its standalone
generator writes) as JSON, read back with `json.loads` and lark's deserialiser, which only builds
lark's own grammar classes: a file that is damaged or tampered with is a failed load (the parser is
built again), never code run. It is also only read from a folder that is the user's own and no one
else can write (mode 0700), from a regular file with the same owner, and its name and content carry
the hash of the grammar text, the options and lark's version, so a new grammar never reads an old
parser. `LITMUS_RULES_CACHE_DIR` moves the folder; set to an empty string, it turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef

from litmus_rules.usercache import CACHE_ENV, cache_dir, read_bytes, write_text  # noqa: F401 - CACHE_ENV re-exported

_FORMAT = 1  # bump when what is stored changes
_TAG = "\x00lark-cache"  # marks a tuple or a dict with non-string keys in the JSON


def cached_parser(grammar: str, options: dict[str, Any]) -> Lark:
    """`Lark(grammar, **options)`, read from the cache when a parser of the same grammar, options
    and lark version was stored there, else built (and stored, when the folder is usable)."""
    key = hashlib.sha256(json.dumps([_FORMAT, lark.__version__, grammar, options], sort_keys=True).encode()).hexdigest()
    folder = cache_dir()
    path = folder / f"parser-{key[:40]}.json" if folder is not None else None
    if path is not None:
        loaded = _read(path, key)
        if loaded is not None:
            return loaded
    parser = _build(grammar, options)
    if path is not None:
        _write(path, key, parser)
    return parser


def _build(grammar: str, options: dict[str, Any]) -> Lark:
    return Lark(grammar, **options)


def _read(path: Path, key: str) -> Lark | None:
    raw = read_bytes(path)
    if raw is None:
        return None
    try:
        doc = json.loads(raw, object_hook=_decode)
        if not isinstance(doc, dict) or doc.get("key") != key:
            return None
        return Lark._load_from_dict(doc["data"], doc["memo"])  # lark's own classes only: no pickle
    except Exception:  # noqa: BLE001 -- a damaged or foreign file: build the parser again
        return None


def _write(path: Path, key: str, parser: Lark) -> None:
    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        text = json.dumps({"key": key, "data": _encode(data), "memo": _encode(memo)}, separators=(",", ":"))
    except Exception:  # noqa: BLE001 -- a parser that does not serialise is only built again next run
        return
    write_text(path, text)


def _encode(value: Any) -> Any:
    """JSON keeps str-keyed dicts, lists and scalars; the parse tables also hold int-keyed dicts
    and tuples, tagged here and rebuilt by `_decode`."""
    if isinstance(value, dict):
        if all(isinstance(k, str) and k != _TAG for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {_TAG: "dict", "items": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TAG: "tuple", "items": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in the parser cache")


def _decode(obj: dict[str, Any]) -> Any:
    kind = obj.get(_TAG)
    if kind is None:
        return obj
    items = obj["items"]
    if kind == "tuple":
        return tuple(items)
    if kind == "dict":
        return {_hashable(k): v for k, v in items}
    raise ValueError(f"unknown tag {kind!r}")


def _hashable(key: Any) -> Any:
    # a key that was a tuple came back as one (the hook runs bottom-up); a list is not a key
    if isinstance(key, list):
        raise ValueError("a list cannot be a key")
    return key
