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
json_unescape             json unescaped                    no ("\\\\u0041" -> "\\u0041" -> "A")
html_unescape             html unescaped                    yes for < 8 layers of escaping
percent_decode            percent-decoded                   yes for < 16 layers of encoding
canonical_path            path canonicalised                yes
base64_spans / hex_spans  base64 / hex                      n/a (extract decoded spans)
========================  ================================  ============

"normalised" is the full chain: format characters removed > unicode tags decoded > NFKC > casefold
(> NFKC again, so the result is stable: NFKC_Casefold in spirit).

`forms(text)` derives every form worth searching, each tagged with the *key*: the function that
must be applied to a token (or signal value) so that both sides are normalised the same way.
`variants(text)` is the public, simpler view: distinct (name, text) pairs.

Bounds: decoders cap their iterations and decoded bytes; `forms` caps the total size of derived
text at 8x the input + 1 MiB (lower-priority forms are dropped past that, see `FORMS_BUDGET_*`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import posixpath
import re
import unicodedata
import urllib.parse
from typing import Any
from collections.abc import Callable

import attrs
import re2
import regex

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


def skeleton(text: str) -> str:
    """Confusable skeleton (UTS #39 idea): NFD, map each character to its class prototype, NFD.

    Case-preserving: "І" (Cyrillic) and "I" both become "l", "а" becomes "a". Idempotent.
    """
    ascii_map, wide, wide_re = _skeleton_parts()
    text = unicodedata.normalize("NFD", text)
    if text.isascii():
        return text.encode("ascii").translate(ascii_map).decode("ascii")
    try:
        mapped = text.encode("utf-8").translate(ascii_map).decode("utf-8")
        if wide_re.search(mapped) is not None:
            mapped = wide_re.sub(lambda m: "".join(wide.get(c, c) for c in m.group()), mapped)
    except UnicodeEncodeError:  # lone surrogates: the slow, general path
        mapped = text.translate(_skeleton_table())
    return unicodedata.normalize("NFD", mapped)


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


# --- escapes and encodings ------------------------------------------------------------------------

_JSON_ESCAPE_RE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"  # surrogate pair
    r"|\\u\{([0-9a-fA-F]{1,6})\}"  # ES6 code point escape
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\x([0-9a-fA-F]{2})"
    r"|\\([\"\\/bfnrt'])"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}


def _json_escape(m: re.Match[str]) -> str:
    hi, lo, astral, bmp, byte, simple = m.groups()
    if hi is not None:
        return chr(0x10000 + ((int(hi, 16) - 0xD800) << 10) + (int(lo, 16) - 0xDC00))
    if astral is not None:
        cp = int(astral, 16)
        return chr(cp) if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else m.group()
    if bmp is not None:
        cp = int(bmp, 16)
        # A lone surrogate would make the text unencodable downstream: leave the escape as is.
        return m.group() if 0xD800 <= cp <= 0xDFFF else chr(cp)
    if byte is not None:
        return chr(int(byte, 16))
    return _SIMPLE_ESCAPES[simple]


def json_unescape(text: str) -> str:
    """Decode JSON/JS string escapes (\\uXXXX incl. surrogate pairs, \\u{X}, \\xXX, \\n, \\", ...).

    Tolerant: malformed escapes and lone surrogates are left as they are. One pass; not idempotent.
    """
    if "\\" not in text:
        return text
    return _JSON_ESCAPE_RE.sub(_json_escape, text)


HTML_MAX_LAYERS = 8
PERCENT_MAX_LAYERS = 16


def html_unescape(text: str) -> str:
    """html.unescape to a fixed point (double-escaped "&amp;#65;" -> "A"), at most 8 passes."""
    for _ in range(HTML_MAX_LAYERS):
        if "&" not in text:
            break
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return text


def percent_decode(text: str) -> str:
    """URL percent-decoding to a fixed point ("%2541" -> "%41" -> "A"), at most 16 passes.

    Invalid UTF-8 byte sequences decode to U+FFFD; "+" is left alone (it is not a space outside
    form bodies, and guessing would hide real plus signs).
    """
    for _ in range(PERCENT_MAX_LAYERS):
        if "%" not in text:
            break
        decoded = urllib.parse.unquote(text, errors="replace")
        if decoded == text:
            break
        text = decoded
    return text


# --- base64 / hex spans ---------------------------------------------------------------------

# MIME and PEM wrap base64 at 64/76 columns: a run may continue on the next line.
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{8,}")
_URL_TO_STD = str.maketrans("-_", "+/")
_NONPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
MAX_DECODED_CHARS = 1 << 22  # per call; base64_spans/hex_spans stop decoding past this


