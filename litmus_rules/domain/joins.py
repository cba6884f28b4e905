"""Texts joined by NUL, as joined.py searches them: each form of the join UTF-8 encoded with where
each text's segment starts (`_Form`, `_encoded_join`), a transform applied to many small texts in
one call on their join (`_each`), and every form of a join derived on demand (`Joins`). A large
text (textmemo.MEMO_MIN characters or more) stands alone: its UTF-8 and its transforms are the
ones its own forms use, kept with it."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.paths import canonical_path
from litmus_rules.domain.nfkc_growth import joined_texts
from litmus_rules.domain.regexes import _pages as text_pages
from litmus_rules.domain.textmemo import MEMO_MIN, transient, utf8
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

SEP = "\x00"
_PLUS_ONE = (1).__add__


class _Form:
    """A form of the join: UTF-8 bytes, and where each text's segment starts in them."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes, starts: list[int]) -> None:
        self.data = data
        self.starts = starts

    def segment_at(self, pos: int) -> int:
        """The segment whose span (its start to its end, inclusive) holds byte `pos`."""
        return max(bisect.bisect_right(self.starts, pos) - 1, 0)

    def end(self, i: int) -> int:
        """Where segment i ends in the bytes (the NUL after it, or their end)."""
        return self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.data)

    def segment(self, i: int) -> str:
        """The text of segment i."""
        return self.data[self.starts[i] : self.end(i)].decode("utf-8")


def _encoded_join(pieces: Sequence[str]) -> _Form | None:
    """The pieces joined, each after a NUL, in UTF-8, with where each one starts; None if a piece
    holds a NUL. A large piece's UTF-8 is textmemo.utf8's, kept with it (the haystacks a text is
    in and the RE2 scans of the text share it); each run of small ones is encoded in one call.
    Raises UnicodeEncodeError for a lone surrogate."""
    chunks: list[bytes] = [b""]  # b"\0".join: a NUL before each chunk
    sizes: list[int] = []
    for start, end, large in _segments(pieces):
        if large:
            data = utf8(pieces[start])
            if b"\0" in data:
                return None
            chunks.append(data)
            sizes.append(len(data))
        else:
            run = SEP.join(pieces[start:end]).encode("utf-8")
            run_sizes = list(map(len, run.split(b"\0")))
            if len(run_sizes) != end - start:
                return None
            chunks.append(run)
            sizes += run_sizes
    # each segment starts one byte (the NUL) past the end of the one before
    starts = list(itertools.accumulate(map(_PLUS_ONE, sizes[:-1]), initial=1)) if sizes else []
    return _Form(b"\0".join(chunks), starts)


def _each(transform: Callable[[str], str], pieces: Sequence[str], unknown: set[int] | None = None) -> list[str]:
    """`transform` of each piece: a large one on its own (its result is the one its own forms
    use, textmemo.memo_large), each run of small ones in one call on them joined by NUL (the
    transforms keep NUL, module doc; a run whose NULs do not come back, or that passes a limit
    set for one text, is done piece by piece). A piece whose transform meets a limit is "" and
    its index goes into `unknown`; without `unknown`, its LimitUnknown is raised, naming it
    (`index`)."""
    out: list[str] = []
    for start, end, large in _segments(pieces):
        if large:
            out.append(_transformed(transform, pieces, start, unknown))
        else:
            out += _joined_run(transform, pieces, list(range(start, end)), unknown)
    return out


def _joined_run(transform: Callable[[str], str], pieces: Sequence[str], run: list[int],
                unknown: set[int] | None) -> list[str]:
    """`transform` of the small pieces `run`, in one call on their join; those past a limit of
    their own (nfkc_growth.joined_texts names them) on their own, and the others joined again; every
    piece on its own when the join meets a limit of its own, or its NULs do not come back."""
    alone: list[int] = []
    for attempt in range(2):
        apart = set(alone)
        together = [i for i in run if i not in apart] if apart else run
        try:
            # (the join is made for this call; the NFKC limit is each text's, not the join's)
            with transient(), joined_texts():
                parts = transform(SEP.join(map(pieces.__getitem__, together))).split(SEP)
        except LimitUnknown as exc:
            over = getattr(exc, "pieces", None)
            if attempt or not over:
                break
            alone = [together[k] for k in over]
            continue
        if len(parts) != len(together):
            break
        if not alone:  # (`together` is `run`: its parts in order)
            return parts
        done = dict(zip(together, parts))
        done.update((i, _transformed(transform, pieces, i, unknown)) for i in alone)
        return [done[i] for i in run]
    return [_transformed(transform, pieces, i, unknown) for i in run]


