"""`litmus-rules`: the command line. The only package that prints or exits.

This module is the top-level parser and the dispatch; each command is one module beside it
(`check`, `explain`, `preflight`, `import`, `report`, `test`, `fmt`, `lint`, `rules`), with a `register(sub)` that adds
its parser and a handler that returns the exit status. What they share (exit codes, writing the
output, signals) is `_common.py`.

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
import signal
import sys
from typing import Sequence

from litmus_rules.cli import check, explain, fmt, import_, lint, preflight, report, rules, test
from litmus_rules.cli._common import EXIT_ERROR, EXIT_OK, Interrupted, WriteError, quiet_stdout
from litmus_rules.errors import LitmusError, RuleCheckError

__all__ = ["build_parser", "main"]

# In the order `--help` lists them.
COMMANDS = (check, explain, preflight, import_, report, test, fmt, lint, rules)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="litmus-rules",
        description="Reject contaminated LITMUS benchmark instances, classify the rest, explain every verdict.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
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
    except BrokenPipeError:  # a command that decides nothing (check and explain handle their own)
        quiet_stdout()
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