def _printable(raw: bytes) -> str | None:
    """The UTF-8 text of `raw` if it is mostly (>= 80 %) printable, else None."""
    text = raw.decode("utf-8", "replace")
    if not text:
        return None
    bad = len(_NONPRINTABLE.findall(text))
    if bad * 5 > len(text):
        return None
    return _NONPRINTABLE.sub(" ", text) if bad else text


def _looks_like_word(run: str) -> bool:
    # Words and identifiers ("information", "Configuration", "positive_labels", "pre-flight")
    # are valid base64 but almost never real encodings; skipping them keeps prose cheap. Real
    # base64 of 6+ bytes practically always has an upper-case letter past its first character.
    return run[1:].islower() or run.isupper() or run.isdigit()


def _decode_b64_run(run: str) -> str | None:
    std = run.translate(_URL_TO_STD)
    for align in range(4):
        chunk = std[align:]
        rem = len(chunk) % 4
        if rem == 1:
            chunk = chunk[:-1]
        elif rem:
            chunk += "=" * (4 - rem)
        if len(chunk) < 8:
            return None
        try:
            decoded = _printable(binascii.a2b_base64(chunk))
        except (binascii.Error, ValueError):
            continue
        if decoded is not None:
            return decoded
    return None


def base64_spans(text: str, max_chars: int = MAX_DECODED_CHARS) -> list[str]:
    """Decode every plausible base64 / base64url run (>= 8 chars) of `text`.

    A run may start mid-group when the blob is glued to other word characters, so each of the 4
    alignments is tried; the first that decodes to mostly printable UTF-8 is kept. A token at any
    byte position inside a longer encoded blob is therefore found (the blob decodes whole).
    Runs wrapped over several lines (MIME/PEM) are joined first; when the joined run does not
    decode, each line is tried on its own (one value per line).
    Decoding stops after `max_chars` decoded characters in total.
    """
    return _base64_runs(_B64_RUN.findall(text), max_chars)


def _base64_runs(runs: list[str], max_chars: int) -> list[str]:
    out: list[str] = []
    budget = max_chars
    for run in runs:
        if "\n" in run:
            lines = run.split()
            joined = "".join(lines)
            decoded = None if _looks_like_word(joined) else _decode_b64_run(joined)
            found = [decoded] if decoded is not None else [
                _decode_b64_run(line) for line in lines if not _looks_like_word(line)
            ]
        elif run[1:].islower() or run.isupper() or run.isdigit():  # _looks_like_word, inlined: hot
            continue
        else:
            found = [_decode_b64_run(run)]
        for decoded in found:
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
        if budget <= 0:
            break
    return out


def hex_spans(text: str, max_chars: int = MAX_DECODED_CHARS) -> list[str]:
    """Decode every plausible hex run (>= 8 hex digits) at both nibble alignments; keep the
    first alignment that is mostly printable UTF-8. Bounded by `max_chars` decoded characters."""
    return _hex_runs(_B64_RUN.findall(text), max_chars)


def _hex_runs(runs: list[str], max_chars: int) -> list[str]:
    """Hex runs live inside base64-alphabet runs (hex digits are base64 characters)."""
    out: list[str] = []
    budget = max_chars
    hex_runs = [h for run in runs if len(run) >= 8 for h in _HEX_RUN.findall(run)]
    for run in hex_runs:
        for align in (0, 1):
            chunk = run[align:]
            chunk = chunk[: len(chunk) - len(chunk) % 2]
            decoded = _printable(bytes.fromhex(chunk))
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
                break
        if budget <= 0:
            break
    return out


# --- paths -------------------------------------------------------------------------------------

# A path-like token: an optional file: scheme, an optional drive or ~ / . / .. prefix, then at
# least one separator followed by a segment; or a relative a/b. Other URLs are matched whole so
# that their "//authority" is left alone. RE2: linear time, and ~10x faster than `re` on prose.
_SEG = r"[\p{L}\p{N}_.~%$@+=-]+"
_PATH_BODY = (
    r"(?:\b(?i:file):(?://(?i:localhost)?)?)?(?:\b[A-Za-z]:|~|\.{1,2})?(?:[\\/]+" + _SEG + r")+[\\/]*"
    r"|\b" + _SEG + r"(?:[\\/]+" + _SEG + r")+[\\/]*"
)
_PATH_RE = re2.compile(
    r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]*)|" + _PATH_BODY, _RE2_OPTIONS
)
_PATH_ONLY_RE = re2.compile(_PATH_BODY, _RE2_OPTIONS)
_MULTI_SLASH = re.compile(r"/{2,}")


def _canonical(p: str) -> str:
    if p[:5].lower() == "file:":
        p = p[5:]
        if p[:11].lower() == "//localhost":
            p = p[11:]
    p = _MULTI_SLASH.sub("/", p.replace("\\", "/"))
    return posixpath.normpath(p) if p else p


