"""Is a tool or skill *name* mentioned in a text? The same search as `matching.leaks`, at
identifier boundaries (DESIGN, "Reading the note" 5).

A canary is a random token: any occurrence of it is the canary, so `leaks` finds it anywhere. A
name is an identifier: `export_calendar` inside `export_calendar_v2` or `my_export_calendar` is
another identifier, and a null transcript that calls `export_calendar_v2` does not mention the
injected `export_calendar`. `mentions(name, text)` finds `name` in every form `leaks` searches
(case folded, format characters removed, confusable skeletons, NFKC, JSON/HTML/percent escapes,
base64, hex, paths; `normalize.forms`) where the match is neither preceded nor followed by an
identifier character *in the form it was found in*.

Identifier characters are letters, digits and `_`: exactly Python `re`'s Unicode `\\w`
(`str.isalnum()` or `_`). `-` and `.` are boundaries, so `read-file` is found in `read-file-v2`
and `export_calendar` in `export_calendar.v2`. Why: a harness's scorer that looks for a name in
text sees it as a word (`\\bread-file\\b` in Python `re`, whose `\\b` splits at `-` and `.`) or
as a substring; either one fires on `read-file-v2`. Only a scorer that parses whole identifiers
would not, and the check fails closed: when in doubt, the name is found. For the same reason a
combining mark after the name is a boundary (`\\w` does not match it), and the name is found
when *any* form has it at a boundary: `export_calendar&#95;v2` mentions it (the raw text, which a
scorer may read as it is, has `&` after the name), while `export&#95;calendar&#95;v2` does not.

Encoded forms of the name searched in the raw text (base64 cores, hex, percent- and JSON-escapes:
`normalize.encoded_forms`, for blobs the text-side decoders cannot recover) are at a boundary
when the characters the encoding puts next to the name do not decode to an identifier character;
what cannot be decoded next to the name (the end of the blob, another encoding) is a boundary.

Not found and a form of the text past a decoding limit: unknown (`decoding.LimitUnknown` is
raised, as `leaks` raises it), never false.

Known approximation: the boundary is checked in the form where the name was found, after that
form's transform. The confusable skeleton maps `|` to `l`; a name disguised with homoglyphs *and*
followed by `|` is found only in the skeleton form, where `l` follows it, and so is missed. A
plain-text mention next to `|` is found in the raw form.
"""

from __future__ import annotations

import binascii
import functools
import re
from collections.abc import Iterable

from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.errors import EvaluationError
from litmus_rules.domain.formcache import answer, text_forms
from litmus_rules.domain.lazyre import Patterns, word_bounded
from litmus_rules.domain.matching import MATCHED_MAX, Witness, leaks
from litmus_rules.domain.normalize import KEYS, Form, Undecodable, blank, distinct_forms, encoded_forms

__all__ = ["mentions", "mentioned", "is_identifier_char"]


def is_identifier_char(ch: str) -> bool:
    """A letter, a digit or `_` (Python `re`'s Unicode `\\w` for one character)."""
    return ch == "_" or ch.isalnum()


def _require_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise EvaluationError(f"{what} expects text, got {type(value).__name__}")
    return value


def mentions(name: str, text: str) -> Witness | None:
    """The first occurrence of `name` in `text` at identifier boundaries, under the normalisations
    and decodings `matching.leaks` uses; None when there is none. A name that is empty or only
    whitespace or invisible characters is mentioned nowhere (as `leaks` has it).
    Raises LimitUnknown when it is not found and a form of the text could not be derived."""
    _require_text(name, "mentions()")
    _require_text(text, "mentions()")
    if blank(name):
        return None
    return answer(("mention", name), text, text_forms(text), lambda derived: _find(name, derived))


def mentioned(token: str, text: str, anywhere: bool) -> Witness | None:
    """`leaks(token, text)` when `anywhere` (a canary), else `mentions(token, text)` (a name):
    how the null control is searched for a canary or an injected tool or skill name."""
    return leaks(token, text) if anywhere else mentions(token, text)


# --- the search -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _needles(name: str, key: str) -> tuple[tuple[str, str], ...]:
    """(label, needle) to look for in a form with this key; label "" = the plain name, else the
    encoding's name (`normalize.encoded_forms`). The same needles as `matching.leaks`."""
    fn = KEYS[key]
    items = [("", fn(name))]
    if key == "skeleton-casefold":  # "I" and "i" have different skeletons: try both cases
        items += [("", fn(name.lower())), ("", fn(name.upper()))]
    if key == "raw":
        items += encoded_forms(name)
    return tuple(distinct_forms(items))


