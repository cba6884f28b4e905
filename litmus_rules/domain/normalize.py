"""Named text transforms that reveal a token hidden by encoding or Unicode tricks.

Every transform has a human-readable name so that a trace can say *which* transform revealed a
match ("base64 > normalised", "confusable skeleton", ...). The building blocks:

========================  ================================  ============
function                  name in traces                    idempotent
========================  ================================  ============
strip_format_chars        format characters removed         yes
decode_tag_chars          unicode tags decoded              yes
nfkc                      nfkc                              yes
casefold                  casefold                          yes
full_normalise            normalised                        yes
skeleton                  confusable skeleton               yes (on its own output)
json_unescape             json unescaped                    (decoding.py)
html_unescape             html unescaped                    (decoding.py)
percent_decode            percent-decoded                   (decoding.py)
canonical_path            path canonicalised                (decoding.py)
base64_spans / hex_spans  base64 / hex                      (decoding.py)
========================  ================================  ============

"normalised" is the full chain: format characters removed > unicode tags decoded > NFKC > casefold
(> NFKC again, so the result is stable: NFKC_Casefold in spirit).

Decoders read the raw text and also its cleaned form (format characters removed > tags > NFKC:
base64 in fullwidth letters, or split by zero-width characters, decodes), and each decoded text
goes through the chain of the raw text (normalised, confusable skeletons, path canonicalised), so
a trace reads e.g. "format characters removed > base64 > confusable skeleton".

`forms(text)` derives every form worth searching, each tagged with the *key*: the function that
must be applied to a token (or signal value) so that both sides are normalised the same way.
`variants(text)` is the public, simpler view: distinct (name, text) pairs.

Bounds: the forms of a text are complete, in linear time and memory: `derivations(text)` derives
them one at a time (a search keeps a few alive, however many there are); `forms(text)` groups them
(formcache.py caches them while they add up to at most 8x the input + 1 MiB, `FORMS_BUDGET_*`,
and streams `derivations` past that). Layered HTML / percent escapes past HTML_MAX_LAYERS /
PERCENT_MAX_LAYERS are not decoded: that form is `Undecodable` and a search that finds nothing
else is unknown (decoding.LimitUnknown), never false.
Cost: `forms` only looks into base64-alphabet runs when a linear-time RE2 scan finds one that can
decode (`decoding.candidate_runs`): prose and identifiers skip the 10-30x slower `re` scan.
"""

from __future__ import annotations

import base64
import functools
import re
import unicodedata
from typing import Any
from collections.abc import Callable, Iterator

import attrs
import re2
import regex

from litmus_rules.domain.decoding import (  # noqa: F401 - re-exported: the decoders are part of this API
    _B64_RUN,
    _PATH_RE,
    HTML_MAX_LAYERS,
    MAX_DECODED_CHARS,
    LimitUnknown,
    PERCENT_MAX_LAYERS,
    _base64_runs,
    _canonical_token,
    _hex_runs,
    base64_spans,
    candidate_runs,
    canonical_path,
    hex_spans,
    html_unescape,
    json_unescape,
    percent_decode,
)

# --- format characters and unicode tags --------------------------------------------------------

