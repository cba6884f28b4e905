"""`litmus-rules`: the command line. The only package that prints or exits.

This module is the top-level parser and the dispatch; each command is one module beside it
(`check`, `explain`, `preflight`, `import`, `report`, `test`, `fmt`, `lint`, `rules`), with a `register(sub)` that adds
its parser and a handler that returns the exit status. What they share (exit codes, writing the
output, signals) is `_common.py`.

Exit status (contract): 0 every episode SCORED; 1 any REJECTED; 2 any ERROR, or the command was
misused (bad arguments, rules that do not load).

When the output cannot be written (a full disk, a path that cannot be created, a closed stdout)
the run ends with a one-line message and exit 2, and no partial or temporary file is left. A reader
that closes a piped stdout early (`| head`) is the same case: the output was not delivered in full,
so the run exits 2 with one line on stderr and no traceback, never 0 (a CI job with `pipefail`
fails). SIGINT exits 130 and SIGTERM 143, after stopping the worker processes and removing
temporary files.

Every command takes `-q/--quiet`, `-v/--verbose` and `--color auto|always|never` (`_terminal.py`),
before or after its name; `--version` prints the version.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any, Iterator, NoReturn, Sequence

from litmus_rules.cli import check, completion, explain, fmt, import_, lint, preflight, report, rules, test
from litmus_rules.cli._common import EXIT_ERROR, Interrupted, WriteError, quiet_stdout
from litmus_rules.cli._terminal import add_terminal_options
from litmus_rules.errors import LitmusError, RuleCheckError

__all__ = ["build_parser", "main", "parse"]

# In the order `--help` lists them.
COMMANDS = (check, explain, preflight, import_, report, test, fmt, lint, rules, completion)
# Each command's name on the command line (the name its `register` gives its parser).
NAMES = {"check": check, "explain": explain, "preflight": preflight, "import": import_, "report": report,
         "test": test, "fmt": fmt, "lint": lint, "rules": rules, "completion": completion}
# The top-level options, as `_named_command` reads them before the command's name.
_FLAGS = frozenset(("-q", "--quiet", "-v", "--verbose"))
_VALUED = frozenset(("--color", "--colour"))


def _version() -> str:
    from litmus_rules._resources import installed_version

    # None: a source checkout on PYTHONPATH, not installed
    return installed_version() or "unknown (not installed)"


class _Version(argparse.Action):
    """`--version`, looked up only when asked (the metadata lookup is not free at every start)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(f"{parser.prog} {_version()}\n")
        parser.exit()


def _commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every (sub)command parser below `parser`, depth first (`rules info` too)."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public view of its subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for child in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                yield child
                yield from _commands(child)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command's parser (`--help`, shell completion, misuse)."""
    return _build(argparse.ArgumentParser, COMMANDS)


class _Reparse(Exception):
    """The one-command parser met something to report: the whole parser reports it."""


class _OneCommandParser(argparse.ArgumentParser):
    """A parser holding one command (its commands' parsers are of this class too): what it parses
    it parses as the whole parser does, and whatever it would report (a usage error) is left to
    the whole parser, so every message and usage line is the whole parser's."""

    def error(self, message: str) -> NoReturn:
        raise _Reparse(message)


def _build(parser_class: type[argparse.ArgumentParser], commands: Sequence[Any]) -> argparse.ArgumentParser:
    parser = parser_class(
        prog="litmus-rules",
        description="Reject contaminated LITMUS benchmark instances, classify the rest, explain every verdict.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    add_terminal_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands:
        command.register(sub)
    for child in _commands(parser):
        add_terminal_options(child, top=False)
    return parser


def _named_command(argv: Sequence[str]) -> str | None:
    """The command `argv` runs when it is plainly written (top-level options are `-q`, `-v` and
    `--color X` only, then a command's name); None for anything else (`--help`, `--version`, an
    abbreviated option, no command), which the whole parser reads."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in _VALUED:
            i += 2
        elif token in _FLAGS or token.startswith(("--color=", "--colour=")) or (
                len(token) > 2 and token.startswith("-v") and set(token[1:]) == {"v"}):  # -vv
            i += 1
        else:
            return token if token in NAMES else None
    return None


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line's arguments. Building the ten commands' parsers costs more than parsing
    (about 25 ms of every start), so a plainly written command line is parsed by a parser holding
    that command only; the whole parser parses the rest, and reports every error."""
    argv = sys.argv[1:] if argv is None else list(argv)
    name = _named_command(argv)
    if name is not None and name != "completion":  # completion reads the whole parser anyway
        parser = _build(_OneCommandParser, [NAMES[name]])
        try:
            args = parser.parse_args(argv)
            _validate(parser, args)
            return args
        except _Reparse:
            pass
    parser = build_parser()
    args = parser.parse_args(argv)
    _validate(parser, args)
    return args


def _validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Checks across options (argparse checks each one alone): misuse is a usage error, exit 2."""
    validate = getattr(args, "validate", None)
    if validate is None:
        return
    problem = validate(args)
    if problem:
        command = next((p for p in _commands(parser) if p.prog.split()[1:] == [args.command]), parser)
        command.error(problem)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    try:
        code = int(args.func(args))
        if sys.stdout is not None:
            sys.stdout.flush()  # a broken pipe shows here, not in the interpreter's exit (a traceback)
        return code
    except RuleCheckError as exc:
        print(exc.render(), file=sys.stderr)
        errors = sum(1 for d in exc.diagnostics if d.severity == "error")
        print(f"litmus-rules: the rules do not load ({errors} error(s))", file=sys.stderr)
        return EXIT_ERROR
    except LitmusError as exc:
        print(exc.render(), file=sys.stderr)
        return EXIT_ERROR
    except WriteError as exc:
        print(f"litmus-rules: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("litmus-rules: interrupted", file=sys.stderr)
        return 130
    except Interrupted as exc:
        what = "interrupted" if exc.signum == signal.SIGINT else f"stopped by {signal.Signals(exc.signum).name}"
        print(f"litmus-rules: {what}", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:  # the output was not delivered in full (check handles its own)
        quiet_stdout()
        print("litmus-rules: the output was closed early (broken pipe)", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
