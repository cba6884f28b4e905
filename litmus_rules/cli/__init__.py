"""`litmus-rules`: the command line. The only module that prints or exits.

Exit status (contract): 0 every episode SCORED; 1 any REJECTED; 2 any ERROR, or the command was
misused (bad arguments, rules that do not load).

When the output cannot be written (a full disk, a path that cannot be created, a closed stdout)
the run ends with a one-line message and exit 2, and no partial or temporary file is left. When a
reader closes a piped stdout early (`| head`), the exit status is the verdicts' status if every
episode had been decided, else 2: a batch that was not checked in full never exits 0. SIGINT exits
130 and SIGTERM 143, after stopping the worker processes and removing temporary files.
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
import time
from typing import Any, Iterable, Iterator, Sequence, TextIO

import attrs

from litmus_rules.render import text as render
from litmus_rules.engine.batch import Outcome, RulesSpec, check_inputs
from litmus_rules.engine.ruleset import RuleSet, load_rules
from litmus_rules.errors import LitmusError, RuleCheckError
from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED

EXIT_OK, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2


class _Progress:
    """A one-line counter on stderr, only for a terminal and only once a run takes a while."""

    def __init__(self, stream: TextIO, after: float = 2.0) -> None:
        self.stream = stream
        self.enabled = hasattr(stream, "isatty") and stream.isatty()
        self.start = time.monotonic()
        self.after = after
        self.last = 0.0
        self.shown = False

    def tick(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.after or now - self.last < 0.25:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        self.stream.write(f"\r{done} episodes checked ({rate:,.0f}/s)")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")


def _parse_params(items: Sequence[str]) -> dict[str, str]:
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise LitmusError(f"--param takes NAME=VALUE, got `{item}`")
        params[name.strip()] = value
    return params


def _load(args: argparse.Namespace) -> RuleSet:
    return load_rules(args.rules, _parse_params(args.param or ()))


def _spec(args: argparse.Namespace, explain: str, want_text: bool) -> RulesSpec:
    return RulesSpec(args.rules, _parse_params(args.param or ()), explain, want_text)


class Interrupted(BaseException):
    """SIGTERM, as an exception: unwinding runs every `finally` (workers stopped, temp files
    removed). A BaseException, so that no per-episode boundary (`except Exception`) swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _WriteError(Exception):
    """The output could not be written; the message is the one line the user sees."""


_SIGNALLED: list[int] = []  # signals received: re-raised at the next episode if the first raise was lost


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    """SIGTERM and SIGINT raise `Interrupted` in the main thread for the duration; a second one,
    during the clean-up, is ignored rather than cutting the clean-up short. A raise that lands in
    a finaliser or a weakref callback (the process pool has some) is swallowed by Python, so the
    signal is also recorded and `_check_signals` raises it again at the next episode."""

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


def _check_signals() -> None:
    if _SIGNALLED:
        raise Interrupted(_SIGNALLED[0])


def _spool_stdin(directory: str) -> str:
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


def _outcomes(args: argparse.Namespace, ruleset: RuleSet, spec: RulesSpec, tmp: str) -> Iterator[Outcome]:
    stdin_path = _spool_stdin(tmp) if "-" in args.inputs else None
    return check_inputs(ruleset, spec, args.inputs, jobs=getattr(args, "jobs", None), stdin_path=stdin_path)


def _exit_code(verdicts: Iterable[str]) -> int:
    kinds = set(verdicts)
    if ERROR in kinds:
        return EXIT_ERROR
    if REJECTED in kinds:
        return EXIT_REJECTED
    return EXIT_OK


def _copy(chunks: Iterator[str], stream: TextIO, name: str) -> None:
    """Write every chunk; an OSError of the *write* (not of producing a chunk) is a _WriteError."""
    for chunk in chunks:
        try:
            stream.write(chunk)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _WriteError(f"cannot write {name}: {e.strerror or e}") from None
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise _WriteError(f"cannot write {name}: {e.strerror or e}") from None


