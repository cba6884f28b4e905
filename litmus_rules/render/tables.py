"""Tables and colour for people, drawn by rich (`text.py`, the commands' summaries and reports).

Without colour a table is plain ASCII: a header, a rule of dashes under it, columns two spaces
apart, no frame and no wrapping, so that a pipe, a log file or `grep` reads whole cells. With
colour the header is bold and chosen cells (a verdict, a FAIL) are coloured. rich is imported
inside the functions: a run that draws nothing never pays for it.

A table without colour whose cells are all printable ASCII (one character, one column) is drawn
here, in the same bytes rich writes (`_plain_lines`; tests/test_tables_cold14.py compares them):
importing rich and laying the table out with it cost about a tenth of a cold `check` of one file
written to a pipe or a file. Anything else (colour, a wide, combining or control character, a
table wider than the console) is rich's to draw.
"""

from __future__ import annotations

import re
from typing import IO, Any, Iterable, Sequence

# The colours of the three verdicts (and of test/lint outcomes), as rich styles.
STYLES = {"SCORED": "green", "REJECTED": "red", "ERROR": "bold magenta", "FAIL": "red", "ok": "green",
          "error": "bold red", "warning": "yellow"}

# Trailing padding, also when colour codes close the line after it (compiled on first use, by re).
_TRAILING = r"\s+((?:\x1b\[[0-9;]*m)*)$"

_PLAIN_BOX = "    \n    \n -  \n    \n    \n    \n    \n    \n"
_WIDTH = 10_000  # the console's width when none is given: wide enough that nothing wraps


def _console(color: bool, width: int | None, file: IO[str] | None = None) -> Any:
    import io

    from rich.console import Console

    return Console(
        file=file if file is not None else io.StringIO(), force_terminal=color, no_color=not color,
        color_system="standard" if color else None, width=width or _WIDTH, highlight=False, markup=False,
        emoji=False, soft_wrap=False, legacy_windows=False, force_jupyter=False, force_interactive=False,
    )


def table(rows: Sequence[Sequence[str]], header: Sequence[str], *, color: bool = False,
          styles: dict[int, dict[str, str]] | None = None, right: Iterable[int] = (), indent: int = 0,
          width: int | None = None) -> list[str]:
    """The lines of a table drawn by rich: plain ASCII (a header and a rule of dashes) without
    colour, the header in bold and the cells of `styles` (column -> cell text -> style) coloured
    with it. No wrapping: a pipe gets whole cells whatever their width."""
    right = set(right)
    lines = _plain_lines(rows, header, width or _WIDTH) if not color else None
    if lines is None:
        lines = _rich_lines(rows, header, color, styles, right, width)
    pad = " " * indent
    return [pad + line for line in lines]


def _rich_lines(rows: Sequence[Sequence[str]], header: Sequence[str], color: bool,
                styles: dict[int, dict[str, str]] | None, right: set[int], width: int | None) -> list[str]:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    grid = Table(box=box.Box(_PLAIN_BOX, ascii=True), show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                 header_style="bold" if color else "", show_header=True)
    for i, name in enumerate(header):
        grid.add_column(name, justify="right" if i in right else "left", no_wrap=True, overflow="ignore")
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            style = (styles or {}).get(i, {}).get(str(cell), "") if color else ""
            cells.append(Text(str(cell), style=style))
        grid.add_row(*cells)
    console = _console(color, width)
    console.print(grid)
    return [re.sub(_TRAILING, r"\1", line) for line in console.file.getvalue().splitlines()]


def _plain_lines(rows: Sequence[Sequence[str]], header: Sequence[str], width: int) -> list[str] | None:
    """The lines rich draws for this table without colour (`_PLAIN_BOX`: no frame, a space between
    columns, one space of right padding in every column but the last, a rule of dashes under the
    header, trailing spaces dropped), or None when rich must draw it: a cell that is not printable
    ASCII (its width in columns is not its length, or rich would expand or strip it), a row whose
    length is not the header's, a column with no text, or a table that does not fit in `width` (rich
    would shrink it)."""
    texts = [[str(cell) for cell in header]]
    texts.extend([str(cell) for cell in row] for row in rows)
    columns = len(texts[0])
    if columns == 0 or any(len(cells) != columns for cells in texts):
        return None
    if not all(cell.isascii() and cell.isprintable() for cells in texts for cell in cells):
        return None
    widths = [max(len(cells[i]) for cells in texts) for i in range(columns)]
    if sum(widths) + 2 * columns > width or 0 in widths:  # rich draws an empty column one space wide
        return None

    # Every cell left-aligned, also in the `right` columns: that is what rich draws for them here
    # (no wrapping, overflow "ignore"), and these lines must be its bytes.
    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip()

    rule = " ".join(["-" * (w + 1) for w in widths[:-1]] + ["-" * widths[-1]]).rstrip()
    return [line(texts[0]), rule, *map(line, texts[1:])]


def paint(text: str, style: str, color: bool) -> str:
    """`text` in a rich style, as ANSI; unchanged without colour."""
    if not color or not style:
        return text
    console = _console(True, None)
    from rich.text import Text

    console.print(Text(text, style=style), end="")
    return str(console.file.getvalue())


def paint_verdict_lines(text: str, color: bool) -> str:
    """Colour the verdict word that starts a rendered verdict (`REJECTED id (file:line)`) and the
    `x rule:` reason marks; the rest of the trace stays plain."""
    if not color:
        return text
    out = []
    for line in text.split("\n"):
        word, sep, rest = line.partition(" ")
        if word in ("SCORED", "REJECTED", "ERROR"):
            line = paint(word, STYLES[word], True) + sep + rest
        elif line.startswith("  x "):
            line = "  " + paint("x", "red", True) + line[3:]
        out.append(line)
    return "\n".join(out)


