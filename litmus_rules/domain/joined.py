"""Search many texts at once: the first text on which an exact test succeeds (and, for a reject's
witnesses, the ones after it: `first_matches`).

The rules ask "does this signal collide with any surface of the episode?" of ~600 surfaces per
episode (10,000+ for large manifests). Testing them one by one derives every new text's forms
(`normalize.forms`), which dominates. But most surfaces are *plain*: no decoder changes them,
read from the text or from its cleaned form (format characters removed > tags > NFKC), which
`forms` decodes too (no backslash; HTML and percent decoding leave both as they are; no
base64-alphabet run of either that decodes, no group run, no markup inside a word). Every form
of a plain text T is then one of the transforms of T, by view key:

    raw T, format strip_format_chars(T), tags decode_tag_chars(T), nfkc nfkc(T),
    casefold casefold(T), normalised full_normalise(T), skeleton skeleton_key(T),
    skeleton-casefold skeleton_casefold(T), path canonical_path(clean(T)),
    path-casefold canonical_path(full_normalise(T))

(`probes.KEY_FORM`; the decoders add nothing). Each Unicode transform works character by
character, or between two "starter" characters, so applied to texts joined by NUL it gives the
join of its results: NUL is kept, produced by nothing, and composes with nothing. Path
canonicalisation is applied to each text on its own (a URL token may run on past a NUL), and its
results joined (session 20: a text with a path such as "/x/../y" was tested on its own). So:

1. the texts are joined with NUL separators, and the plain ones told apart from the others with
   a few linear scans of the join (`Haystack`);
2. each transform is applied once, to the whole join (`Haystack.form`: UTF-8, with the byte
   offset of every text's segment, joins.py; on ASCII texts the nine forms are four; a large
   text's transforms and their UTF-8 are the ones its own forms use, kept by textmemo.py);
3. a `Probe` (probes.py: literals and RE2 patterns, per form) finds in one pass per form the
   *candidates*: the texts on which the exact test may succeed (a regex's probe, in a join of non-ASCII texts,
   the one exact on the 256-character pages the join holds: `PagedPattern`);
4. the exact test decides, in text order, on each candidate and each text that is not plain.

A text one of whose transforms meets a limit (transforms.NFKC_MAX_ADDED) is not plain either: it
is left out of that form and tested on its own, where it stands in the order, so that a hit in
an earlier text stands and the limit is met (and raised, naming the text) only where a search of
one text at a time would meet it.

The answer is therefore the same as testing every text in order, provided that each probe is a
superset: whenever the exact test succeeds on a plain text, the probe matches at a position of
that text's segment (its start to its end, inclusive) in one of the joined forms. False
candidates cost one exact test each. `matching.py` builds the probes and says why each is a
superset.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.decoding import LimitUnknown, encoded_run_hint
from litmus_rules.domain.grouped import grouped_hint
from litmus_rules.domain.joins import _PLUS_ONE, SEP, _each, _encoded_join, _Form
from litmus_rules.domain.markup import markup_hint
from litmus_rules.domain.paths import canonical_path
from litmus_rules.domain.probes import PROBE_MAX_MEM, PagedPattern, Probe, _has_surrogate
from litmus_rules.domain.regexes import _pages as text_pages
from litmus_rules.domain.textchecks import checked, checking
from litmus_rules.domain.textmemo import MEMO_MIN, re2_module, re2_options
from litmus_rules.domain.transforms import (
    _full_from_clean,
    casefold,
    clean,
    decode_tag_chars,
    nfkc,
    skeleton_ascii_map,
    skeleton_key,
    strip_format_chars,
)

# How each form is derived: from the raw join, or from another form (as normalize.py derives it:
# full_normalise(t) = _full_from_clean(clean(t)), skeleton_casefold(t) = skeleton_key(t).casefold()).
_TRANSFORMS: dict[str, tuple[str, Callable[[str], str]]] = {
    "format": ("raw", strip_format_chars), "tags": ("raw", decode_tag_chars), "nfkc": ("raw", nfkc),
    "casefold": ("raw", casefold), "cleaned": ("raw", clean), "normalised": ("cleaned", _full_from_clean),
    "skeleton": ("raw", skeleton_key), "skeleton-casefold": ("skeleton", casefold),
    "path": ("cleaned", canonical_path), "path-casefold": ("normalised", canonical_path),
}
# The path forms: derived text by text (a URL token runs on past a NUL), and most texts leave
# them as their source is, whose join then serves them too.
_PATH_FORMS = frozenset({"path", "path-casefold"})
# On ASCII text: the transforms that leave it as it is, and those that lower-case it.
_ASCII_SAME = frozenset({"format", "tags", "nfkc", "cleaned"})
_ASCII_LOWER = frozenset({"casefold", "normalised"})

W = TypeVar("W")

# Literals are found with one bytes.find each (2-7 GB/s) while that reads less than this many
# bytes; past it, with one compiled RE2 alternation (~0.3 ms to compile a dozen encoded tokens,
# then ~1 GB/s whatever their number). Probes are per signal, and canaries change per episode.
# Not a limit: either way finds every literal (an alternation RE2 cannot compile within max_mem
# falls back to the finds, and RE2's DFA falls back to its NFA when out of memory).
FIND_BYTES = 4 << 20


@functools.cache
def _run8() -> Any:
    return re2_module().compile(r"[A-Za-z0-9+/_-]{8}", re2_options(PROBE_MAX_MEM))


@functools.lru_cache(maxsize=256)
def _alternation(lits: tuple[bytes, ...]) -> Any:
    """One RE2 pattern for all the literals, or None if RE2 cannot compile it."""
    re2 = re2_module()
    try:
        return re2.compile(b"|".join(re2.escape(lit) for lit in lits), re2_options(PROBE_MAX_MEM))
    except re2.error:
        return None


class Haystack:
    """Texts joined by NUL, in every form, with the indices of the texts that are not plain."""

    __slots__ = ("_forms", "_page_sets", "_pieces", "_texts", "_unknown", "ascii", "exact", "results", "size",
                 "texts")

    def __init__(self, texts: tuple[str, ...]) -> None:
        self.texts = texts
        self.results: dict[Any, Any] = {}
        self._forms: dict[str, _Form | None] = {}
        self._texts: dict[str, list[str]] = {}
        self._page_sets: dict[str, tuple[int, ...]] = {}
        # texts a transform could not derive a form of (a limit: LimitUnknown), left out of that
        # form and tested on their own, where the exact test meets the limit in text order
        self._unknown: set[int] = set()
        self.exact: list[int] = []
        exact: set[int] = set()
        pieces: Sequence[str] = texts
        joined = SEP + SEP.join(texts)
        self.ascii = joined.isascii()
        form: _Form | None = None
        if joined.count(SEP) == len(texts):
            if self.ascii:
                # each segment starts one byte (the NUL) past the end of the one before (C-level
                # loops: an episode has hundreds of texts)
                starts = list(itertools.accumulate(map(_PLUS_ONE, map(len, texts[:-1])), initial=1))
                form = _Form(joined.encode("ascii"), starts)
            else:
                try:
                    form = _encoded_join(texts)
                except UnicodeEncodeError:
                    pass
        del joined
        if form is None:
            # A text holding a NUL (it would split its segment) or a lone surrogate (no UTF-8)
            # is left out of the join and tested on its own.
            pieces = []
            for i, text in enumerate(texts):
                if SEP in text or (not text.isascii() and _has_surrogate(text)):
                    exact.add(i)
                    pieces.append("")
                else:
                    pieces.append(text)
            form = _encoded_join(pieces)
            assert form is not None  # no piece holds a NUL or a lone surrogate now
        self._pieces = list(pieces)
        self._forms["raw"] = form
        self.size = len(form.data)

        def always(i: int) -> bool:
            return True

        html, percent = checking(texts, "html"), checking(texts, "percent")
        escapes = checking(texts, "escapes")  # IIS's %u006c, quoted-printable =6C=63 (decoding.other_escapes)
        checks: list[tuple[str, bytes, Callable[[int], bool]]] = [
            ("raw", b"\\", always),  # JSON escapes, Windows paths
            ("raw", b"&", html),
            ("raw", b"%", percent),
            ("raw", b"%", escapes),
            ("raw", b"=", escapes),
        ]
        if not self.ascii:
            # NFKC can make a backslash, "&", "%", "=" (fullwidth ones, ...) that the decoders of
            # the cleaned text read
            checks += [("cleaned", b"\\", always), ("cleaned", b"&", html), ("cleaned", b"%", percent),
                       ("cleaned", b"%", escapes), ("cleaned", b"=", escapes)]
        for name, char, differs in checks:
            for i in self._segments_with(name, char):
                if i not in exact and differs(i):
                    exact.add(i)
        # base64 / hex runs, in the raw text and (non-ASCII) in the cleaned text
        run_sources: list[tuple[_Form | None, Callable[[str], str]]] = [(form, lambda t: t)]
        if not self.ascii:
            run_sources.append((self.form("cleaned"), clean))
        for source, derive in run_sources:
            hinted = range(len(texts)) if source is None else self._hinted_runs(source)
            for i in hinted:
                if i in exact:
                    continue
                if source is not None:
                    end = source.starts[i + 1] - 1 if i + 1 < len(source.starts) else len(source.data)
                    if _run8().search(source.data, source.starts[i], end) is None:
                        continue
                if checked("runs", derive(texts[i])):
                    exact.add(i)
        # grouped encodings ("bGMt NWYw", "6c:63:2d"), likewise
        for source, derive in run_sources:
            for i in range(len(texts)) if source is None else self._segments_matching(source, grouped_hint()):
                if i not in exact and checked("groups", derive(texts[i])):
                    exact.add(i)
        # markup and line wraps inside words ("lc-5f<b>0e9a</b>3b", "lc-\n5f0e"), likewise
        for source, derive in run_sources:
            for i in range(len(texts)) if source is None else self._segments_matching(source, markup_hint()):
                if i not in exact and checked("markup", derive(texts[i])):
                    exact.add(i)
        self.exact = sorted(exact | self._unknown)

    def _segments_with(self, name: str, char: bytes) -> list[int]:
        form = self.form(name)
        if form is None:
            return list(range(len(self.texts)))
        out = []
        data, starts = form.data, form.starts
        pos = data.find(char)
        while pos >= 0:
            i = form.segment_at(pos)
            out.append(i)
            if i + 1 >= len(starts):
                break
            pos = data.find(char, starts[i + 1])
        return out

    def _hinted_runs(self, raw: _Form) -> list[int]:
        """Segments where `decoding.may_hold_encoded_runs` is true (one scan of the join)."""
        return self._segments_matching(raw, encoded_run_hint())

    @staticmethod
    def _segments_matching(raw: _Form, hint: Any) -> list[int]:
        """Segments where a match of `hint` ends (one scan of the join): a hint may start at the
        NUL before a segment (a pattern that starts with "not a letter"), but ends inside one."""
        out = []
        pos = 0
        while True:
            m = hint.search(raw.data, pos)
            if m is None:
                break
            # a hint may start at the NUL before a segment, but always ends inside one
            i = raw.segment_at(m.end() - 1)
            out.append(i)
            if i + 1 >= len(raw.starts):
                break
            pos = raw.starts[i + 1] - 1  # the NUL: it may start the next segment's hint
        return out

    def form(self, name: str) -> _Form | None:
        """One of FORMS of the join; None if it could not be derived as a join (then every
        text is a candidate for a probe looking in it)."""
        if name in self._forms:
            return self._forms[name]
        raw = self._forms["raw"]
        assert raw is not None
        got: _Form | None
        if self.ascii and name in _ASCII_SAME:
            got = raw
        elif self.ascii and name in _ASCII_LOWER:
            # one object for both: a probe's searches in a form are made once per object
            other = next((f for n in _ASCII_LOWER if (f := self._forms.get(n)) is not None), None)
            got = other if other is not None else _Form(raw.data.lower(), raw.starts)
        elif self.ascii and name == "skeleton":
            got = _Form(raw.data.translate(skeleton_ascii_map()), raw.starts)
        elif self.ascii and name == "skeleton-casefold":
            skeleton = self.form("skeleton")
            assert skeleton is not None
            got = _Form(skeleton.data.lower(), raw.starts)
        elif self.ascii and name == "path-casefold":
            # on ASCII, lower-casing commutes with path canonicalisation (as normalize.py reads it)
            path = self.form("path")
            got = None if path is None else self.form("casefold") if path is raw else _Form(path.data.lower(), path.starts)
        else:
            pieces = self._text(name)
            source = _TRANSFORMS[name][0] if name in _PATH_FORMS else None
            if pieces == self._pieces:  # (the transforms give back an unchanged text itself: cheap)
                got = raw
            elif source is not None and pieces == self._text(source):
                got = self.form(source)
            else:
                # None: a NUL made or lost, never seen (every transform keeps each NUL, module doc)
                got = _encoded_join(pieces)
        self._forms[name] = got
        return got

    def _text(self, name: str) -> list[str]:
        """A form of each text (non-ASCII joins)."""
        if name == "raw":
            return list(self._pieces)
        got = self._texts.get(name)
        if got is None:
            source, transform = _TRANSFORMS[name]
            before = len(self._unknown)
            if name in _PATH_FORMS:
                # text by text: a URL token runs on past a NUL, and only a text with a separator
                # holds a path token
                got = self._texts[name] = [transform(piece) if "/" in piece or "\\" in piece else piece
                                           for piece in self._text(source)]
            else:
                got = self._texts[name] = _each(transform, self._text(source), self._unknown)
            if len(self._unknown) > before:
                self.exact = sorted(set(self.exact) | self._unknown)
        return got

    def _paged(self, name: str, paged: PagedPattern) -> Any:
        """The pattern to search form `name` with: exact on the pages it holds (non-ASCII joins)."""
        if self.ascii:
            return paged.pattern
        pages = self._page_sets.get(name)
        if pages is None:
            pieces = self._text(name)
            # a large text's pages are kept with it (its forms' searches ask them too)
            found = set(text_pages("".join(piece for piece in pieces if len(piece) < MEMO_MIN)))
            for piece in pieces:
                if len(piece) >= MEMO_MIN:
                    found.update(text_pages(piece))
            pages = self._page_sets[name] = tuple(sorted(found))
        exact = paged.on_pages(pages)
        return paged.pattern if exact is None else exact

    def first(self, probe: Probe, test: Callable[[str], W | None]) -> tuple[int, W] | None:
        """The first text (index, test result) on which `test` succeeds; only candidates and
        texts that are not plain are tested."""
        return next(self.matches(probe, test), None)

    def matches(self, probe: Probe, test: Callable[[str], W | None], start: int = 0) -> Iterator[tuple[int, W]]:
        """Every text from `start` on (index, test result) on which `test` succeeds, in order,
        found lazily: only candidates and texts that are not plain are tested."""
        texts, n = self.texts, len(self.texts)
        if probe.every_text:
            yield from _one_by_one(texts, range(start, n), test)
            return
        # (form, literal) pairs for bytes.find and (form, pattern) pairs for RE2; a form that
        # several names share (on ASCII text, raw is also format, tags, nfkc, cleaned) once
        lits_in: dict[int, tuple[_Form, set[bytes]]] = {}
        searches: list[tuple[_Form, Any]] = []
        for name, lits in probe.literals:
            form = self.form(name)
            if form is None:
                yield from _one_by_one(texts, range(start, n), test)
                return
            lits_in.setdefault(id(form), (form, set()))[1].update(
                filter(bytes.isascii, lits) if self.ascii else lits)  # ASCII texts: ASCII forms
        for name, pattern in probe.patterns:
            form = self.form(name)
            if form is None:
                yield from _one_by_one(texts, range(start, n), test)
                return
            if isinstance(pattern, PagedPattern):
                pattern = self._paged(name, pattern)
            if (form, pattern) not in searches:
                searches.append((form, pattern))
        finds: list[tuple[_Form, bytes]] = []
        for form, found_lits in lits_in.values():
            lits = tuple(sorted(found_lits))
            pattern = _alternation(lits) if len(lits) > 1 and len(lits) * self.size > FIND_BYTES else None
            if pattern is not None:
                searches.append((form, pattern))
            else:
                finds += [(form, lit) for lit in lits]
        # the text holding each literal's and pattern's first hit at or after the start of
        # text k in its form (n: no hit); a hit in text k or later stays the first one
        found_in = [-1] * len(finds)
        hit_in = [-1] * len(searches)
        exact = self.exact
        e = 0
        k = start
        while k < n:
            candidate = n
            for j, (form, lit) in enumerate(finds):
                if found_in[j] < k:
                    at = form.data.find(lit, form.starts[k])
                    found_in[j] = form.segment_at(at) if at >= 0 else n
                candidate = min(candidate, found_in[j])
            for j, (form, pattern) in enumerate(searches):
                if hit_in[j] < k:
                    m = pattern.search(form.data, form.starts[k])
                    hit_in[j] = form.segment_at(m.start()) if m is not None else n
                candidate = min(candidate, hit_in[j])
            while e < len(exact) and exact[e] < k:
                e += 1
            if e < len(exact) and exact[e] < candidate:
                candidate = exact[e]
            if candidate >= n:
                return
            found = _test(test, texts, candidate)
            if found is not None:
                yield candidate, found
            k = candidate + 1


def _test(test: Callable[[str], W | None], texts: Sequence[str], i: int) -> W | None:
    try:
        return test(texts[i])
    except LimitUnknown as exc:
        exc.index = i  # type: ignore[attr-defined]  # which text: the built-ins name its origin
        raise


def _one_by_one(texts: Sequence[str], indices: Iterable[int],
                test: Callable[[str], W | None]) -> Iterator[tuple[int, W]]:
    for i in indices:
        found = _test(test, texts, i)
        if found is not None:
            yield i, found


# Recent haystacks (texts -> Haystack), bounded by entries and by the bytes held, so that a long
# batch's memory stays flat. A RuleSet owns the cache its evaluations use and hands it to the
# searches through `using_haystacks` (the built-ins `leak` and `collision` do); `_haystacks` serves
# searches made outside any evaluation (direct library calls).
HAYSTACK_ENTRIES = 16
HAYSTACK_BYTES = 16 << 20


def _HaystackCache() -> BoundedCache[Haystack]:  # noqa: N802 - named as the class it once was
    return BoundedCache(HAYSTACK_ENTRIES, HAYSTACK_BYTES)


_haystacks = _HaystackCache()
_current_haystacks: contextvars.ContextVar[BoundedCache[Haystack] | None] = contextvars.ContextVar(
    "litmus_haystacks", default=None
)


@contextlib.contextmanager
def using_haystacks(cache: BoundedCache[Haystack]) -> Iterator[None]:
    """Searches inside this block keep their haystacks in `cache` (a RuleSet's)."""
    token = _current_haystacks.set(cache)
    try:
        yield
    finally:
        _current_haystacks.reset(token)


def _haystack(texts: tuple[str, ...]) -> Haystack:
    cache = _current_haystacks.get()
    if cache is None:
        cache = _haystacks
    return cache.get_or_make(texts, lambda: Haystack(texts), lambda h: h.size)


_MISSING: Any = object()


def first_match(texts: Sequence[str], probe: Callable[[], Probe], test: Callable[[str], W | None],
                key: Any) -> tuple[int, W] | None:
    """The first of `texts` (index, test result) on which `test` succeeds, or None.

    `probe()` must describe a superset of where `test` succeeds on plain texts (module doc), and
    `test` must not raise on a plain text unless the probe is EVERY_TEXT (texts skipped by a probe
    are never tested). `key` names (probe, test): the result is remembered with the texts, so
    asking again (a rule's message repeats its condition's call) costs a lookup.
    """
    texts = texts if isinstance(texts, tuple) else tuple(texts)
    if not texts:
        return None
    hay = _haystack(texts)
    result = hay.results.get(key, _MISSING)
    if result is _MISSING:
        result = hay.first(probe(), test)
        hay.results[key] = result
    return result


def first_matches(texts: Sequence[str], probe: Callable[[], Probe], test: Callable[[str], W | None],
                  key: Any, *, enough: Callable[[int, W], bool], limit: int,
                  tolerated: tuple[type[BaseException], ...] = (), first_key: Any = None) -> tuple[tuple[int, W], ...]:
    """The texts (index, test result) on which `test` succeeds, in order: the first one, as
    `first_match` finds it, then more, until one satisfies `enough` or `limit` are found (the
    witnesses of a reject, to rank). What a search costs past the first hit is paid by rejects
    only: with no hit, this is `first_match`. Given `first_key` (the `key` of a `first_match`
    with the same probe and test), the first hit that one found is taken as it is and the search
    goes on past it.

    An error of a `tolerated` type on a text after the first hit ends the search instead of
    being raised: the question `first_match` answers ("is there a first text?") is settled then.
    Before the first hit it is raised, as `first_match` raises it. `key` must name (probe, test,
    enough, limit): the result is remembered with the texts, as `first_match`'s.
    """
    texts = texts if isinstance(texts, tuple) else tuple(texts)
    if not texts:
        return ()
    hay = _haystack(texts)
    result = hay.results.get(key, _MISSING)
    if result is _MISSING:
        found: list[tuple[int, W]] = []
        first = hay.results.get(first_key, _MISSING) if first_key is not None else _MISSING
        if first is None:  # no text at all
            hay.results[key] = ()
            return ()
        if first is not _MISSING:
            found.append(first)
            if enough(*first):
                hay.results[key] = result = tuple(found)
                return result  # type: ignore[no-any-return]
        hits = hay.matches(probe(), test, found[0][0] + 1 if found else 0)
        while len(found) < limit:
            try:
                hit = next(hits, None)
            except tolerated:
                if not found:
                    raise
                break
            if hit is None:
                break
            found.append(hit)
            if enough(*hit):
                break
        result = hay.results[key] = tuple(found)
    return result  # type: ignore[no-any-return]
