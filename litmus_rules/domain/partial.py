"""Partial overlap between a text signal's literal text and a surface, when it means something.

DESIGN, "Reading the note" 2: a surface token of at least `min_len` characters inside the
signal's literal text, or that literal inside a surface token, is a partial overlap; it counts
only when the shared text is *distinctive*:

- identifier-shaped: a digit, one of `_ - / . @ \\` joining word characters (or starting a path),
  or an inner capital (`getUserData`);
- a run of two or more whole words ("Riverside View" inside "Riverside View Hotel");
- or a word that is not common in its language: wordfreq's Zipf frequency (log10 of uses per
  billion words) at most `common_zipf`, in the languages of the word's script (Latin: the largest
  over English and a few major European languages). A word the lists do not know, in a script
  they do not cover (CJK, Thai...), or of mixed scripts is rare: it counts (fail closed).

So a plain-English signal ("wire transfer completed") does not collide with every prompt that says
"transfer", and a random token, a path or a name still does. The word lists load on the first
candidate overlap, never at import: a clean episode whose texts share no long token never pays.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Set
from typing import Any

from litmus_rules.domain.lazyre import Patterns, word_bounded
from litmus_rules.domain.textmemo import re2_module, re2_options, utf8

# A word is common when its Zipf frequency exceeds this (3.0: more than once per million words;
# wordfreq's "small" lists hold exactly those words, so they answer for any threshold >= 3).
COMMON_WORD_ZIPF = 3.0
SMALL_LIST_FLOOR = 3.0
# The languages whose lists decide, by the script of the word's letters.
SCRIPT_LANGUAGES = {
    "LATIN": ("en", "de", "fr", "es", "it", "pt", "nl"),
    "CYRILLIC": ("ru", "uk", "bg", "mk"),
    "GREEK": ("el",),
    "ARABIC": ("ar", "fa", "ur"),
    "HEBREW": ("he",),
    "DEVANAGARI": ("hi",),
    "BENGALI": ("bn",),
    "TAMIL": ("ta",),
}

_WORD_RE_SPEC = (r"\w+", 0)
# Path-like tokens are kept whole ("/etc/passwd", "file:///x", "C:\\Users\\x", "~/.ssh/id_rsa").
_PATHISH_RE_SPEC = (r"(?:[A-Za-z][\w+.-]*:)?[\w.~$@+=%-]*(?:[\\/]+[\w.~$@+=%-]+)+[\\/]*", 0)
_JOINERS = "_-/.@\\"
# A joiner between word characters, or one that starts a token ("/etc", ".bashrc", "@user").
_JOINED_RE_SPEC = (r"\w[-_/.@\\]\w|(?<!\w)[-_/.@\\]\w", 0)

# Texts longer than this are tokenised on each call instead of cached: the cache would keep their
# (streamed) forms alive. A cache bound: it costs time, never a token.
TOKENS_CACHE_TEXT = 1 << 16


def tokens(text: str) -> tuple[dict[str, None], str]:
    """The distinct tokens of `text` (path-like ones whole, then words), and the same joined
    by newlines so that "literal inside some token" is one substring search."""
    return _cached_tokens(text) if len(text) <= TOKENS_CACHE_TEXT else _tokenise(text)


@functools.lru_cache(maxsize=256)
def _cached_tokens(text: str) -> tuple[dict[str, None], str]:
    return _tokenise(text)


def _tokenise(text: str) -> tuple[dict[str, None], str]:
    toks: dict[str, None] = {}
    if "/" in text or "\\" in text:
        toks.update(dict.fromkeys(_RE.PATHISH_RE.findall(text)))
    toks.update(dict.fromkeys(_RE.WORD_RE.findall(text)))
    return toks, "\n".join(toks)


@functools.lru_cache(maxsize=256)  # per-episode literals; each entry can hold ~2,000 substrings
def grams(literal: str, min_len: int) -> tuple[frozenset[str], frozenset[str]]:
    """Substrings of `literal` of length >= min_len (short literals only), and its min_len-grams."""
    all_grams = frozenset(literal[i : i + min_len] for i in range(len(literal) - min_len + 1))
    if len(literal) > 64:
        return frozenset(), all_grams
    subs = frozenset(
        literal[i:j] for i in range(len(literal)) for j in range(i + min_len, len(literal) + 1)
    )
    return subs, all_grams


# Past this many characters of text, a literal's grams are looked for in one RE2 pass over the
# text (a DFA for all of them) instead of one `str` scan each (20 grams: 20 scans of 1 MB); so are
# GRAM_SCAN_RE2_MANY grams or more once the scans would read GRAM_SCAN_RE2_WORK characters (a
# `str` scan for a 6-character gram reads random text at ~0.4 ns a character: 20 grams in 14 KB
# 120 us, RE2 25 us).
GRAM_SCAN_RE2_MIN = 1 << 15
GRAM_SCAN_RE2_MANY = 7
GRAM_SCAN_RE2_WORK = 1 << 14
# More grams than this are not put in one RE2 pattern (its automaton grows with them).
GRAM_SCAN_RE2_MAX = 4096
# Many grams (more than a sixteenth of the text's length) are looked up per position of a text
# shorter than this, in a set; in a longer one (the forms of a text joined, matching.py), by RE2:
# a slice per position costs more than the call.
GRAM_SET_RE2_MIN = 256


def _shares_gram(literal_grams: frozenset[str], text: str, min_len: int) -> bool:
    if not literal_grams:
        return False
    if len(literal_grams) <= 16 or len(text) > 16 * len(literal_grams):
        many = len(literal_grams) >= GRAM_SCAN_RE2_MANY and len(text) * len(literal_grams) >= GRAM_SCAN_RE2_WORK
        if (len(text) >= GRAM_SCAN_RE2_MIN or many) and 1 < len(literal_grams) <= GRAM_SCAN_RE2_MAX:
            found = _any_gram_in(literal_grams, text)
            if found is not None:
                return found
        for gram in literal_grams:  # few grams: one substring search each
            if gram in text:
                return True
        return False
    if len(text) >= GRAM_SET_RE2_MIN and len(literal_grams) <= GRAM_SCAN_RE2_MAX:
        found = _any_gram_in(literal_grams, text)
        if found is not None:
            return found
    return not literal_grams.isdisjoint(text[i : i + min_len] for i in range(len(text) - min_len + 1))


@functools.lru_cache(maxsize=64)
def _grams_pattern(grams: frozenset[str]) -> Any:
    """The grams' UTF-8 as one RE2 alternation of literals (None if RE2 cannot compile it: a lone
    surrogate has no UTF-8, or the pattern is past RE2's memory bound)."""
    re2 = re2_module()
    try:
        return re2.compile(b"|".join(re2.escape(g.encode("utf-8")) for g in sorted(grams)), re2_options())
    except (re2.error, UnicodeEncodeError):
        return None


