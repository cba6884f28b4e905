"""Source text and spans: the one place that turns offsets into line, column and caret excerpts."""

from __future__ import annotations

import bisect

import attrs


@attrs.frozen
class Source:
    """A named piece of text (a rule file, usually) with its line starts precomputed."""

    name: str
    text: str
    _line_starts: tuple[int, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        starts = [0]
        starts.extend(i + 1 for i, ch in enumerate(self.text) if ch == "\n")
        object.__setattr__(self, "_line_starts", tuple(starts))

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a 0-based character offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]


@attrs.frozen
class Span:
    """Half-open character range [start, end) inside a Source."""

    source: Source = attrs.field(repr=False)
    start: int
    end: int

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
