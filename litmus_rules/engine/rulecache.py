"""The parse stage's results, kept so that a ruleset's file is not parsed twice: in this process (a
memo) and between runs (the user's cache folder, usercache.py). Parsing the shipped rules with lark
is most of a cold `load_rules`, and importing lark most of the rest; a hit needs neither. Only the
parse is kept: check and compile run on every load (a few ms), so params, the environment and every
RuleSet stay the load's own.

A stored tree is JSON (lang/astjson.py), read back with `json.loads` into the AST's own classes,
every field checked against its declared type and every span against the text: never a pickle. The
file is named by, and carries, the hash of the rule text, the grammar, the code that turns text
into a tree (ast.py, astjson.py, source.py, syntax/) and the package's `__init__.py` (its version),
so any change to one of them reads nothing old; a digest of the body catches a damaged file. Whatever goes wrong (a
missing, damaged, foreign or planted file; a read-only or full disk) is a miss: the text is parsed
again, and stored again when the folder is usable. Errors are never cached.

The memo keys by (name, text): the tree holds its source. It keeps frozen trees, which nothing
changes, so two rulesets loaded from the same text share one tree and nothing else.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable

from litmus_rules._resources import grammar_path
from litmus_rules.lang import ast, astjson
from litmus_rules.source import Source
from litmus_rules.usercache import cache_dir, read_bytes, write_text

FORMAT = 1  # bump when what is stored changes
PREFIX = "ast-"
MAX_FILES = 64  # stored trees kept; past it the oldest go (rule tests parse many small texts)
MEMO_SIZE = 32

_LANG = Path(ast.__file__).resolve().parent
_memo: OrderedDict[tuple[str, str], ast.RuleSet] = OrderedDict()
_lock = threading.Lock()


def cached_parse(text: str, name: str, parse: Callable[[str, str], ast.RuleSet]) -> ast.RuleSet:
    """`parse(text, name)`, or the tree an earlier parse of the same text gave."""
    with _lock:
        tree = _memo.get((name, text))
        if tree is not None:
            _memo.move_to_end((name, text))
            return tree
    path, key = _place(text)
    tree = _read(path, key, text, name) if path is not None else None
    if tree is None:
        tree = parse(text, name)
        if path is not None:
            _write(path, key, tree)
    with _lock:
        _memo[(name, text)] = tree
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)
    return tree


def clear_memo() -> None:
    with _lock:
        _memo.clear()


@functools.lru_cache(maxsize=1)
def _fingerprint() -> str | None:
    """What, besides the text, decides the tree: None when a part cannot be read (no disk cache)."""
    h = hashlib.sha256(f"{FORMAT}\0".encode())
    try:
        # the package's __init__.py holds its version: read, not imported (lang imports no layer above)
        files = [grammar_path(), _LANG.parent / "__init__.py", _LANG.parent / "source.py", _LANG / "ast.py",
                 _LANG / "astjson.py", *sorted((_LANG / "syntax").glob("*.py"))]
        for file in files:
            h.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    except Exception:  # noqa: BLE001 -- a missing source file (a frozen install): parse every time
        return None
    return h.hexdigest()


def _place(text: str) -> tuple[Path | None, str]:
    fingerprint = _fingerprint()
    folder = cache_dir()
    if fingerprint is None or folder is None:
        return None, ""
    key = hashlib.sha256(f"{fingerprint}\0".encode() + text.encode("utf-8", "surrogatepass")).hexdigest()
    return folder / f"{PREFIX}{key[:40]}.json", key


def _read(path: Path, key: str, text: str, name: str) -> ast.RuleSet | None:
    raw = read_bytes(path)
    if raw is None:
        return None
    try:
        head, _, body = raw.partition(b"\n")
        header = json.loads(head)
        if (not isinstance(header, dict) or header.get("key") != key
                or header.get("sha256") != hashlib.sha256(body).hexdigest()):
            return None
        return astjson.loads(body, Source(name, text))
    except Exception:  # noqa: BLE001 -- a damaged or foreign file: parse the text again
        return None


def _write(path: Path, key: str, tree: ast.RuleSet) -> None:
    try:
        body = astjson.dumps(tree).encode()
    except (astjson.Unencodable, ValueError, RecursionError):
        return
    header = json.dumps({"format": FORMAT, "key": key, "sha256": hashlib.sha256(body).hexdigest()})
    write_text(path, header + "\n" + body.decode())
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Keep the newest MAX_FILES trees; a file another process removed first is no matter."""
    try:
        stored = [(e.stat().st_mtime, e.path) for e in os.scandir(folder)
                  if e.name.startswith(PREFIX) and e.name.endswith(".json")]
    except OSError:
        return
    if len(stored) <= MAX_FILES:
        return
    for _, old in sorted(stored)[: len(stored) - MAX_FILES]:
        try:
            os.unlink(old)
        except OSError:
            pass


__all__ = ["FORMAT", "MAX_FILES", "cached_parse", "clear_memo"]