@functools.lru_cache(maxsize=4096)
def _plan(name: str, views: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    """(witness name, encoding label, needle) to try on a form with these views, first match wins."""
    plan: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for view, key in views:
        for label, needle in _needles(name, key):
            if needle not in seen:
                seen.add(needle)
                witness = (label if view == "raw" else f"{view} > {label}") if label else view
                plan.append((witness, label, needle))
    return tuple(plan)


def _find(name: str, derived: Iterable[Form | Undecodable]) -> Witness | None:
    unsettled: list[Undecodable] = []
    for form in derived:
        if isinstance(form, Undecodable):
            unsettled.append(form)
            continue
        haystack = form.text
        for witness, label, needle in _plan(name, form.views):
            if needle not in haystack:  # the common case: one fast substring test
                continue
            at = (word_bounded(needle).search(haystack) if not label
                  else _encoded_at_boundary(haystack, needle, label, name))
            if at is not None:
                i = at.start() if isinstance(at, re.Match) else at
                matched = haystack[i : i + len(needle)]
                return Witness(witness, i, matched if len(matched) <= MATCHED_MAX else matched[: MATCHED_MAX - 1] + "…")
    if unsettled:
        raise LimitUnknown(f"its {unsettled[0].name} form is unknown: {unsettled[0].reason}")
    return None


# --- encoded names: what the encoding puts next to them ---------------------------------------------


def _encoded_at_boundary(text: str, needle: str, label: str, name: str) -> int | None:
    """The first offset of `needle` (an encoding of `name`) in `text` whose decoded neighbours
    are not identifier characters."""
    i = text.find(needle)
    while i >= 0:
        if _neighbours_ok(text, i, needle, label, name):
            return i
        i = text.find(needle, i + 1)
    return None


def _neighbours_ok(text: str, i: int, needle: str, label: str, name: str) -> bool:
    j = i + len(needle)
    if label.startswith("hex"):
        return not (_byte_is_id(_hex_byte(text[i - 2 : i] if i >= 2 else ""))
                    or _byte_is_id(_hex_byte(text[j : j + 2])))
    if label.startswith("percent"):
        return not (_char_is_id(_percent_before(text, i)) or _char_is_id(_percent_after(text, j)))
    if label.startswith("json"):
        return not (_char_is_id(_json_before(text, i)) or _char_is_id(_json_after(text, j)))
    return _base64_neighbours_ok(text, i, needle, label, name)


def _byte_is_id(b: int | None) -> bool:
    # a byte >= 0x80 is part of a multi-byte character: not known to be a letter, so a boundary
    return b is not None and b < 0x80 and is_identifier_char(chr(b))


def _char_is_id(ch: str | None) -> bool:
    return ch is not None and is_identifier_char(ch)


_HEX_PAIR_SPEC = (r"[0-9A-Fa-f]{2}", 0)


def _hex_byte(pair: str) -> int | None:
    # not int(pair, 16): it takes a sign and spaces ("-3" is -3, which chr() refuses)
    return int(pair, 16) if _RE.HEX_PAIR.fullmatch(pair) else None


_PERCENT_SPEC = (r"%[0-9A-Fa-f]{2}", 0)


def _percent_before(text: str, i: int) -> str | None:
    if i >= 3 and _RE.PERCENT.fullmatch(text, i - 3, i):
        b = int(text[i - 2 : i], 16)
        return chr(b) if b < 0x80 else None
    return text[i - 1] if i >= 1 else None


def _percent_after(text: str, j: int) -> str | None:
    if _RE.PERCENT.match(text, j):
        b = int(text[j + 1 : j + 3], 16)
        return chr(b) if b < 0x80 else None
    return text[j] if j < len(text) else None


_JSON_UNIT_SPEC = (r"\\[uU][0-9A-Fa-f]{4}", 0)


def _json_before(text: str, i: int) -> str | None:
    if i >= 6 and _RE.JSON_UNIT.fullmatch(text, i - 6, i):
        return chr(int(text[i - 4 : i], 16))
    return text[i - 1] if i >= 1 else None


def _json_after(text: str, j: int) -> str | None:
    if _RE.JSON_UNIT.match(text, j):
        return chr(int(text[j + 2 : j + 6], 16))
    return text[j] if j < len(text) else None


_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")
_URL_TO_STD = str.maketrans("-_", "+/")


def _base64_neighbours_ok(text: str, i: int, needle: str, label: str, name: str) -> bool:
    """A base64 core of `name` at `i`: decode the 4-character groups around it at the alignment
    the core implies and look at the bytes next to the name. A neighbouring group that is not
    base64 (the blob's end) is a boundary."""
    raw = name.encode("utf-8", "surrogatepass")
    url = "url" in label
    for offset in range(3):
        encoded = binascii.b2a_base64(b"\0" * offset + raw, newline=False).decode("ascii")
        start, end = -(-8 * offset // 6), (8 * (offset + len(raw))) // 6
        core = encoded[start:end]
        if (core.translate(str.maketrans("+/", "-_")) if url else core) != needle:
            continue
        q = i - start  # where the blob's 4-character group holding the name's first byte starts
        before = _b64_byte(text, q - 4, 2) if offset == 0 else _b64_byte(text, q, offset - 1)
        after_bit = 8 * (offset + len(raw))  # the first bit after the name, from q
        group = q + 4 * (after_bit // 24)
        after = _b64_byte(text, group, (after_bit % 24) // 8)
        if not (_byte_is_id(before) or _byte_is_id(after)):
            return True
    return False


def _b64_byte(text: str, group: int, k: int) -> int | None:
    """Byte `k` (0-2) of the 4-character base64 group at `group`; None if not all base64."""
    chunk = text[group : group + 4] if group >= 0 else ""
    if len(chunk) != 4 or not _B64_CHARS.issuperset(chunk):
        return None
    try:
        return binascii.a2b_base64(chunk.translate(_URL_TO_STD))[k]
    except (binascii.Error, IndexError):
        return None


# compiled on first use (lazyre): most runs never need them
_RE = Patterns(**{name[1:-5]: spec for name, spec in list(globals().items()) if name.endswith("_SPEC")})
