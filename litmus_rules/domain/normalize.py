"""The forms of a text: every text derived from it by the named transforms (transforms.py) and
the decoders (decoding.py) that could reveal a token hidden by encoding or Unicode tricks.

Every form has a human-readable name so that a trace can say *which* transform revealed a match
("base64 > normalised", "confusable skeleton", ...); the building blocks and their names are listed
in transforms.py.

Decoders read the raw text and also its cleaned form (format characters removed > tags > NFKC:
base64 in fullwidth letters, or split by zero-width characters, decodes), and each decoded text
goes through the chain of the raw text (normalised, confusable skeletons, path canonicalised), so
a trace reads e.g. "format characters removed > base64 > confusable skeleton". ("escapes decoded",
JSON, HTML and percent escapes decoded together, goes through raw and normalised only, and is
derived only where escapes nest across kinds (`decoding.nested_escapes`) and left out where one
of those decoders alone made the same text.)

`forms(text)` derives every form worth searching, each tagged with the *key*: the function that
must be applied to a token (or signal value) so that both sides are normalised the same way.
`variants(text)` is the public, simpler view: distinct (name, text) pairs.

Bounds: the forms of a text are complete, in linear time and memory: `derivations(text)` derives
them one at a time (a search keeps a few alive, however many there are, besides the transforms of
large texts that textmemo.py keeps, MEMO_BYTES bytes in all); `forms(text)` groups them
(formcache.py caches them while they add up to at most 16x the input + 1 MiB, `FORMS_BUDGET_*`,
and streams `derivations` past that). Layered HTML / percent escapes past HTML_MAX_LAYERS /
PERCENT_MAX_LAYERS are not decoded: that form is `Undecodable` and a search that finds nothing
else is unknown (decoding.LimitUnknown), never false.
Cost: `forms` only looks into base64-alphabet runs when a linear-time RE2 scan finds one that can
decode (`decoding.candidate_runs`): prose and identifiers skip the 10-30x slower `re` scan.
"""

from __future__ import annotations

import binascii
import functools
from typing import Any
from collections.abc import Callable, Iterator

from litmus_rules.domain.decoding import (  # noqa: F401 - re-exported: the decoders are part of this API
    HTML_MAX_LAYERS,
    MAX_DECODED_CHARS,
    LimitUnknown,
    PERCENT_MAX_LAYERS,
    _base64_runs,
    _hex_runs,
    base64_spans,
    candidate_runs,
    css_unescape,
    hex_spans,
    html_unescape,
    json_unescape,
    nested_escapes,
    percent_decode,
    unescape_all,
)
from litmus_rules.domain.encoded_spans import SHORT_MAX, decoded_spans
from litmus_rules.domain.grouped import grouped_text
from litmus_rules.domain.markup import unwrap_markup
from litmus_rules.domain.paths import _canonical_token, canonical_path  # noqa: F401 - re-exported
from litmus_rules.domain.path_fold import canonical_path_folded
from litmus_rules.domain.textmemo import memo_large
from litmus_rules.domain.transforms import (
    _full_from_clean,
    casefold,
    clean,
    decode_tag_chars,
    full_normalise,
    nfkc,
    path_casefold_key,
    path_key,
    skeleton,
    skeleton_casefold,
    skeleton_key,
    strip_format_chars,
)
from litmus_rules.lang.records import record

# --- derived forms ------------------------------------------------------------------------------

def _needle(fn: Callable[[str], str]) -> Callable[[str], str]:
    """`fn` for a text searched for: a LimitUnknown it raises says so (`needle`), so that a
    message names the token rather than the text searched in."""

    @functools.wraps(fn)
    def key(token: str) -> str:
        try:
            return fn(token)
        except LimitUnknown as exc:
            exc.needle = True
            raise

    return key


# key name -> the function applied to a token/signal value to compare it with a form of that key
KEYS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    **{name: _needle(fn) for name, fn in (
        ("format", strip_format_chars),
        ("tags", decode_tag_chars),
        ("nfkc", nfkc),
        ("casefold", casefold),
        ("normalised", full_normalise),
        ("skeleton", skeleton_key),
        ("skeleton-casefold", skeleton_casefold),
        ("path", path_key),
        ("path-casefold", path_casefold_key),
    )},
}


def blank(token: str) -> bool:
    """Whether a token searched for (a canary, a name) is empty or only whitespace or invisible
    characters, normalised: it would be found in almost any text, so it is found in none. Raises
    LimitUnknown (`needle`, as every KEYS function) when the token cannot be normalised."""
    return not token.strip() or not KEYS["normalised"](token).strip()


# keys whose forms are case-folded: a case-sensitive signal must not be searched in them
CASEFOLDED_KEYS = frozenset({"casefold", "normalised", "skeleton-casefold", "path-casefold"})