def _any_gram_in(grams: frozenset[str], text: str) -> bool | None:
    """Whether one of `grams` occurs in `text`, by one RE2 scan of its UTF-8 (kept for a large
    text: textmemo.utf8, which other scans of it share); None when RE2 cannot answer (a lone
    surrogate has no UTF-8): the caller looks for each gram. A substring of code points is a
    substring of their UTF-8 bytes, and only there (UTF-8 is self-synchronising)."""
    pattern = _grams_pattern(grams)
    if pattern is None:
        return None
    try:
        data = utf8(text)
    except UnicodeEncodeError:
        return None
    return pattern.search(data) is not None  # type: ignore[no-any-return]


def overlap_in(lit: str, text: str, min_len: int, common_zipf: float) -> tuple[str, int] | None:
    """The distinctive text `lit` shares with `text` through a token of >= min_len characters,
    and its offset in `text`; None when they share none (or only common words)."""
    subs, lit_grams = grams(lit, min_len)
    # Any token of >= min_len chars inside `lit` starts with one of lit's min_len-grams, and
    # `lit` inside a token is in the text: both need a gram in the text. Cheap test first.
    if not _shares_gram(lit_grams, text, min_len):
        return None
    toks, joined = tokens(text)
    hits: Set[str] = (
        subs.intersection(toks) if subs else {t for t in toks if len(t) >= min_len and t in lit}
    )
    for tok in sorted(hits, key=lambda t: (-len(t), t)):
        found = distinctive(tok, lit, text, common_zipf)
        if found is not None:
            return found
    if "\n" not in lit and lit in joined:
        return distinctive(lit, lit, text, common_zipf)
    return None


# --- distinctive shared text -------------------------------------------------------------------


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def identifier_shaped(s: str) -> bool:
    """A digit, a joiner `_ - / . @ \\` joining word characters or starting one, or an inner
    capital (a lower-case letter followed by an upper-case one)."""
    if any(map(str.isdigit, s)) or _RE.JOINED_RE.search(s):
        return True
    if s.islower() or s.isupper():  # (most words: no lower-case letter can precede an upper-case one)
        return False
    return any(a.islower() and b.isupper() for a, b in zip(s, s[1:]))


def distinctive(tok: str, lit: str, text: str, common_zipf: float) -> tuple[str, int] | None:
    """`tok` occurs in both `lit` and `text`: the distinctive text they share around it (and its
    offset in `text`), or None. Cheapest tests first; the word lists last."""
    shaped, extensions, word = _distinctive_plan(tok, lit)
    if shaped:
        return _shown(tok, lit, text)
    for cand, words in extensions:
        at = _whole(cand, text) if words else text.find(cand)
        if at >= 0:
            return _shown(cand, lit, text, at)
    if word and not common_word(tok, common_zipf):
        return _shown(tok, lit, text)
    return None


