"""Explicit unknowns (episode/1.1 `unknowns: [{path, note}]`): facts the producer could not determine.

A listed fact stays unknown to the rules whether a value is present at its path or not: a producer
that writes a placeholder (or a guess) and lists it here has said the value is not evidence. So the
rules read a *masked* episode (`mask`), in which every listed fact is absent (and absence is
unknown), and an insufficient-evidence reason that names a missing fact related to a listed path
quotes the producer's note (`notes_for`), so the user learns what to supply.

How a pointer masks (fail closed, and never a half-known value a built-in could misread):
- a pointer to an object member removes that member (`/canaries`, `/provenance/payload_generator`);
- a pointer that reaches into a list (`/controls/null/dispatch/0/arguments`, `/canaries/1`) removes
  the whole list from its parent: a list with an unknown item is not a known list (its items cannot
  be shifted, and a record with a masked field is not a record a built-in should match);
- a pointer that does not resolve masks nothing (the fact is absent, hence unknown, already).
The episode's `unknowns` list itself is never masked. The derived facts read the unmasked episode
(`original`): `surfaces` is the text present in `context` (text the agent received, so what a rule
finds there stays found, whatever else under `context` is declared unknown), less the messages that
arrived after the decision (steps.py, which keeps a message whose `step` is declared unknown);
`shared_canaries` is unknown when `/canaries` is declared.

A pointer is related to a fact path when either is a prefix of the other: `/controls/null` explains
a missing `controls.null.label`, and `/episode/dispatch/0/arguments` explains a missing
`episode.dispatch` (the list it made unknown).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from litmus_rules.domain.lazyre import Patterns

# A note is untrusted text quoted into a reason: at most this many characters of it.
MAX_NOTE_CHARS = 500


class Declared(NamedTuple):
    pointer: str
    tokens: tuple[str, ...]
    note: str


class Masked(dict):  # type: ignore[type-arg]
    """The masked episode the rules read; `original` is the episode as given, `entries` its
    well-formed `unknowns` (`declared(original)`, read once: every insufficient-evidence reason
    looks its missing facts up in them)."""

    __slots__ = ("original", "entries")


def parse_pointer(pointer: str) -> tuple[str, ...] | None:
    """RFC 6901 tokens of a non-empty JSON pointer (`~1` is `/`, `~0` is `~`); None when malformed."""
    if not pointer.startswith("/"):
        return None
    tokens = pointer[1:].split("/")
    if "~" not in pointer:  # (most pointers: nothing escaped)
        return tuple(tokens)
    if _RE.BAD_ESCAPE.search(pointer):
        return None
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in tokens)


_BAD_ESCAPE_SPEC = (r"~(?![01])", 0)  # `/` never follows a valid `~`, so the whole pointer can be searched


def declared(document: Mapping[str, Any]) -> tuple[Declared, ...]:
    """The well-formed entries of a document's `unknowns`, in order."""
    listed = document.get("unknowns") if isinstance(document, Mapping) else None
    if listed.__class__ is not list:
        return ()
    out = []
    for entry in listed:  # type: ignore[union-attr]
        if not isinstance(entry, Mapping):
            continue
        path, note = entry.get("path"), entry.get("note")
        tokens = parse_pointer(path) if isinstance(path, str) else None
        if tokens is not None and isinstance(note, str):
            out.append(Declared(path, tokens, note))
    return tuple(out)


def original(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The episode as given, from the masked one the rules read (or the episode itself)."""
    return document.original if document.__class__ is Masked else document  # type: ignore[attr-defined, no-any-return]


def mask(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The episode the rules read: `document` itself when it declares nothing unknown (every
    episode/1 document), else a `Masked` copy without the declared facts (see the module doc).
    Only containers on a masked path are copied."""
    entries = declared(document) if document.get("unknowns") else ()
    if not entries:
        return document
    out = Masked(document)
    out.original = document
    out.entries = entries
    for entry in entries:
        if entry.tokens[0] != "unknowns":
            _remove(out, entry.tokens)
    return out


def _remove(root: dict[str, Any], tokens: tuple[str, ...]) -> None:
    """Remove the member `tokens` names from `root` (copying the dicts on the way; `root` is a
    copy already), or the first list on the way."""
    node: dict[str, Any] = root
    for i, token in enumerate(tokens):
        if token not in node:
            return
        value = node[token]
        if i == len(tokens) - 1 or value.__class__ is list:
            del node[token]
            return
        if not isinstance(value, Mapping):
            return  # the pointer goes through a scalar: it resolves to nothing
        node[token] = child = dict(value)
        node = child


@functools.lru_cache(maxsize=1024)  # the same few paths, reason after reason
def fact_tokens(path: str) -> tuple[str, ...] | None:
    """The tokens of a fact path as traces write it (`controls.null.label`,
    `detector.signals[0].value`, `x["a b"]`, `x['a']`); None when it is not one."""
    tokens: list[str] = []
    pos = 0
    for m in _RE.FACT_TOKEN.finditer(path):
        if m.start() != pos:
            return None
        pos = m.end()
        name, index, quoted = m.group("name"), m.group("index"), m.group("quoted")
        if name is not None:
            if tokens == [] and m.group(0).startswith("."):
                return None
            tokens.append(name)
        elif index is not None:
            tokens.append(index)
        else:
            tokens.append(quoted[1:-1])
    return tuple(tokens) if tokens and pos == len(path) else None


_FACT_TOKEN_SPEC = (
    r"\.?(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\[(?P<index>-?\d+)\]|\[(?P<quoted>'[^']*'|\"[^\"]*\")\]", 0
)


def related(entry: Declared, tokens: tuple[str, ...]) -> bool:
    """Is the fact at `tokens` at, above or below the declared pointer?"""
    n = min(len(entry.tokens), len(tokens))
    return entry.tokens[:n] == tokens[:n]


def notes_for(document: Mapping[str, Any], path: str) -> list[Declared]:
    """The declared unknowns related to a fact path of a trace (`canaries`), in order."""
    return notes(document, (path,)).get(path, [])


def notes(document: Mapping[str, Any], paths: Iterable[str]) -> dict[str, list[Declared]]:
    """`notes_for` of each path that has any, the document's entries read once."""
    entries = document.entries if document.__class__ is Masked else declared(document)  # type: ignore[attr-defined]
    if not entries:
        return {}
    out = {}
    for path in paths:
        tokens = fact_tokens(path)
        found = [] if tokens is None else [e for e in entries if related(e, tokens)]
        if found:
            out[path] = found
    return out


def quote(entry: Declared) -> str:
    """A declared unknown as a reason quotes it."""
    note = " ".join(entry.note.split())
    if len(note) > MAX_NOTE_CHARS:
        note = note[: MAX_NOTE_CHARS - 3] + "..."
    return f"the producer declared `{entry.pointer}` unknown: {note}"


# compiled on first use (lazyre): most runs never need them
_RE = Patterns(**{name[1:-5]: spec for name, spec in list(globals().items()) if name.endswith("_SPEC")})
