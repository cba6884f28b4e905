"""What the commands share: exit codes, rules options, output writing and signal handling.

When the output cannot be written (a full disk, a path that cannot be created, a closed stdout)
the run ends with a one-line message and exit 2, and no partial or temporary file is left.
SIGINT exits 130 and SIGTERM 143, after stopping the worker processes and removing temporary files.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

from litmus_rules.engine.batch import Outcome, RulesSpec, check_inputs
from litmus_rules.render.text import render_verdict
from litmus_rules.engine.ruleset import RuleSet, load_rules
from litmus_rules.engine.verdict import ERROR, REJECTED
from litmus_rules.errors import LitmusError

# `check` and `explain`: the verdicts' status; the authoring commands: a finding (a failed test, a
# file that would change, a lint warning) is 1, misuse is 2 everywhere.
EXIT_OK, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2
EXIT_FAIL, EXIT_MISUSE = 1, 2

Handler = Callable[[argparse.Namespace], int]
PATHS_HELP = "rule files or folders (default: the shipped rules)"  # the authoring commands' PATH


# ---- rules -----------------------------------------------------------------------------------------


def add_rules_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", metavar="PATH", help="rule file or folder (default: the shipped rules)")
    p.add_argument(
        "--param", action="append", metavar="NAME=VALUE", help="override a ruleset param (repeatable)"
    )


def parse_params(items: Sequence[str]) -> dict[str, str]:
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise LitmusError(f"--param takes NAME=VALUE, got `{item}`")
        params[name.strip()] = value
    return params


def load(args: argparse.Namespace) -> RuleSet:
    return load_rules(args.rules, parse_params(args.param or ()))


def spec(args: argparse.Namespace, explain: str, want_text: bool) -> RulesSpec:
    with_traces = not getattr(args, "no_traces", False)
    return RulesSpec(args.rules, parse_params(args.param or ()), explain, want_text, render_verdict, with_traces)


def rule_paths(args: argparse.Namespace) -> list[Path]:
    """The authoring commands' PATH arguments, else the shipped rules."""
    from litmus_rules._resources import default_rules_dir

    return [Path(p) for p in args.paths] if args.paths else [default_rules_dir()]


def fail(message: str) -> int:
    print(f"litmus-rules: {message}", file=sys.stderr)
    return EXIT_MISUSE


def guarded(handler: Handler) -> Handler:
    """Config errors (a missing path, a bad param) are misuse: exit 2 with the message."""

    def run(args: argparse.Namespace) -> int:
        try:
            return int(handler(args))
        except LitmusError as exc:
            if type(exc).__name__ in ("RuleCheckError", "LitmusSyntaxError"):
                raise  # cli.main renders these with every diagnostic
            print(f"litmus-rules: {exc}", file=sys.stderr)
            return EXIT_MISUSE

    return run


# ---- episodes --------------------------------------------------------------------------------------


def spool_stdin(directory: str) -> str:
    """Standard input is read twice (two passes): keep it in a file, as bytes (decoding is the
    reader's job, so that bad UTF-8 is a located ERROR, not a traceback here)."""
    path = os.path.join(directory, "stdin")
    with open(path, "wb") as fh:
        if sys.stdin is None:  # closed: an empty input, reported as such
            return path
        binary = getattr(sys.stdin, "buffer", None)
        if binary is not None:
            shutil.copyfileobj(binary, fh, 2**20)
        else:  # a text stream (tests, embedding)
            for chunk in iter(lambda: sys.stdin.read(2**20), ""):
                fh.write(chunk.encode("utf-8", "surrogatepass"))
    return path


def outcomes(args: argparse.Namespace, ruleset: RuleSet, rules_spec: RulesSpec, tmp: str) -> Iterator[Outcome]:
    stdin_path = spool_stdin(tmp) if "-" in args.inputs else None
    return check_inputs(ruleset, rules_spec, args.inputs, jobs=getattr(args, "jobs", None), stdin_path=stdin_path)


def exit_code(verdicts: Iterable[str]) -> int:
    kinds = set(verdicts)
    if ERROR in kinds:
        return EXIT_ERROR
    if REJECTED in kinds:
        return EXIT_REJECTED
    return EXIT_OK


# ---- signals ---------------------------------------------------------------------------------------


class Interrupted(BaseException):
    """SIGTERM, as an exception: unwinding runs every `finally` (workers stopped, temp files
    removed). A BaseException, so that no per-episode boundary (`except Exception`) swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_SIGNALLED: list[int] = []  # signals received: re-raised at the next episode if the first raise was lost


@contextlib.contextmanager
def stoppable() -> Iterator[None]:
    """SIGTERM and SIGINT raise `Interrupted` in the main thread for the duration; a second one,
    during the clean-up, is ignored rather than cutting the clean-up short. A raise that lands in
    a finaliser or a weakref callback (the process pool has some) is swallowed by Python, so the
    signal is also recorded and `check_signals` raises it again at the next episode."""

    def stop(signum: int, _frame: Any) -> None:
        signal.signal(signum, signal.SIG_IGN)
        _SIGNALLED.append(signum)
        raise Interrupted(signum)

    try:
        previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _SIGNALLED.clear()


def check_signals() -> None:
    if _SIGNALLED:
        raise Interrupted(_SIGNALLED[0])


# ---- output ----------------------------------------------------------------------------------------


class WriteError(Exception):
    """The output could not be written; the message is the one line the user sees."""


def _copy(chunks: Iterator[str], stream: TextIO, name: str) -> None:
    """Write every chunk; an OSError of the *write* (not of producing a chunk) is a WriteError."""
    for chunk in chunks:
        try:
            stream.write(chunk)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise WriteError(f"cannot write {name}: {e.strerror or e}") from None


def write(text_chunks: Iterator[str], output: str | None) -> None:
    """Write to stdout, or atomically to a file: an interrupted or failed run never leaves a
    truncated file or a temporary one. An existing non-regular output (/dev/null, a FIFO) is
    written in place: renaming over it would replace a device by a file."""
    if output is None or output == "-":
        stream = sys.stdout
        if stream is None:
            raise WriteError("cannot write to standard output: it is closed")
        if hasattr(stream, "reconfigure"):
            # The output is UTF-8 whatever the locale; a lone surrogate in text output (an id) is
            # written as its \\uXXXX escape (JSON output has none left: render.json.dumps escaped them).
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(encoding="utf-8", errors="backslashreplace")
        _copy(text_chunks, stream, "to standard output")
        return
    name = f"`{output}`"
    try:
        mode: int | None = os.stat(output).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise WriteError(f"cannot write {name}: it is a folder")
    if mode is not None and not stat.S_ISREG(mode):
        try:
            with open(output, "w", encoding="utf-8", errors="backslashreplace") as fh:
                _copy(text_chunks, fh, name)
        except OSError as e:
            raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=".litmus-", dir=os.path.dirname(os.path.abspath(output)))
    except OSError as e:
        raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    try:
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
                _copy(text_chunks, fh, name)
            os.replace(tmp, output)
        except OSError as e:  # the close's flush (ENOSPC), or the rename
            raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's own final flush
    does not print a second error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
