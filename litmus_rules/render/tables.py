"""Tables and colour for people, drawn by rich (`text.py`, the commands' summaries and reports).

Without colour a table is plain ASCII: a header, a rule of dashes under it, columns two spaces
apart, no frame and no wrapping, so that a pipe, a log file or `grep` reads whole cells. With
colour the header is bold and chosen cells (a verdict, a FAIL) are coloured. rich is imported
inside the functions: a run that draws nothing never pays for it.
"""

from __future__ import annotations

import re
from typing import IO, Any, Iterable, Sequence

# The colours of the three verdicts (and of test/lint outcomes), as rich styles.
STYLES = {"SCORED": "green", "REJECTED": "red", "ERROR": "bold magenta", "FAIL": "red", "ok": "green",
          "error": "bold red", "warning": "yellow"}

# Trailing padding, also when colour codes close the line after it.
_TRAILING = re.compile(r"\s+((?:\x1b\[[0-9;]*m)*)$")

_PLAIN_BOX = "    \n    \n -  \n    \n    \n    \n    \n    \n"


def _console(color: bool, width: int | None, file: IO[str] | None = None) -> Any:
    import io

    from rich.console import Console

    return Console(
        file=file if file is not None else io.StringIO(), force_terminal=color, no_color=not color,
        color_system="standard" if color else None, width=width or 10_000, highlight=False, markup=False,
        emoji=False, soft_wrap=False, legacy_windows=False, force_jupyter=False, force_interactive=False,
    )


def table(rows: Sequence[Sequence[str]], header: Sequence[str], *, color: bool = False,
          styles: dict[int, dict[str, str]] | None = None, right: Iterable[int] = (), indent: int = 0,
          width: int | None = None) -> list[str]:
    """The lines of a table drawn by rich: plain ASCII (a header and a rule of dashes) without
    colour, the header in bold and the cells of `styles` (column -> cell text -> style) coloured
    with it. No wrapping: a pipe gets whole cells whatever their width."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    grid = Table(box=box.Box(_PLAIN_BOX, ascii=True), show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                 header_style="bold" if color else "", show_header=True)
    right = set(right)
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
    pad = " " * indent
    return [pad + _TRAILING.sub(r"\1", line) for line in console.file.getvalue().splitlines()]


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


