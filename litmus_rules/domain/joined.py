"""Search many texts at once: the first text on which an exact test succeeds (and, for a reject's
witnesses, the ones after it: `first_matches`).

The rules ask "does this signal collide with any surface of the episode?" of ~600 surfaces per
episode (10,000+ for large manifests). Testing them one by one derives every new text's forms
(`normalize.forms`), which dominates. Instead, every form of every text is found in a few joins:

- the forms a text's characters make: each is one of the transforms of the text, by view key

    raw T, format strip_format_chars(T), tags decode_tag_chars(T), nfkc nfkc(T),
    casefold casefold(T), normalised full_normalise(T), skeleton skeleton_key(T),
    skeleton-casefold skeleton_casefold(T), path canonical_path(clean(T)),
    path-casefold canonical_path(full_normalise(T))

  (`probes.KEY_FORM`). Each Unicode transform works character by character, or between two
  "starter" characters, so applied to texts joined by NUL it gives the join of its results: NUL
  is kept, produced by nothing, and composes with nothing. Path canonicalisation is applied to
  the join of the texts without a URL (no other path token holds a NUL), and to each text with
  one on its own (a URL token may run on past a NUL): joins._canonical_paths;
- the forms the decoders make (JSON and other escapes, HTML, percent, base64 and hex runs,
  grouped encodings, markup inside words), read from the raw text and from its cleaned form
  (format characters removed > tags > NFKC), as `forms` reads them. Most texts are *plain*: no
  decoder changes them, which a few linear scans of the join tell (`Haystack.changed`). The
  decoder outputs of the others (`normalize.decoder_outputs`, kept by decoded_pieces.py) are
  joined in a second set of joins, each output a segment owned by its text, in the forms `forms`
  gives a decoded text (raw, normalised, skeleton, skeleton-casefold and the two path forms:
  `_DECODED_FORM`).

So:

1. the texts are joined with NUL separators, and the changed ones' decoder outputs likewise
   (`Haystack`);
2. each transform is applied once, to the whole join (joins.py: UTF-8, with the byte offset of
   every segment; on ASCII texts the nine forms are four; a large text's transforms and their
   UTF-8 are the ones its own forms use, kept by textmemo.py);
3. a `Probe` (probes.py: literals and RE2 patterns, per form) finds in one pass per form the
   *candidates*: the texts owning a segment on which the exact test may succeed (a regex's
   probe, in a join of non-ASCII texts, the one exact on the 256-character pages the join holds:
   `PagedPattern`);
4. the exact test decides, in text order, on each candidate and each text tested on its own.

A text is tested on its own, where it stands in the order, when it cannot be joined (a NUL, a
lone surrogate), when a decoder changes it and it is large (its forms are kept with it) or one of
its decoder outputs cannot be joined or meets a limit, and when one of its transforms meets a
limit (transforms.NFKC_MAX_ADDED: it is left out of that form). So a hit in an earlier text
stands and a limit is met (and raised, naming the text) only where a search of one text at a
time would meet it. The forms derived once the haystack is built leave out the texts tested on
their own (`Joins.left_out`): their segments would only name texts that are tested anyway.

The answer is therefore the same as testing every text in order, provided that each probe is a
superset: whenever the exact test succeeds on a joined text, the probe matches at a position of
the segment (its start to its end, inclusive) of that text or of one of its decoder outputs in
one of the joined forms. False candidates cost one exact test each. `matching.py` builds the
probes and says why each is a superset; a raw literal only a changed text can hold (a backslash
or percent escape: `Probe.escaped`) is searched for when there are changed texts.
"""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.decoded_pieces import decoder_pieces, skipped
from litmus_rules.domain.decoding import LimitUnknown, encoded_run_hint
from litmus_rules.domain.grouped import SHORT_MAX as GROUPED_SHORT
from litmus_rules.domain.grouped import grouped_hint, grouped_many
from litmus_rules.domain.joins import _PLUS_ONE, SEP, Joins, _encoded_join, _Form
from litmus_rules.domain.markup import markup_hint
from litmus_rules.domain.probes import KEY_FORM, PROBE_MAX_MEM, PagedPattern, Probe, _has_surrogate
from litmus_rules.domain.re2calls import search_span
from litmus_rules.domain.textchecks import checked_many
from litmus_rules.domain.textmemo import MEMO_MIN, re2_module, re2_options
from litmus_rules.domain.transforms import clean