# Default-ignorable code points and every Cf character (zero-width, soft hyphen, bidi controls,
# variation selectors, CGJ, Hangul fillers, ...) -- but not the tag block, which carries hidden
# ASCII and is decoded by `decode_tag_chars` rather than thrown away.
_FORMAT_RE = regex.compile(
    r"[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}--[\U000E0000-\U000E007F]]+",
    regex.V1,
)
_TAG_RE = re.compile("[\U000e0000-\U000e007f]+")

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
# Cheap linear-time presence tests (RE2 scans ~0.5 GB/s; Python's engines ~10x slower): the
# precise substitutions above only run on the rare texts that contain such characters.
_MAYBE_FORMAT = re2.compile(
    r"[\p{Cf}\x{034F}\x{2060}-\x{206F}\x{115F}\x{1160}\x{17B4}\x{17B5}\x{180B}-\x{180F}\x{3164}\x{FE00}-\x{FE0F}"
    r"\x{FFA0}\x{FFF0}-\x{FFF8}\x{1D173}-\x{1D17A}\x{E0000}-\x{E0FFF}]",
    _RE2_OPTIONS,
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _re2_search(pattern: Any, text: str) -> bool:
    try:
        return pattern.search(text) is not None
    except UnicodeEncodeError:  # lone surrogates cannot go through RE2's UTF-8
        return pattern.search(_SURROGATE.sub("\ufffd", text)) is not None


def strip_format_chars(text: str) -> str:
    """Remove invisible format characters (category Cf, default-ignorables, variation selectors),
    except Unicode tag characters. Idempotent."""
    if text.isascii() or not _re2_search(_MAYBE_FORMAT, text):
        return text
    return _FORMAT_RE.sub("", text)


def _decode_tag_run(m: re.Match[str]) -> str:
    # U+E0020..U+E007E mirror printable ASCII; the language tag (E0001), cancel tag (E007F) and
    # unassigned tag code points carry no text and are dropped.
    return "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E)


def decode_tag_chars(text: str) -> str:
    """Map Unicode tag characters (U+E0000-U+E007F) to the ASCII they mirror. Idempotent."""
    if text.isascii() or not _re2_search(_MAYBE_FORMAT, text):
        return text
    return _TAG_RE.sub(_decode_tag_run, text)


def nfkc(text: str) -> str:
    """Unicode NFKC (fullwidth, ligatures, mathematical alphanumerics -> plain). Idempotent."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def casefold(text: str) -> str:
    """Unicode full case folding (str.casefold). Idempotent."""
    return text.casefold()


def clean(text: str) -> str:
    """The case-preserving part of the full chain: format characters removed > tags decoded > NFKC."""
    if text.isascii():
        return text
    return _clean_stripped(strip_format_chars(text))


def _clean_stripped(stripped: str) -> str:
    decoded = decode_tag_chars(stripped)
    normal = nfkc(decoded)
    # NFKC can expose new format characters only if it changed something
    return normal if normal is decoded or normal == decoded else strip_format_chars(normal)


def _full_from_clean(cleaned: str) -> str:
    if cleaned.isascii():
        return cleaned.lower()  # casefold == lower on ASCII, and lower is faster
    return strip_format_chars(nfkc(cleaned.casefold()))


def full_normalise(text: str) -> str:
    """format characters removed > unicode tags decoded > NFKC > casefold (> NFKC). Idempotent."""
    return _full_from_clean(clean(text))


# --- confusable skeleton ------------------------------------------------------------------------


@functools.cache
def _skeleton_table() -> dict[int, str]:
    """char -> prototype, built once from confusable_homoglyphs' data (UTS #39 confusables).

    The library stores each prototype with all its look-alikes and each look-alike with its
    prototype. We join them into classes and pick one representative per class: a single
    printable ASCII character when the class has one (so "а" -> "a", "Ι" -> "l"), else the
    best-connected member. Multi-character prototypes (m ~ "rn") are not used as targets: a
    per-character map cannot fold "rn" into "m" anyway, and keeping "m" avoids surprises.
    """
    from confusable_homoglyphs.confusables import confusables_data  # 90 ms to load: do it lazily

    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    degree: dict[str, int] = {}
    for key, entries in confusables_data.items():
        k = _FORMAT_RE.sub("", key)  # some entries are wrapped in LRM marks
        for entry in entries:
            c = _FORMAT_RE.sub("", entry.get("c", ""))
            if not k or not c:
                continue
            degree[k] = degree.get(k, 0) + 1
            degree[c] = degree.get(c, 0) + 1
            a, b = find(k), find(c)
            if a != b:
                parent[a] = b

    classes: dict[str, list[str]] = {}
    for member in list(parent):
        classes.setdefault(find(member), []).append(member)

    table: dict[int, str] = {}
    for members in classes.values():
        singles = [m for m in members if len(m) == 1]
        if len(singles) < 2:
            continue
        rep = min(singles, key=lambda m: (not (m.isascii() and m.isprintable()), -degree.get(m, 0), m))
        for m in singles:
            if m != rep:
                table[ord(m)] = rep
    # The representative's own NFD may contain mapped characters; close the table so that
    # skeleton(skeleton(x)) == skeleton(x).
    for _ in range(4):
        changed = False
        for cp, rep in table.items():
            closed = unicodedata.normalize("NFD", unicodedata.normalize("NFD", rep).translate(table))
            if closed != rep:
                table[cp] = closed
                changed = True
        if not changed:
            break
    return table


@functools.cache
def _skeleton_parts() -> tuple[bytes, dict[str, str], Any]:
    """The table split for speed: a 256-byte map for ASCII (applied to UTF-8 bytes, where ASCII
    bytes never occur inside multi-byte sequences) and an RE2 class of the non-ASCII keys."""
    table = _skeleton_table()
    ascii_map = bytearray(range(256))
    for cp, rep in table.items():
        if cp < 128:
            assert len(rep) == 1 and rep.isascii(), (cp, rep)
            ascii_map[cp] = ord(rep)
    wide = {chr(cp): rep for cp, rep in table.items() if cp >= 128}
    ranges: list[list[int]] = []
    for cp in sorted(ord(c) for c in wide):
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    cls = "".join(f"\\x{{{a:X}}}" + (f"-\\x{{{b:X}}}" if b > a else "") for a, b in ranges)
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    return bytes(ascii_map), wide, re2.compile(f"[{cls}]+", options)


def skeleton_ascii_map() -> bytes:
    """The skeleton of ASCII text as a bytes.translate table: skeleton(t) for ASCII t is
    t.encode().translate(skeleton_ascii_map()).decode() (one character for one)."""
    return _skeleton_parts()[0]


def skeleton(text: str) -> str:
    """Confusable skeleton (UTS #39 idea): NFD, map each character to its class prototype, NFD.

    Case-preserving: "І" (Cyrillic) and "I" both become "l", "а" becomes "a". Idempotent.
    """
    ascii_map, wide, wide_re = _skeleton_parts()
    text = unicodedata.normalize("NFD", text)
    if text.isascii():
        return text.encode("ascii").translate(ascii_map).decode("ascii")
    try:
        data = text.encode("utf-8").translate(ascii_map)
    except UnicodeEncodeError:  # lone surrogates: the slow, general path
        return unicodedata.normalize("NFD", text.translate(_skeleton_table()))
    # Runs of mapped characters, found in the UTF-8 bytes (byte offsets: no conversion to
    # character offsets per match, which costs more than the mapping itself).
    pieces = []
    pos = 0
    for m in wide_re.finditer(data):
        start, end = m.span()
        pieces.append(data[pos:start])
        pieces.append("".join(wide.get(c, c) for c in data[start:end].decode("utf-8")).encode("utf-8"))
        pos = end
    if pieces:
        pieces.append(data[pos:])
        data = b"".join(pieces)
    return unicodedata.normalize("NFD", data.decode("utf-8"))


def unmasked(text: str) -> str:
    """format characters removed > unicode tags decoded: the input of the skeleton keys.

    Not NFKC: it folds some look-alikes to a different letter first (Greek lunate sigma "Ϲ"
    would become "Σ" instead of "C"); the confusables data covers fullwidth and mathematical
    letters itself.
    """
    if text.isascii():
        return text
    return decode_tag_chars(strip_format_chars(text))


def skeleton_key(text: str) -> str:
    """format characters removed > unicode tags decoded > confusable skeleton (case-preserving)."""
    return skeleton(unmasked(text))


def skeleton_casefold(text: str) -> str:
    """skeleton_key > casefold: the case-insensitive skeleton key."""
    return skeleton(unmasked(text)).casefold()


def path_key(text: str) -> str:
    """Case-preserving path key: format characters removed > tags > NFKC > path canonicalised."""
    return canonical_path(clean(text))


def path_casefold_key(text: str) -> str:
    """normalised > path canonicalised."""
    return canonical_path(full_normalise(text))


# --- derived forms ------------------------------------------------------------------------------

# key name -> the function applied to a token/signal value to compare it with a form of that key
KEYS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "format": strip_format_chars,
    "tags": decode_tag_chars,
    "nfkc": nfkc,
    "casefold": casefold,
    "normalised": full_normalise,
    "skeleton": skeleton_key,
    "skeleton-casefold": skeleton_casefold,
    "path": path_key,
    "path-casefold": path_casefold_key,
}
# keys whose forms are case-folded: a case-sensitive signal must not be searched in them
CASEFOLDED_KEYS = frozenset({"casefold", "normalised", "skeleton-casefold", "path-casefold"})

# Derived forms are kept (and cached, matching.text_forms) while their total size stays within
# FORMS_BUDGET_FACTOR x the input + FORMS_BUDGET_EXTRA characters. Past it nothing is dropped:
# the forms are derived again, one at a time, for each search (`derivations`), so memory holds a
# few forms at a time instead of all of them.
FORMS_BUDGET_FACTOR = 8
FORMS_BUDGET_EXTRA = 1 << 20


@attrs.frozen
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


@attrs.frozen
class Undecodable:
    """A form that could not be derived within a limit (`decoding.LimitUnknown`): a search that
    finds nothing in the other forms of the text is unknown, not false."""

    name: str
    reason: str


# None: decoded from the base64-alphabet runs, found once for both (hex digits are base64 too)
_DECODERS: tuple[tuple[str, Callable[[str], str] | None], ...] = (
    ("json unescaped", json_unescape),
    ("html unescaped", html_unescape),
    ("percent-decoded", percent_decode),
    ("base64", None),
    ("hex", None),
)

Derivation = tuple[str, str, str]  # (name, derived text, key)


def _decode_runs(name: str, runs: list[str]) -> str:
    spans = _base64_runs(runs) if name == "base64" else _hex_runs(runs)
    return "\n".join(spans)


def _decoded_chain(name: str, decoded: str) -> Iterator[Derivation]:
    """A decoded text through the chain of the raw text: raw, normalised, confusable skeletons,
    path canonicalised (case-preserving and normalised). Each derived text is released before
    the next one is made, but those the chain derives from."""
    yield name, decoded, "raw"
    decoded_normalised = full_normalise(decoded)
    yield f"{name} > normalised", decoded_normalised, "normalised"
    skel = skeleton_key(decoded)
    yield f"{name} > confusable skeleton", skel, "skeleton"
    yield f"{name} > confusable skeleton > casefold", skel.casefold(), "skeleton-casefold"
    del skel
    yield f"{name} > path canonicalised", canonical_path(clean(decoded)), "path"
    yield f"{name} > normalised > path canonicalised", canonical_path(decoded_normalised), "path-casefold"


def derivations(text: str) -> Iterator[Derivation | Undecodable]:
    """Every form of `text` worth searching, one at a time, most direct first: (name, derived
    text, key), or Undecodable where a decoder hit a limit. The same text may come several times
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
        yield "nfkc", nfkc(text), "nfkc"
        yield "casefold", casefold(text), "casefold"
        unmasked_text = decode_tag_chars(stripped)
        cleaned = _clean_stripped(stripped)
        normalised = _full_from_clean(cleaned)
    yield "normalised", normalised, "normalised"
    skel = skeleton(unmasked_text)
    yield "confusable skeleton", skel, "skeleton"
    yield "confusable skeleton > casefold", skel.casefold(), "skeleton-casefold"
    del skel
    path = canonical_path(cleaned)
    yield "path canonicalised", path, "path"
    # on ASCII, lower-casing commutes with path canonicalisation: skip a second scan
    yield ("normalised > path canonicalised", path.lower() if ascii_text else canonical_path(normalised),
           "path-casefold")
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
    for prefix, source in sources:
        runs = candidate_runs(source)
        for name, decode in _DECODERS:
            label = f"{prefix} > {name}" if prefix else name
            try:
                decoded = decode(source) if decode is not None else _decode_runs(name, runs)
            except LimitUnknown as exc:
                yield Undecodable(label, str(exc))
                continue
            if not decoded or decoded == source:
                continue
            yield from _decoded_chain(label, decoded)
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
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
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
        url = core.translate(str.maketrans("+/", "-_"))
        if url != core:
            out.append(("base64url-encoded token", url))
    hexed = raw.hex()
    out.append(("hex-encoded token", hexed))
    out.append(("hex-encoded token", hexed.upper()))
    out.append(("percent-encoded token", "".join(f"%{b:02X}" for b in raw)))
    out.append(("percent-encoded token", "".join(f"%{b:02x}" for b in raw)))
    units = token.encode("utf-16-be", "surrogatepass")
    escaped = "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))
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