# Derived forms are kept (and cached, matching.text_forms) while their total size stays within
# FORMS_BUDGET_FACTOR x the input + FORMS_BUDGET_EXTRA characters. Past it nothing is dropped:
# the forms are derived again, one at a time, for each search (`derivations`), so memory holds a
# few forms at a time instead of all of them.
FORMS_BUDGET_FACTOR = 16
FORMS_BUDGET_EXTRA = 1 << 20


@record
class Form:
    """One distinct derived text and the (name, key) views under which it was derived.

    `key` names the transform to apply to the other side (token, signal value) before looking
    for it in `text`; views are in derivation order, so the first view that reveals a match
    names it. A text derived several ways (ASCII text is its own NFKC) is listed once.
    """

    text: str
    views: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str:
        return self.views[0][0]


@record
class Undecodable:
    """A form that could not be derived within a limit (`decoding.LimitUnknown`): a search that
    finds nothing in the other forms of the text is unknown, not false."""

    name: str
    reason: str


def __getattr__(name: str) -> Any:
    # re-exported from paths and encoded, where they are compiled on first use
    if name == "_PATH_RE":
        from litmus_rules.domain import paths

        return paths._path_res()[0]
    if name == "_B64_RUN":
        from litmus_rules.domain import encoded

        return encoded._pattern(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@memo_large
def _base64_text(text: str) -> str:
    """The decoded base64 spans of `text`, one a line (a short text's: kept, encoded_spans.py)."""
    if len(text) < SHORT_MAX:
        return "\n".join(decoded_spans(text)[0])
    return "\n".join(_base64_runs(candidate_runs(text)))


@memo_large
def _hex_text(text: str) -> str:
    """The decoded hex spans of `text`, one a line (hex runs lie inside base64-alphabet runs)."""
    if len(text) < SHORT_MAX:
        return "\n".join(decoded_spans(text)[1])
    return "\n".join(_hex_runs(candidate_runs(text)))


_DECODERS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("json unescaped", json_unescape),
    ("html unescaped", html_unescape),
    ("percent-decoded", percent_decode),
    ("escapes decoded", unescape_all),
    ("base64", _base64_text),
    ("hex", _hex_text),
    ("grouped encodings", grouped_text),
    ("markup removed", unwrap_markup),
    ("css unescaped", css_unescape),
)
# decoders whose output goes through the raw and normalised steps of the chain only (`_decoded_chain`)
_SHORT_CHAIN = frozenset({"escapes decoded", "markup removed", "css unescaped"})

_ESCAPE_DECODERS = frozenset({"json unescaped", "html unescaped", "percent-decoded"})

Derivation = tuple[str, str, str]  # (name, derived text, key)


def _decoded_chain(name: str, decoded: str, whole: bool = True) -> Iterator[Derivation | Undecodable]:
    """A decoded text through the chain of the raw text: raw, normalised, confusable skeletons,
    path canonicalised (case-preserving and normalised); raw and normalised only if not `whole`.
    Each derived text is released before the next one is made, but those the chain derives from.
    Past the NFKC limit, the forms made from the NFKC text are one Undecodable."""
    yield name, decoded, "raw"
    cleaned: str | None
    limit = ""
    try:
        cleaned = clean(decoded)
    except LimitUnknown as exc:
        cleaned, limit = None, str(exc)
    if cleaned is not None:
        decoded_normalised = _full_from_clean(cleaned)
        yield f"{name} > normalised", decoded_normalised, "normalised"
    else:
        yield Undecodable(f"{name} > normalised", limit)
    if not whole:
        return
    skel = skeleton_key(decoded)
    yield f"{name} > confusable skeleton", skel, "skeleton"
    yield f"{name} > confusable skeleton > casefold", casefold(skel), "skeleton-casefold"
    del skel
    if cleaned is None:
        return
    path = canonical_path(cleaned)
    yield f"{name} > path canonicalised", path, "path"
    # on ASCII, lower-casing commutes with path canonicalisation (as in `derivations`)
    yield (f"{name} > normalised > path canonicalised",
           path.lower() if decoded.isascii() else canonical_path_folded(cleaned, path, decoded_normalised),
           "path-casefold")


