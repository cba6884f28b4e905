"""Texts joined by NUL, as joined.py searches them: each form of the join UTF-8 encoded with where
each text's segment starts (`_Form`, `_encoded_join`), and a transform applied to many small texts
in one call on their join (`_each`). A large text (textmemo.MEMO_MIN characters or more) stands
alone: its UTF-8 and its transforms are the ones its own forms use, kept with it."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterator, Sequence

from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.textmemo import MEMO_MIN, utf8

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
            continue
        try:
            parts = transform(SEP.join(pieces[start:end])).split(SEP)
        except LimitUnknown:  # a limit of one text (transforms.NFKC_MAX_ADDED): each may be within it
            parts = []
        if len(parts) != end - start:
            parts = [_transformed(transform, pieces, i, unknown) for i in range(start, end)]
        out += parts
    return out


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