# The view keys of a decoder's output (normalize._decoded_chain) -> the form of the decoded join
# that holds them, by the probe form that holds each key's literals
_DECODED_FORM = {KEY_FORM[key]: key
                 for key in ("raw", "normalised", "skeleton", "skeleton-casefold", "path", "path-casefold")}

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
    """Texts joined by NUL, in every form, with the decoded texts of those a decoder changes, and
    the indices of the texts tested on their own."""

    __slots__ = ("_alone", "_decoded", "_exact", "_exact_key", "_hints", "_joins", "_owner", "ascii",
                 "changed", "results", "size", "texts")

    def __init__(self, texts: tuple[str, ...]) -> None:
        self.texts = texts
        self.results: dict[Any, Any] = {}
        # texts tested on their own: a NUL or lone surrogate, a large text a decoder changes, a
        # decoder's limit met; and (`exact`) those a transform could not derive a form of
        alone: set[int] = set()
        self._alone = alone
        pieces: list[str] = list(texts)
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
            for i, text in enumerate(texts):
                if SEP in text or (not text.isascii() and _has_surrogate(text)):
                    alone.add(i)
                    pieces[i] = ""
            form = _encoded_join(pieces)
            assert form is not None  # no piece holds a NUL or a lone surrogate now
        self._joins = Joins(pieces, form, self.ascii)
        self.size = len(form.data)
        self._exact_key: tuple[int, int] | None = None
        self._exact: list[int] = []
        self._hints: dict[int, tuple[set[int], set[int], set[int]]] = {}
        self.changed = self._changed_by_decoders(alone)
        self._decoded: Joins | None = None
        self._owner: list[int] = []
        if self.changed:
            self._join_decoded()
        self._joins.left_out(alone)

    def _changed_by_decoders(self, skip: set[int]) -> list[int]:
        """The texts (but those in `skip`) that a decoder changes, read from the raw text or
        (non-ASCII joins) the cleaned one, as `normalize.derivations` decodes both."""
        texts = self.texts
        changed: set[int] = set()
        # (None: every text with the character; "escapes": IIS's %u006c, quoted-printable =6C=63,
        # decoding.other_escapes)
        checks: list[tuple[str, bytes, str | None]] = [
            ("raw", b"\\", None),  # JSON escapes, Windows paths
            ("raw", b"&", "html"),
            ("raw", b"%", "percent"),
            ("raw", b"%", "escapes"),
            ("raw", b"=", "escapes"),
        ]
        if not self.ascii:
            # NFKC can make a backslash, "&", "%", "=" (fullwidth ones, ...) that the decoders of
            # the cleaned text read
            checks += [("cleaned", b"\\", None), ("cleaned", b"&", "html"), ("cleaned", b"%", "percent"),
                       ("cleaned", b"%", "escapes"), ("cleaned", b"=", "escapes")]
        for name, char, check in checks:
            candidates = [i for i in self._segments_with(name, char) if i not in changed and i not in skip]
            if check is None:
                changed.update(candidates)
            else:
                answers = checked_many(check, [texts[i] for i in candidates])
                changed.update(i for i, differs in zip(candidates, answers) if differs)
        # base64 / hex runs, grouped encodings ("bGMt NWYw", "6c:63:2d"), markup and line wraps
        # inside words ("lc-5f<b>0e9a</b>3b", "lc-\n5f0e"): in the raw text and (non-ASCII) in the
        # cleaned text, where a hint finds something (`_hinted`; None: every text)
        for source, derive in self._run_sources():
            for check, hinted in zip(("runs", "groups", "markup"), self._hinted(source)):
                candidates = [i for i in (range(len(texts)) if hinted is None else sorted(hinted))
                              if i not in changed and i not in skip]
                answers = checked_many(check, [derive(texts[i]) for i in candidates])
                changed.update(i for i, differs in zip(candidates, answers) if differs)
        return sorted(changed)

    def _run_sources(self) -> list[tuple[_Form | None, Callable[[str], str]]]:
        """The joins the decoders read, with how each text's source is derived: the raw one, and
        (non-ASCII) the cleaned one."""
        sources: list[tuple[_Form | None, Callable[[str], str]]] = [(self._joins.raw, _same)]
        if not self.ascii:
            sources.append((self._joins.form("cleaned"), clean))
        return sources

    def _hinted(self, source: _Form | None) -> tuple[set[int] | None, set[int] | None, set[int] | None]:
        """The segments of `source` where the base64/hex, grouped and markup decoders may find
        something (None: every segment): where their hints match, one scan of the join each (the
        grouped decoder's, among short texts: those it makes something of). Elsewhere they make
        nothing of the text (textchecks' checks are false there, and the decoders' outputs empty
        or the text itself: tests/_helpers.assert_hint_finds_changes)."""
        if source is None:
            return None, None, None
        hinted = self._hints.get(id(source))
        if hinted is None:
            runs = set()
            for i in self._hinted_runs(source):
                if search_span(_run8(), source.data, source.starts[i], source.end(i)) is not None:
                    runs.add(i)
            # (the hint's superset, narrowed to the short texts the decoder makes something of:
            # one decoding of all of them, kept for their decoded forms; a large text's own
            # forms decode it, once)
            groups = set(self._segments_matching(source, grouped_hint()))
            short = sorted(i for i in groups if source.end(i) - source.starts[i] < GROUPED_SHORT)
            made = grouped_many([source.segment(i) for i in short])
            groups.difference_update(i for i, out in zip(short, made) if not out)
            hinted = self._hints[id(source)] = (runs, groups, set(self._segments_matching(source, markup_hint())))
        return hinted

    def _join_decoded(self) -> None:
        """Join what the decoders make of each changed text (`decoded_pieces`), every output a
        piece, in text order; `_owner[p]` is the text of piece p. A text is tested on its own
        instead when it is large (its forms are kept with it), when `decoder_pieces` says so,
        or when its outputs would take the decoded join past its budget (as many characters as
        the join of the texts, and DECODED_EXTRA more: the forms of both are held together)."""
        texts, alone = self.texts, self._alone
        cleaned = None if self.ascii else self._joins.text("cleaned")
        pieces: list[str] = []
        owner: list[int] = []
        budget = len(self._joins.raw.data) + DECODED_EXTRA
        hints = [self._hinted(source) for source, _ in self._run_sources()]
        for i in self.changed:
            text = texts[i]
            if len(text) >= MEMO_MIN or i in self._joins.unknown:
                alone.add(i)
                continue
            skips = [skipped(tuple(hinted is None or i in hinted for hinted in hinted_by)) for hinted_by in hints]
            outputs = decoder_pieces(text, None if cleaned is None else cleaned[i], skips)
            if outputs is None or (outputs and (budget := budget - sum(map(len, outputs))) < 0):
                alone.add(i)
            else:
                pieces += outputs
                owner += [i] * len(outputs)
        if not pieces:
            return
        raw = _encoded_join(pieces)
        assert raw is not None  # no piece holds a NUL or a lone surrogate
        self._decoded = Joins(pieces, raw, raw.data.isascii())
        self._owner = owner
        self.size += len(raw.data)

    @property
    def exact(self) -> list[int]:
        """The texts tested on their own, in order: those left out of the join, and those one of
        whose forms (or of their decoded texts' forms) a transform could not derive."""
        decoded = self._decoded
        key = (len(self._joins.unknown), 0 if decoded is None else len(decoded.unknown))
        if key != self._exact_key:
            owners = set() if decoded is None else {self._owner[p] for p in decoded.unknown}
            self._exact = sorted(self._alone | self._joins.unknown | owners)
            self._exact_key = key
        return self._exact

    @property
    def decoded(self) -> list[int]:
        """The texts a decoder changes that are searched in the join: their decoded texts' forms
        are joined too."""
        exact = set(self.exact)
        return [i for i in self.changed if i not in exact]

    def _segments_with(self, name: str, char: bytes) -> list[int]:
        form = self._joins.form(name)
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
            span = search_span(hint, raw.data, pos)
            if span is None:
                break
            # a hint may start at the NUL before a segment, but always ends inside one
            i = raw.segment_at(span[1] - 1)
            out.append(i)
            if i + 1 >= len(raw.starts):
                break
            pos = raw.starts[i + 1] - 1  # the NUL: it may start the next segment's hint
        return out

    def form(self, name: str) -> _Form | None:
        """One of FORMS of the join (None: not derived as a join, every text a candidate)."""
        return self._joins.form(name)

    def _searched(self, name: str) -> list[tuple[Joins, _Form | None, list[int] | None]]:
        """Where a probe's entry for form `name` looks: (joins, their form, the text of each
        segment: None where segment i is text i); the decoded join too where it holds a form of
        that name's view keys."""
        out: list[tuple[Joins, _Form | None, list[int] | None]] = [(self._joins, self._joins.form(name), None)]
        decoded = self._decoded
        if decoded is not None and name in _DECODED_FORM:
            out.append((decoded, decoded.form(_DECODED_FORM[name]), self._owner))
        return out

    @staticmethod
    def _paged(joins: Joins, name: str, paged: PagedPattern) -> Any:
        """The pattern to search form `name` with: exact on the pages it holds (non-ASCII joins)."""
        if joins.ascii:
            return paged.pattern
        exact = paged.on_pages(joins.pages(name))
        return paged.pattern if exact is None else exact

    def first(self, probe: Probe, test: Callable[[str], W | None]) -> tuple[int, W] | None:
        """The first text (index, test result) on which `test` succeeds; only candidates and
        texts that are not plain are tested."""
        return next(self.matches(probe, test), None)

    def matches(self, probe: Probe, test: Callable[[str], W | None], start: int = 0) -> Iterator[tuple[int, W]]:
        """Every text from `start` on (index, test result) on which `test` succeeds, in order,
        found lazily: only candidates and texts tested on their own are tested."""
        texts, n = self.texts, len(self.texts)
        if probe.every_text:
            yield from _one_by_one(texts, range(start, n), test)
            return
        # (form, literals) for bytes.find and (form, pattern) for RE2, each with the text of each
        # segment (None: segment i is text i); a form that several names share (on ASCII text,
        # raw is also format, tags, nfkc, cleaned) once
        # (the literals no plain text holds, `Probe.escaped`, apart: a few long encoded forms of a
        # token would make the other literals' alternation costly to compile)
        lits_in: dict[tuple[int, bool], tuple[_Form, list[int] | None, set[bytes]]] = {}
        searches: list[tuple[_Form, list[int] | None, Any]] = []
        for name, lits in probe.literals:
            for joins, form, owner in self._searched(name):
                if form is None:
                    yield from _one_by_one(texts, range(start, n), test)
                    return
                wanted = lits_in.setdefault((id(form), False), (form, owner, set()))[2]
                wanted.update(filter(bytes.isascii, lits) if joins.ascii else lits)  # ASCII texts: ASCII forms
                if name == "raw" and self.changed and probe.escaped:
                    wanted = lits_in.setdefault((id(form), True), (form, owner, set()))[2]
                    wanted.update(filter(bytes.isascii, probe.escaped) if joins.ascii else probe.escaped)
        for name, pattern in probe.patterns:
            for joins, form, owner in self._searched(name):
                if form is None:
                    yield from _one_by_one(texts, range(start, n), test)
                    return
                searched = self._paged(joins, name, pattern) if isinstance(pattern, PagedPattern) else pattern
                if not any(f is form and p is searched for f, _, p in searches):
                    searches.append((form, owner, searched))
        finds: list[tuple[_Form, list[int] | None, bytes]] = []
        for form, owner, found_lits in lits_in.values():
            lits = tuple(sorted(found_lits))
            pattern = _alternation(lits) if len(lits) > 1 and len(lits) * len(form.data) > FIND_BYTES else None
            if pattern is not None:
                searches.append((form, owner, pattern))
            else:
                finds += [(form, owner, lit) for lit in lits]
        exact = self.exact  # (after the forms: a limit met deriving one adds its text)
        # the text holding each literal's and pattern's first hit at or after the start of
        # text k in its form (n: no hit); a hit in text k or later stays the first one
        found_in = [-1] * len(finds)
        hit_in = [-1] * len(searches)
        e = 0
        k = start
        while k < n:
            candidate = n
            for j, (form, owner, lit) in enumerate(finds):
                if found_in[j] < k:
                    if owner is None:
                        at = form.data.find(lit, form.starts[k])
                        found_in[j] = form.segment_at(at) if at >= 0 else n
                    else:
                        p = bisect.bisect_left(owner, k)
                        at = form.data.find(lit, form.starts[p]) if p < len(owner) else -1
                        found_in[j] = owner[form.segment_at(at)] if at >= 0 else n
                candidate = min(candidate, found_in[j])
            for j, (form, owner, pattern) in enumerate(searches):
                if hit_in[j] < k:
                    if owner is None:
                        span = search_span(pattern, form.data, form.starts[k])
                        hit_in[j] = form.segment_at(span[0]) if span is not None else n
                    else:
                        p = bisect.bisect_left(owner, k)
                        span = search_span(pattern, form.data, form.starts[p]) if p < len(owner) else None
                        hit_in[j] = owner[form.segment_at(span[0])] if span is not None else n
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


def _same(text: str) -> str:
    return text


# Characters of decoder outputs a haystack joins past those of its texts (`Haystack._join_decoded`):
# 1,000 texts of random printable ASCII have nine outputs each, and their joined forms took 180 MiB.
DECODED_EXTRA = 1 << 18

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
