"""Terminal conventions shared by the commands: `--color`, `-q/--quiet`, `-v`, tables and progress.

Colour: `--color always` and `never` decide; `auto` (the default) colours a terminal unless
`NO_COLOR` is set to a non-empty value (no-color.org), and colours a pipe when `FORCE_COLOR` is
(CI logs that render ANSI). Progress goes to stderr, only when stderr is a terminal and not `-q`.

rich is imported inside the functions that draw: a command that prints no table and no progress
(a machine format on a pipe) never pays for the import (the cold-start budget of `check`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from typing import IO, Any, Iterator

from litmus_rules.render.tables import STYLES, paint, paint_verdict_lines, table  # noqa: F401 - re-exported

COLOR_MODES = ("auto", "always", "never")


# ---- options -----------------------------------------------------------------------------------------


def add_terminal_options(p: argparse.ArgumentParser, *, top: bool) -> None:
    """`-q`, `-v` and `--color`, on the top-level parser (`top`: with their defaults) and again on
    every command (defaults suppressed, so `litmus-rules -v check` and `litmus-rules check -v`
    both work and the command's copy never resets the top-level one)."""
    quiet_default: Any = False if top else argparse.SUPPRESS
    verbose_default: Any = 0 if top else argparse.SUPPRESS
    color_default: Any = "auto" if top else argparse.SUPPRESS
    existing = {s for a in p._actions for s in a.option_strings}  # noqa: SLF001 - argparse has no public view
    group = p.add_argument_group("output") if not top else p
    if "-q" not in existing:
        group.add_argument("-q", "--quiet", action="store_true", default=quiet_default,
                           help="print only errors and the final outcome")
    if "-v" not in existing:
        group.add_argument("-v", "--verbose", action="count", default=verbose_default,
                           help="more detail (repeatable)")
    if "--color" not in existing:
        group.add_argument("--color", "--colour", dest="color", choices=COLOR_MODES, default=color_default,
                           help="colour the output: auto (a terminal, unless NO_COLOR is set), always, never")


def quiet(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "quiet", False))


def verbosity(args: argparse.Namespace) -> int:
    return -1 if quiet(args) else int(getattr(args, "verbose", 0) or 0)


# At most 2,048 characters (8 KiB of UTF-8, io.DEFAULT_BUFFER_SIZE) per write: a larger write goes
# past the buffer straight to the pipe, and when the reader has gone (`| head`) CPython's buffered
# writer returns a short count instead of raising, the text layer ignores it, and the rest of the
# output is lost in silence (a run that exits 0). Small writes are buffered, and the flush that
# meets the closed pipe raises BrokenPipeError as it should.
WRITE_CHUNK = 2048


def pieces(text: str, size: int = WRITE_CHUNK) -> Iterator[str]:
    """`text` in slices that a closed pipe cannot swallow (see WRITE_CHUNK)."""
    for start in range(0, len(text), size):
        yield text[start:start + size]


def emit(text: str, stream: IO[str] | None = None) -> None:
    """Write `text` to stdout (or `stream`) in pieces, then flush: a broken pipe raises."""
    out = sys.stdout if stream is None else stream
    for piece in pieces(text):
        out.write(piece)
    out.flush()


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (`--jobs 0` and `--jobs -3` are usage errors)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got `{text}`") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (ValueError, OSError, AttributeError):  # closed, or not a file at all
        return False


def use_color(args: argparse.Namespace | None, stream: IO[str] | None = None) -> bool:
    """Whether to write ANSI colours to `stream` (default stdout) under `args.color`."""
    mode = getattr(args, "color", "auto") if args is not None else "auto"
    if mode == "always":
        return True
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR", ""):
        return False
    if os.environ.get("FORCE_COLOR", ""):
        return True
    stream = sys.stdout if stream is None else stream
    return is_terminal(stream) and os.environ.get("TERM", "") != "dumb"


# ---- drawing: render/tables.py (tables and colour, drawn by rich) -------------------------------------

def terminal_width() -> int:
    return shutil.get_terminal_size((100, 24)).columns


# ---- progress -------------------------------------------------------------------------------------------


class Progress:
    """A rich progress bar on stderr (a description, a bar, done/total, a rate and an ETA), shown
    from the start when stderr is a terminal and the run is not `-q`; does nothing otherwise.

    The total can be unknown at first (None: a spinner and a count) and set or revised later
    (`total=`): `check` first estimates it from the bytes of the units done, then knows it."""

    def __init__(self, args: argparse.Namespace | None, what: str, unit: str,
                 stream: IO[str] | None = None, allowed: bool = True) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = allowed and is_terminal(self.stream) and not (args is not None and quiet(args))
        self.unit = unit
        self.what = what
        self.started = time.monotonic()
        self.done = 0
        self._progress: Any = None
        self._task: Any = None
        if self.enabled:
            self._start(use_color(args, self.stream))

    def _start(self, color: bool) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn, TimeRemainingColumn)

        console = Console(file=self.stream, force_terminal=True, no_color=not color,
                          color_system="standard" if color else None, highlight=False)
        rate = TextColumn("{task.fields[rate]}")
        self._progress = RichProgress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn(self.unit), rate, TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(),
            console=console, transient=False, refresh_per_second=8, redirect_stdout=False, redirect_stderr=False,
        )
        self._task = self._progress.add_task(self.what, total=None, rate="")
        self._progress.start()

    def update(self, done: int | None = None, *, advance: int = 0, total: int | None = None,
               description: str | None = None) -> None:
        if done is not None:
            self.done = done
        self.done += advance
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.started, 1e-9)
        fields: dict[str, Any] = {"completed": self.done, "rate": f"{self.done / elapsed:,.0f}/s"}
        if total is not None:
            fields["total"] = max(total, self.done)
        if description is not None:
            fields["description"] = description
        self._progress.update(self._task, **fields)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def batch_hook(self) -> Any:
        """An `on_progress(phase, done, total)` for `engine.batch.check_inputs`: bytes of input done
        become an estimate of the episode total (episodes so far x total bytes / bytes done),
        exact once every unit is done."""
        state = {"total": 0}

        def hook(phase: str, done: int, total: int) -> None:
            state["total"] = total
            if phase == "scan":
                pct = 100 * done // total if total else 0
                self.update(description=f"{self.what} (first pass {pct}%)")
            elif phase == "check" and done and total:
                estimate = self.done if done >= total else round(self.done * total / done)
                self.update(total=estimate, description=self.what)

        return hook

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