def derivations(text: str) -> Iterator[Derivation | Undecodable]:
    """Every form of `text` worth searching, one at a time, most direct first: (name, derived
    text, key), or Undecodable where a decoder, or NFKC, hit a limit (past the NFKC limit, one
    marker stands for every form made from the NFKC text). The same text may come several times
    (under different views); `forms` groups them. Empty derived texts (but the raw one) are left out.

    Order: raw (always present, even when empty); each single transform; the full chain;
    confusable skeletons; path canonicalisation; then each decoder's output on the raw text, then
    on the cleaned text (format characters removed > tags decoded > NFKC) when it differs, each
    through the same chain: raw, normalised, confusable skeletons, path-canonicalised.
    Streaming: at any time a handful of derived texts are alive (the cleaned text, the current
    decoded text and the form being searched), whatever the number of forms.
    """
    yield "raw", text, "raw"
    ascii_text = text.isascii()
    if ascii_text:
        # the common case: format characters, tags and NFKC cannot change ASCII
        yield "format characters removed", text, "format"
        yield "unicode tags decoded", text, "tags"
        yield "nfkc", text, "nfkc"
        cleaned = unmasked_text = stripped = text
        normalised = text.lower()
        yield "casefold", normalised, "casefold"
    else:
        stripped = strip_format_chars(text)
        yield "format characters removed", stripped, "format"
        yield "unicode tags decoded", decode_tag_chars(text), "tags"
        unmasked_text = decode_tag_chars(stripped)
        try:
            normal, cleaned = nfkc(text), clean(text)
        except LimitUnknown as exc:
            # past the NFKC limit: every form made from the NFKC text is unknown (one marker);
            # the others are searched, and the decoders read the raw text only
            yield Undecodable("nfkc", str(exc))
            yield "casefold", casefold(text), "casefold"
            yield from _skeletons(unmasked_text)
            yield from _decoded(text, [("", text)])
            return
        yield "nfkc", normal, "nfkc"
        del normal
        yield "casefold", casefold(text), "casefold"
        normalised = _full_from_clean(cleaned)
    yield "normalised", normalised, "normalised"
    yield from _skeletons(unmasked_text)
    path = canonical_path(cleaned)
    yield "path canonicalised", path, "path"
    # on ASCII, lower-casing commutes with path canonicalisation: skip a second scan
    yield ("normalised > path canonicalised",
           path.lower() if ascii_text else canonical_path_folded(cleaned, path, normalised), "path-casefold")
    del path, normalised
    # The decoders read the raw text and, when it differs, the text with format characters
    # removed, tags decoded and NFKC applied (base64 in fullwidth letters or split by zero-width
    # characters or soft hyphens). Each decoded text goes through the chain of the raw text.
    sources = [("", text)]
    if cleaned != text:
        steps = [step for step, changed in (("format characters removed", stripped != text),
                                            ("unicode tags decoded", unmasked_text != stripped),
                                            ("nfkc", cleaned != unmasked_text)) if changed]
        sources.append((" > ".join(steps) or "nfkc", cleaned))
    del stripped, unmasked_text, cleaned
    yield from _decoded(text, sources)


def _skeletons(unmasked_text: str) -> Iterator[Derivation]:
    skel = skeleton(unmasked_text)
    yield "confusable skeleton", skel, "skeleton"
    yield "confusable skeleton > casefold", casefold(skel), "skeleton-casefold"


def _decoded(text: str, sources: list[tuple[str, str]]) -> Iterator[Derivation | Undecodable]:
    """Each decoder's output on each source (a name prefix, a text), through `_decoded_chain`."""
    for prefix, source in sources:
        for output in decoder_outputs(source, prefix):
            if output.__class__ is Undecodable:
                yield output
            else:
                label, decoded, whole = output  # type: ignore[misc]
                yield from _decoded_chain(label, decoded, whole)
                del decoded


def decoder_outputs(source: str, prefix: str = "",
                    skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, str, bool] | Undecodable]:
    """What each decoder makes of `source` that differs from it and is not empty, in `_DECODERS`
    order: (name, decoded text, whole), `whole` false where only the raw and normalised steps of
    the chain follow (`_decoded_chain`); or Undecodable where a decoder met a limit. These are the
    texts whose chains `derivations` searches (joined.py joins them for many texts at once, and
    skips the decoders named in `skip`, which it knows make nothing of `source`)."""
    escapes: list[str] = []  # what the escape decoders made of `source` (json, html, percent)
    for name, decode in _DECODERS:
        if name in skip:
            continue
        label = f"{prefix} > {name}" if prefix else name
        try:
            if decode is unescape_all and not nested_escapes(source, escapes if len(escapes) == 3 else None):
                continue
            decoded = decode(source)
        except LimitUnknown as exc:
            yield Undecodable(label, str(exc))
            continue
        if name in _ESCAPE_DECODERS:
            escapes.append(decoded)
        if not decoded or decoded == source:
            continue
        if decode is unescape_all and decoded in escapes:
            continue  # one decoder alone made it: its forms are there already
        # ("escapes decoded": raw and normalised only; escapes of two kinds in one large text,
        # random bytes percent-encoded holding JSON escapes by chance, would cost a whole chain)
        yield label, decoded, name not in _SHORT_CHAIN
        del decoded


