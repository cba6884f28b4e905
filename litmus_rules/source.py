"""Source text and spans: the one place that turns offsets into line, column and caret excerpts."""

from __future__ import annotations

import bisect
from typing import Any, NoReturn

# Source and Span are plain slotted classes rather than attrs ones (every start builds the classes it
# imports, and these two are imported by every command): values, compared and hashed by their fields
# as attrs' frozen classes are, and immutable.


def _frozen(self: object, *_: object) -> NoReturn:
    raise AttributeError(f"{type(self).__name__} is immutable")


class Source:
    """A named piece of text (a rule file, usually) with its line starts precomputed."""

    __slots__ = ("name", "text", "_line_starts")
    __setattr__ = __delattr__ = _frozen

    def __init__(self, name: str, text: str) -> None:
        starts = [0]
        find = text.find
        at = find("\n")
        while at >= 0:  # str.find, not a Python step per character: rule files are read on every start
            starts.append(at + 1)
            at = find("\n", at + 1)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "_line_starts", tuple(starts))

    def __repr__(self) -> str:
        return f"Source(name={self.name!r}, text={self.text!r})"

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not Source:
            return NotImplemented
        return self.name == other.name and self.text == other.text

    def __hash__(self) -> int:
        return hash((Source, self.name, self.text))

    def __reduce__(self) -> tuple[Any, ...]:
        return Source, (self.name, self.text)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a 0-based character offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]


class Span:
    """Half-open character range [start, end) inside a Source."""

    __slots__ = ("source", "start", "end")
    __setattr__ = __delattr__ = _frozen

    def __init__(self, source: Source, start: int, end: int) -> None:
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    def __repr__(self) -> str:
        return f"Span(start={self.start!r}, end={self.end!r})"  # the source is left out, as attrs' repr=False did

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return self.start == other.start and self.end == other.end and self.source == other.source

    def __hash__(self) -> int:
        return hash((Span, self.source, self.start, self.end))

    def __reduce__(self) -> tuple[Any, ...]:
        return Span, (self.source, self.start, self.end)

    @property
    def line(self) -> int:
        return self.source.line_col(self.start)[0]

    @property
    def column(self) -> int:
        return self.source.line_col(self.start)[1]

    @property
    def text(self) -> str:
        return self.source.text[self.start : self.end]

    def location(self) -> str:
        """`file:line:col`, the prefix of every diagnostic."""
        line, col = self.source.line_col(self.start)
        return f"{self.source.name}:{line}:{col}"

    def short_location(self) -> str:
        """`file:line`, the prefix of every trace line."""
        return f"{self.source.name}:{self.line}"

    def excerpt(self) -> str:
        """The source line and a caret under the span (or under its first line, if it spans several)."""
        line, col = self.source.line_col(self.start)
        text = self.source.line_text(line)
        end_line, end_col = self.source.line_col(max(self.start, self.end - 1))
        width = (end_col - col + 1) if end_line == line and self.end > self.start else 1
        gutter = f"{line:>4} | "
        return f"{gutter}{text}\n{' ' * (len(gutter) + col - 1)}{'^' * max(1, width)}"

    def merge(self, other: Span) -> Span:
        return Span(self.source, min(self.start, other.start), max(self.end, other.end))
