"""How the surface walk writes what it reads as text: a value (`render_value`), an object key
(`key_text`) and the place it was found (`key_origin`: `context.tools[0].input_schema.properties.q`)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)  # json.dumps builds one per call


def render_value(value: Any) -> str:
    """Strings as they are; anything else as compact JSON (what a model would read)."""
    if isinstance(value, str):
        return value
    if value.__class__ is int:  # what json.dumps writes, 20x faster
        return int.__repr__(value)
    try:
        return _COMPACT.encode(value)
    except (ValueError, TypeError, RecursionError):
        # Circular containers (possible from YAML anchors) or odd keys: still give some text.
        return repr(value)


_IDENT = re.compile(r"[A-Za-z_$][\w$-]*\Z")


@functools.lru_cache(maxsize=8192)
def is_ident(key: str) -> bool:
    """Is `key` written `.key` in an origin (identifier-like), rather than `["key"]`?"""
    return _IDENT.match(key) is not None


def key_origin(origin: str, key: str) -> str:
    """`origin.key`, or `origin["key"]` (JSON-quoted) for a key that is not identifier-like."""
    if is_ident(key):
        return f"{origin}.{key}"
    return f"{origin}[{json.dumps(key, ensure_ascii=False)}]"


def key_text(key: Any) -> str:
    return key if key.__class__ is str else render_value(key)  # YAML allows 1, null, true as keys