def _transformed(transform: Callable[[str], str], pieces: Sequence[str], i: int, unknown: set[int] | None) -> str:
    try:
        return transform(pieces[i])
    except LimitUnknown as exc:
        if unknown is not None:
            unknown.add(i)
            return ""
        exc.index = i  # type: ignore[attr-defined]  # which text: the built-ins name its origin
        raise


def _segments(pieces: Sequence[str]) -> Iterator[tuple[int, int, bool]]:
    """The pieces in order as (start, end, large): each large piece (MEMO_MIN characters or more,
    whose results textmemo keeps with it) alone, each run of small ones between them together."""
    start = 0
    for i, piece in enumerate(pieces):
        if len(piece) >= MEMO_MIN:
            if start < i:
                yield start, i, False
            yield i, i + 1, True
            start = i + 1
    if start < len(pieces):
        yield start, len(pieces), False


# canonical_path of short pieces, kept by piece: an episode's haystacks share texts (its injected
# surfaces are some of its surfaces), and a large manifest's texts are asked for in turn, once per
# haystack (a large piece's is textmemo's). A memo of a pure function, bounded by entries and
# characters, as textchecks' is.
PATH_MEMO_ENTRIES = 32768
PATH_MEMO_CHARS = 4 << 20
_path_memo: BoundedCache[str] = BoundedCache(PATH_MEMO_ENTRIES, PATH_MEMO_CHARS, scan_resistant=True)


def _canonical_path_kept(piece: str) -> str:
    if len(piece) >= MEMO_MIN:
        return canonical_path(piece)
    return _path_memo.get_or_make(piece, lambda: canonical_path(piece), lambda _: 64 + 2 * len(piece))


def _canonical_paths(pieces: Sequence[str]) -> list[str]:
    """`canonical_path` of each piece. No path token but a URL holds a NUL (a segment is letters,
    digits and `_.~%$@+=-`, and \\b sees a NUL as it sees a text's edge), so the canonical path of
    short pieces joined by NUL is the join of theirs: those with a separator and no "://" are
    done in one call on their join (20,000 short Windows paths: 10 ms, against 110 ms piece by
    piece). A URL token runs on past a NUL: a piece with "://" is done on its own, from the memo,
    as is a large one (its result is the one its own forms use, textmemo)."""
    out = list(pieces)
    together: list[int] = []
    for i, piece in enumerate(pieces):
        if "/" in piece or "\\" in piece:
            if len(piece) >= MEMO_MIN or "://" in piece:
                out[i] = _canonical_path_kept(piece)
            else:
                together.append(i)
    if len(together) == 1:
        out[together[0]] = _canonical_path_kept(pieces[together[0]])
    elif together:
        with transient():  # (the join is made for this call)
            parts = canonical_path(SEP.join(map(pieces.__getitem__, together))).split(SEP)
        if len(parts) != len(together):  # pragma: no cover - no piece of a join holds a NUL
            parts = [_canonical_path_kept(pieces[i]) for i in together]
        for i, part in zip(together, parts):
            out[i] = part
    return out


# How each form is derived: from the raw join, or from another form (as normalize.py derives it:
# full_normalise(t) = _full_from_clean(clean(t)), skeleton_casefold(t) = skeleton_key(t).casefold()).
_TRANSFORMS: dict[str, tuple[str, Callable[[str], str]]] = {
    "format": ("raw", strip_format_chars), "tags": ("raw", decode_tag_chars), "nfkc": ("raw", nfkc),
    "casefold": ("raw", casefold), "cleaned": ("raw", clean), "normalised": ("cleaned", _full_from_clean),
    "skeleton": ("raw", skeleton_key), "skeleton-casefold": ("skeleton", casefold),
}
# The path forms, by the form each is derived from: by `_canonical_paths` (a URL token runs on past
# a NUL), and most texts leave them as their source is, whose join then serves them too.
_PATH_SOURCES = {"path": "cleaned", "path-casefold": "normalised"}
# On ASCII text: the transforms that leave it as it is, and those that lower-case it.
_ASCII_SAME = frozenset({"format", "tags", "nfkc", "cleaned"})
_ASCII_LOWER = frozenset({"casefold", "normalised"})