def _write(text_chunks: Iterator[str], output: str | None) -> None:
    """Write to stdout, or atomically to a file: an interrupted or failed run never leaves a
    truncated file or a temporary one. An existing non-regular output (/dev/null, a FIFO) is
    written in place: renaming over it would replace a device by a file."""
    if output is None or output == "-":
        stream = sys.stdout
        if stream is None:
            raise _WriteError("cannot write to standard output: it is closed")
        if hasattr(stream, "reconfigure"):
            # The output is UTF-8 whatever the locale; a lone surrogate in text output (an id) is
            # written as its \\uXXXX escape (JSON output has none left: render.dumps escaped them).
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
        raise _WriteError(f"cannot write {name}: {e.strerror or e}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise _WriteError(f"cannot write {name}: it is a folder")
    if mode is not None and not stat.S_ISREG(mode):
        try:
            with open(output, "w", encoding="utf-8", errors="backslashreplace") as fh:
                _copy(text_chunks, fh, name)
        except OSError as e:
            raise _WriteError(f"cannot write {name}: {e.strerror or e}") from None
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=".litmus-", dir=os.path.dirname(os.path.abspath(output)))
    except OSError as e:
        raise _WriteError(f"cannot write {name}: {e.strerror or e}") from None
    try:
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
                _copy(text_chunks, fh, name)
            os.replace(tmp, output)
        except OSError as e:  # the close's flush (ENOSPC), or the rename
            raise _WriteError(f"cannot write {name}: {e.strerror or e}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's own final flush
    does not print a second error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@attrs.frozen
class _Row:
    """What the summary keeps of an episode once its output is written: memory stays small."""

    id: str | None
    verdict: str
    rules: tuple[str, ...]
    classification: str | None


def cmd_check(args: argparse.Namespace) -> int:
    ruleset = _load(args)
    spec = _spec(args, args.explain, want_text=args.format == "text")
    progress = _Progress(sys.stderr)
    rows: list[_Row] = []
    traces: list[str] = []
    full: list[dict[str, Any]] = []
    complete = False

    with _stoppable(), tempfile.TemporaryDirectory(prefix="litmus-") as tmp:
        outcomes = _outcomes(args, ruleset, spec, tmp)

        def tracked() -> Iterator[Outcome]:
            nonlocal complete
            for outcome in outcomes:
                _check_signals()
                rows.append(_Row(outcome.id, outcome.verdict, outcome.rules, outcome.classification))
                progress.tick(len(rows))
                yield outcome
            complete = True

        try:
            if args.format == "jsonl":
                _write((render.json_line(o.json) for o in tracked()), args.output)
            else:
                for outcome in tracked():
                    if args.format == "json":
                        full.append(outcome.json)
                    elif outcome.text is not None and (outcome.verdict != SCORED or args.explain == "full"):
                        traces.append(outcome.text)
                if args.format == "json":
                    text = render.render_json(full)
                else:
                    text = "\n\n".join([render.render_summary(rows, ruleset.info), *traces]) + "\n"
                _write(iter([text]), args.output)
        except BrokenPipeError:
            _quiet_stdout()
            code = _exit_code(r.verdict for r in rows) if complete else EXIT_ERROR
            state = "" if complete else f"; {len(rows)} episode(s) decided, the rest not checked"
            print(f"litmus-rules: the output was closed early (broken pipe){state}", file=sys.stderr)
            return code
        finally:
            if hasattr(outcomes, "close"):
                outcomes.close()  # stops the workers now, not when the generator is collected
            progress.close()
    if not rows:
        print("litmus-rules: no episodes found in the inputs", file=sys.stderr)
        return EXIT_ERROR
    return _exit_code(r.verdict for r in rows)


def cmd_explain(args: argparse.Namespace) -> int:
    ruleset = _load(args)
    explain = "full" if args.full else "fails"
    spec = _spec(args, explain, want_text=True)
    with _stoppable(), tempfile.TemporaryDirectory(prefix="litmus-") as tmp:
        outcomes = _outcomes(args, ruleset, spec, tmp)
        try:
            for outcome in outcomes:
                if outcome.id != args.id:
                    continue
                try:
                    if args.format == "json":
                        _write(iter([render.render_json([outcome.json])]), None)
                    else:
                        _write(iter([outcome.text or "", "\n"]), None)
                        if outcome.verdict == SCORED and not args.full:
                            _write(iter(["(every rule passed; --full shows their traces)\n"]), None)
                except BrokenPipeError:
                    _quiet_stdout()  # the verdict is known: its status stands
                return _exit_code([outcome.verdict])
        finally:
            if hasattr(outcomes, "close"):
                outcomes.close()
    print(f"litmus-rules: no episode with id `{args.id}` in the inputs", file=sys.stderr)
    return EXIT_ERROR


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="litmus-rules",
        description="Reject contaminated LITMUS benchmark instances, classify the rest, explain every verdict.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def rules_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--rules", metavar="PATH", help="rule file or folder (default: the shipped rules)")
        p.add_argument(
            "--param", action="append", metavar="NAME=VALUE", help="override a ruleset param (repeatable)"
        )

    check = sub.add_parser("check", help="decide SCORED / REJECTED / ERROR for every episode")
    check.add_argument("inputs", nargs="+", metavar="INPUT", help="episode files or folders; - for stdin")
    rules_options(check)
    check.add_argument("--format", choices=("text", "json", "jsonl"), default="text")
    check.add_argument("--explain", choices=("fails", "full"), default="fails", help="which traces to include")
    check.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    check.add_argument(
        "--jobs", type=int, metavar="N", help="worker processes (default: all cores for inputs over 2 MiB, else 1)"
    )
    check.set_defaults(func=cmd_check)

    explain = sub.add_parser("explain", help="print the full trace of one episode")
    explain.add_argument("inputs", nargs="+", metavar="INPUT")
    explain.add_argument("--id", required=True, help="the episode's id")
    rules_options(explain)
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--full", action="store_true", help="also show the rules that passed")
    explain.set_defaults(func=cmd_explain)
    from litmus_rules.preflight import run as preflight
    preflight.register(sub)
    from litmus_rules.cli import authoring as cli_authoring
    cli_authoring.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except RuleCheckError as exc:
        print(exc.render(), file=sys.stderr)
        errors = sum(1 for d in exc.diagnostics if d.severity == "error")
        print(f"litmus-rules: the rules do not load ({errors} error(s))", file=sys.stderr)
        return EXIT_ERROR
    except LitmusError as exc:
        print(exc.render(), file=sys.stderr)
        return EXIT_ERROR
    except _WriteError as exc:
        print(f"litmus-rules: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("litmus-rules: interrupted", file=sys.stderr)
        return 130
    except Interrupted as exc:
        what = "interrupted" if exc.signum == signal.SIGINT else f"stopped by {signal.Signals(exc.signum).name}"
        print(f"litmus-rules: {what}", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:  # a command that decides nothing (check and explain handle their own)
        _quiet_stdout()
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