def forms(text: str) -> tuple[Form | Undecodable, ...]:
    """Every distinct form of `text` (`derivations` grouped by text, in order of first
    derivation), with the Undecodable markers in their place."""
    grouped = forms_within(text, None)
    assert isinstance(grouped, tuple)
    return grouped


def forms_within(text: str, budget: int | None
                 ) -> tuple[Form | Undecodable, ...] | tuple[list[Derivation | Undecodable], Iterator[Derivation | Undecodable]]:
    """`forms(text)` if the distinct derived texts add up to at most `budget` characters (None:
    no bound); else (the derivations read so far, the rest of them): the caller goes on
    searching them one at a time without deriving anything twice."""
    views: dict[str, list[tuple[str, str]]] = {}
    out: list[Any] = []
    read: list[Derivation | Undecodable] = []
    left = budget
    rest = derivations(text)
    for item in rest:
        read.append(item)
        if item.__class__ is Undecodable:
            out.append(item)
            continue
        name, derived, key = item  # type: ignore[misc]
        known = views.get(derived)
        if known is not None:
            known.append((name, key))
            continue
        if derived or name == "raw":
            if left is not None:
                left -= len(derived)
                if left < 0:
                    return read, rest
            views[derived] = [(name, key)]
            out.append(derived)
    return tuple(Form(x, tuple(views[x])) if x.__class__ is str else x for x in out)


def forms_budget(text: str) -> int:
    """The total size of derived text `matching.text_forms` keeps for `text`."""
    return FORMS_BUDGET_FACTOR * len(text) + FORMS_BUDGET_EXTRA


def variants(text: str) -> list[tuple[str, str]]:
    """The distinct (transform name, derived text) forms of `text`, most direct first.

    Identical texts are listed once, under the first name that produced them. A form that could
    not be derived within a limit is left out (`forms` lists it as Undecodable).
    """
    return [(form.name, form.text) for form in forms(text) or () if isinstance(form, Form)]


# --- token forms ------------------------------------------------------------------------------


def _base64_cores(raw: bytes) -> list[str]:
    """The base64 text of `raw` that is the same wherever `raw` sits in a longer blob.

    For each of the 3 byte offsets, encode with filler bytes in front and keep only the
    characters whose 6 bits come entirely from `raw`; bits shared with unknown neighbours differ
    from blob to blob.
    """
    cores = []
    n = len(raw)
    for offset in range(3):
        encoded = binascii.b2a_base64(b"\0" * offset + raw, newline=False).decode("ascii")
        start = -(-8 * offset // 6)
        end = (8 * (offset + n)) // 6
        core = encoded[start:end]
        if len(core) >= 6:
            cores.append(core)
    return cores


def encoded_forms(token: str) -> list[tuple[str, str]]:
    """Encodings of `token` as they would appear verbatim inside a text.

    These find a token whose encoded span the text-side decoders cannot recover (a base64 blob
    glued to other data at an unlucky alignment, a token inside binary, ...).
    """
    raw = token.encode("utf-8", "surrogatepass")
    out: list[tuple[str, str]] = []
    for core in _base64_cores(raw):
        out.append(("base64-encoded token", core))
        if "+" in core or "/" in core:  # (two replaces: 10x less than str.translate on a token)
            out.append(("base64url-encoded token", core.replace("+", "-").replace("/", "_")))
    hexed = raw.hex()
    out.append(("hex-encoded token", hexed))
    out.append(("hex-encoded token", hexed.upper()))
    # bytes.hex with a separator writes every form in C (a Python loop per byte cost 3x as much)
    percent = "%" + raw.hex("%") if raw else ""
    out.append(("percent-encoded token", percent.upper()))
    out.append(("percent-encoded token", percent))
    units = token.encode("utf-16-be", "surrogatepass")
    escaped = "\\u" + units.hex("\x00", 2).replace("\x00", "\\u") if units else ""
    out.append(("json-escaped token", escaped))
    out.append(("json-escaped token", escaped.upper().replace("\\U", "\\u")))
    return out


def token_forms(token: str) -> list[tuple[str, str]]:
    """Forms of a canary/token to look for: normalised like the text forms, and encoded.

    Distinct by text, most direct first.
    """
    candidates = [
        ("raw", token),
        ("normalised", full_normalise(token)),
        ("confusable skeleton", skeleton_key(token)),
        ("confusable skeleton > casefold", skeleton_casefold(token)),
        ("path canonicalised", path_key(token)),
        ("normalised > path canonicalised", path_casefold_key(token)),
        *encoded_forms(token),
    ]
    return distinct_forms(candidates)


def distinct_forms(candidates: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(name, text) pairs without empty or repeated texts; the first name of a text wins."""
    seen: set[str] = set()
    out = []
    for name, form in candidates:
        if form and form not in seen:
            seen.add(form)
            out.append((name, form))
    return out