class Joins:
    """Pieces joined by NUL, and each form of the join (a name of _TRANSFORMS or _PATH_SOURCES),
    derived when first asked: each transform once over the join (`_each`), the path forms by
    `_canonical_paths`.

    A piece one of whose transforms meets a limit (LimitUnknown) is "" in that form and its index
    goes into `unknown`: the caller tests its text on its own. So is a piece `left_out`, in the
    forms derived after."""

    __slots__ = ("_blanked", "_forms", "_left_out", "_page_sets", "_texts", "ascii", "pieces", "unknown")

    def __init__(self, pieces: list[str], raw: _Form, ascii: bool) -> None:
        self.pieces = pieces
        self.ascii = ascii
        self.unknown: set[int] = set()
        self._forms: dict[str, _Form | None] = {"raw": raw}
        self._texts: dict[str, list[str]] = {}
        self._page_sets: dict[str, tuple[int, ...]] = {}
        self._left_out: list[int] = []
        self._blanked: dict[str, list[str]] = {}

    def left_out(self, indices: Iterable[int]) -> None:
        """The texts of these pieces are tested on their own (joined.Haystack): the forms derived
        from now on hold "" for them, as for a NUL. A large text's transforms are its own forms'
        (kept by textmemo while it holds them, made again once it has let them go: a 1 MB mixture's
        path forms, 0.3 s each), and their UTF-8, pages and searches would be spent on a segment
        whose text is tested anyway."""
        self._left_out = sorted(i for i in indices if self.pieces[i])
        self._blanked.clear()

    def _source(self, name: str) -> list[str]:
        """`text(name)` as a form derived from it reads it: "" for the pieces left out."""
        pieces = self.text(name)
        if not self._left_out or not any(pieces[i] for i in self._left_out):
            return pieces
        blanked = self._blanked.get(name)
        if blanked is None:
            blanked = self._blanked[name] = list(pieces)
            for i in self._left_out:
                blanked[i] = ""
        return blanked

    @property
    def raw(self) -> _Form:
        raw = self._forms["raw"]
        assert raw is not None
        return raw

    def form(self, name: str) -> _Form | None:
        """A form of the join; None if it could not be derived as a join (then every text is a
        candidate for a probe looking in it)."""
        if name in self._forms:
            return self._forms[name]
        raw = self.raw
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
            pieces = self.text(name)
            source = _PATH_SOURCES.get(name)
            if pieces == self.pieces:  # (the transforms give back an unchanged text itself: cheap)
                got = raw
            elif source is not None and pieces == self.text(source):
                got = self.form(source)
            else:
                # None: a NUL made or lost, never seen (every transform keeps each NUL, module doc)
                got = _encoded_join(pieces)
        self._forms[name] = got
        return got

    def text(self, name: str) -> list[str]:
        """A form of each piece (non-ASCII joins)."""
        if name == "raw":
            return self.pieces
        got = self._texts.get(name)
        if got is None:
            if name in _PATH_SOURCES:
                got = _canonical_paths(self._source(_PATH_SOURCES[name]))
            else:
                source, transform = _TRANSFORMS[name]
                got = _each(transform, self._source(source), self.unknown)
            self._texts[name] = got
        return got

    def pages(self, name: str) -> tuple[int, ...]:
        """The 256-character pages the characters of form `name` are in (a non-ASCII join's)."""
        pages = self._page_sets.get(name)
        if pages is None:
            pieces = self.text(name)
            # a large piece's pages are kept with it (its forms' searches ask them too)
            with transient():
                found = set(text_pages("".join(piece for piece in pieces if len(piece) < MEMO_MIN)))
            for piece in pieces:
                if len(piece) >= MEMO_MIN:
                    found.update(text_pages(piece))
            pages = self._page_sets[name] = tuple(sorted(found))
        return pages
