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
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef

CACHE_ENV = "LITMUS_RULES_CACHE_DIR"
_FORMAT = 1  # bump when what is stored changes
_MAX_BYTES = 8 * 2**20  # far above a parser's size (about 100 KB): anything larger is not ours
_TAG = "\x00lark-cache"  # marks a tuple or a dict with non-string keys in the JSON


def cache_dir() -> Path | None:
    """Where the parser is kept: `$LITMUS_RULES_CACHE_DIR`, else the XDG cache folder; None: off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return Path(configured) if configured.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "litmus-rules"


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


def _own_private_folder(folder: Path, create: bool) -> bool:
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _read(path: Path, key: str) -> Lark | None:
    if not _own_private_folder(path.parent, create=False):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            raw = fh.read(_MAX_BYTES + 1)
        if len(raw) > _MAX_BYTES:
            return None
        doc = json.loads(raw, object_hook=_decode)
        if not isinstance(doc, dict) or doc.get("key") != key:
            return None
        return Lark._load_from_dict(doc["data"], doc["memo"])  # lark's own classes only: no pickle
    except Exception:  # noqa: BLE001 -- a damaged or foreign file: build the parser again
        return None


def _write(path: Path, key: str, parser: Lark) -> None:
    """Store atomically (a concurrent reader sees the old file or the new one, never half of one);
    any failure (a read-only home, a full disk) only means the next run builds the parser too."""
    if not _own_private_folder(path.parent, create=True):
        return
    tmp = None
    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        text = json.dumps({"key": key, "data": _encode(data), "memo": _encode(memo)}, separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(prefix=".parser-", dir=path.parent)  # mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        tmp = None
    except Exception:  # noqa: BLE001 -- see the docstring
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


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