def _canonical_token(m: Any) -> str:
    p = m.group()
    if m.group(1) is None:
        return _canonical(p)
    # a URL: only file: URLs name a local path
    if p[:5].lower() == "file:":
        return _PATH_ONLY_RE.sub(lambda inner: _canonical(inner.group()), p)
    return p


# Everything `_canonical` can change starts with one of these: a backslash, "./", a "." or ".."
# segment, a doubled or trailing slash, a file: scheme. Texts without any (most prose, most
# URLs) are returned as they are; `re` finds the leading characters quickly.
_PATH_MAY_CHANGE = re.compile(r"\\|\./|/(?:[./]|(?![\w~%$@+=-]))|[Ff][Ii][Ll][Ee]:")


def canonical_path(text: str) -> str:
    """Canonicalise every path-like token: file:///etc//passwd, //etc/passwd, /etc/../etc/passwd,
    /etc/./passwd and \\etc\\passwd all become /etc/passwd. Idempotent."""
    if ("/" not in text and "\\" not in text) or not _PATH_MAY_CHANGE.search(text):
        return text
    try:
        return _PATH_RE.sub(_canonical_token, text)
    except UnicodeEncodeError:
        return _PATH_RE.sub(_canonical_token, _SURROGATE.sub("\ufffd", text))


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


# None: decoded from the base64-alphabet runs, found once for both (hex digits are base64 too)
_DECODERS: tuple[tuple[str, Callable[[str], str] | None], ...] = (
    ("json unescaped", json_unescape),
    ("html unescaped", html_unescape),
    ("percent-decoded", percent_decode),
    ("base64", None),
    ("hex", None),
)


def _decode_runs(name: str, runs: list[str]) -> str:
    spans = _base64_runs(runs, MAX_DECODED_CHARS) if name == "base64" else _hex_runs(runs, MAX_DECODED_CHARS)
    return "\n".join(spans)


def forms(text: str) -> tuple[Form, ...]:
    """Every form of `text` worth searching, most direct first.

    Order: raw (always present, even when empty); each single transform; the full chain;
    confusable skeletons; path canonicalisation; then each decoder's output raw, normalised and
    path-canonicalised. The total size of distinct derived texts is capped at 8x len(text) +
    1 MiB; forms past the cap are skipped (only reachable with inputs of many MB).
    """
    views: dict[str, list[tuple[str, str]]] = {text: [("raw", "raw")]}
    budget = FORMS_BUDGET_FACTOR * len(text) + FORMS_BUDGET_EXTRA

    def add(name: str, derived: str, key: str) -> None:
        nonlocal budget
        known = views.get(derived)
        if known is not None:
            known.append((name, key))
        elif derived and len(derived) <= budget:
            budget -= len(derived)
            views[derived] = [(name, key)]

    if text.isascii():
        # the common case: format characters, tags and NFKC cannot change ASCII
        views[text] += [("format characters removed", "format"), ("unicode tags decoded", "tags"),
                        ("nfkc", "nfkc")]
        cleaned = unmasked_text = text
        normalised = text.lower()
        add("casefold", normalised, "casefold")
    else:
        stripped = strip_format_chars(text)
        add("format characters removed", stripped, "format")
        add("unicode tags decoded", decode_tag_chars(text), "tags")
        add("nfkc", nfkc(text), "nfkc")
        add("casefold", casefold(text), "casefold")
        unmasked_text = decode_tag_chars(stripped)
        cleaned = _clean_stripped(stripped)
        normalised = _full_from_clean(cleaned)
    add("normalised", normalised, "normalised")
    skel = skeleton(unmasked_text)
    add("confusable skeleton", skel, "skeleton")
    add("confusable skeleton > casefold", skel.casefold(), "skeleton-casefold")
    path = canonical_path(cleaned)
    add("path canonicalised", path, "path")
    # on ASCII, lower-casing commutes with path canonicalisation: skip a second scan
    add("normalised > path canonicalised", path.lower() if text.isascii() else canonical_path(normalised),
        "path-casefold")
    runs = _B64_RUN.findall(text)
    for name, decode in _DECODERS:
        decoded = decode(text) if decode is not None else _decode_runs(name, runs)
        if not decoded or decoded == text:
            continue
        add(name, decoded, "raw")
        decoded_normalised = full_normalise(decoded)
        add(f"{name} > normalised", decoded_normalised, "normalised")
        add(f"{name} > normalised > path canonicalised", canonical_path(decoded_normalised),
            "path-casefold")
    return tuple(Form(t, tuple(v)) for t, v in views.items())


def variants(text: str) -> list[tuple[str, str]]:
    """The distinct (transform name, derived text) forms of `text`, most direct first.

    Identical texts are listed once, under the first name that produced them.
    """
    return [(form.name, form.text) for form in forms(text)]


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
    seen: set[str] = set()
    out = []
    for name, form in candidates:
        if form and form not in seen:
            seen.add(form)
            out.append((name, form))
    return out