@functools.lru_cache(maxsize=4096)
def _distinctive_plan(tok: str, lit: str) -> tuple[bool, tuple[tuple[str, bool], ...], bool]:
    """What of `distinctive` depends on `tok` and `lit` alone, worked out once for all the texts
    that share `tok` with `lit` (a tool list can hold thousands): whether `tok` is
    identifier-shaped; the extensions of its occurrences in `lit`, each once, in order; whether
    it is one word (then the word lists decide)."""
    if identifier_shaped(tok):
        return True, (), False
    n = len(tok)
    extensions: dict[str, bool] = {}  # a candidate text, tried the first way it comes
    j = lit.find(tok)
    while j >= 0:
        for cand, words in _extensions(lit, j, n):
            extensions.setdefault(cand, words)
        j = lit.find(tok, j + 1)
    return False, tuple(extensions.items()), _RE.WORD_RE.fullmatch(tok) is not None


def _extensions(lit: str, j: int, n: int) -> list[tuple[str, bool]]:
    """Texts of `lit` that extend its token at [j, j+n) into something distinctive: a joiner and
    a word character on either side (identifier), or the whole word before or after it (two
    words; the flag says the candidate must be found at word boundaries)."""
    out: list[tuple[str, bool]] = []
    end = j + n
    before = lit[j - 1] if j >= 1 else ""
    after = lit[end] if end < len(lit) else ""
    if before and before in _JOINERS:
        if j >= 2 and _is_word(lit[j - 2]):
            out.append((lit[j - 2 : end], False))
        elif j == 1 or lit[j - 2].isspace():
            out.append((lit[j - 1 : end], False))
    if after and after in _JOINERS and end + 1 < len(lit) and _is_word(lit[end + 1]):
        out.append((lit[j : end + 2], False))
    whole_left = not before or not _is_word(before)
    whole_right = not after or not _is_word(after)
    if before.isspace() and whole_right:
        k = j - 1
        while k >= 0 and lit[k].isspace():
            k -= 1
        start = k
        while start >= 0 and _is_word(lit[start]):
            start -= 1
        if start < k:
            out.append((lit[start + 1 : end], True))
    if after.isspace() and whole_left:
        k = end
        while k < len(lit) and lit[k].isspace():
            k += 1
        stop = k
        while stop < len(lit) and _is_word(lit[stop]):
            stop += 1
        if stop > k:
            out.append((lit[j:stop], True))
    return out


def _whole(cand: str, text: str) -> int:
    """The offset of `cand` in `text` where it starts and ends at word boundaries, or -1."""
    m = word_bounded(cand).search(text)
    return m.start() if m is not None else -1


def _shown(shared: str, lit: str, text: str, at: int | None = None) -> tuple[str, int]:
    """What a witness shows: the shared text grown as far as `lit` and `text` agree around one
    occurrence (e.g. "user@example.com" for a shared "r@example"), trimmed of blanks."""
    i = text.find(shared) if at is None else at
    j = lit.find(shared)
    if i < 0 or j < 0:  # pragma: no cover - the callers found it in both
        return shared, max(i, 0)
    a, b = i, j
    while a > 0 and b > 0 and text[a - 1] == lit[b - 1]:
        a, b = a - 1, b - 1
    e, f = i + len(shared), j + len(shared)
    while e < len(text) and f < len(lit) and text[e] == lit[f]:
        e, f = e + 1, f + 1
    grown = text[a:e]
    stripped = grown.strip()
    return stripped, a + (len(grown) - len(grown.lstrip()))


# --- word frequency ----------------------------------------------------------------------------


def languages(word: str) -> tuple[str, ...]:
    """The wordfreq languages for the script of `word`'s letters; () for none or several."""
    scripts = {unicodedata.name(c, "?").split(" ", 1)[0] for c in word if c.isalpha()}
    if len(scripts) != 1:
        return ()
    return SCRIPT_LANGUAGES.get(scripts.pop(), ())


@functools.lru_cache(maxsize=8192)
def common_word(word: str, common_zipf: float = COMMON_WORD_ZIPF) -> bool:
    """Is `word` common (Zipf frequency above `common_zipf`) in some language of its script?
    Unknown words, uncovered scripts and a lookup that fails are not common (fail closed: the
    overlap counts)."""
    langs = languages(word)
    if not langs:
        return False
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover - a declared dependency
        return False
    wordlist = "small" if common_zipf >= SMALL_LIST_FLOOR else "best"
    for lang in langs:
        try:
            if zipf_frequency(word, lang, wordlist=wordlist) > common_zipf:
                return True
        except Exception:  # noqa: BLE001 - a list that cannot be read decides nothing: rare
            continue
    return False


# compiled on first use (lazyre): most runs never need them
_RE = Patterns(**{name[1:-5]: spec for name, spec in list(globals().items()) if name.endswith("_SPEC")})
