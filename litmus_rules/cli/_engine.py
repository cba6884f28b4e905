"""`--engine local|dask`, `--scheduler` and `--unordered`: the options `check` and `preflight`
share for running on a Dask cluster (engine/distributed.py does the work)."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Iterator

from litmus_rules.cli._common import spool_stdin
from litmus_rules.engine.batch import Outcome, RulesSpec
from litmus_rules.engine.ruleset import RuleSet
from litmus_rules.errors import LitmusConfigError


def add_engine_options(p: argparse.ArgumentParser, unordered: bool = True) -> None:
    p.add_argument("--engine", choices=("local", "dask"), default="local",
                   help="local: this machine's processes (default); dask: a Dask cluster (pip install "
                   "\"litmus-rules[dask]\"), whose workers read the inputs at the same paths")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --engine dask: the scheduler to use (tcp://host:8786); default: a local cluster "
                   "of --jobs worker processes")
    if unordered:
        p.add_argument("--unordered", action="store_true",
                       help="with --engine dask: write verdicts as they complete, not in input order")


def check_engine_options(args: argparse.Namespace) -> None:
    """Misuse, found before any work: dask-only options without the dask engine, dask absent."""
    if args.engine != "dask":
        given = [name for name, on in (("--scheduler", args.scheduler is not None),
                                       ("--unordered", getattr(args, "unordered", False))) if on]
        if given:
            raise LitmusConfigError(f"{' and '.join(given)} apply to --engine dask")
        return
    if getattr(args, "from_format", None) is not None:
        raise LitmusConfigError("--engine dask checks episode files: import them first "
                                "(`litmus-rules import`), then check the imported files")
    from litmus_rules.engine.distributed import require_dask

    require_dask()


def dask_outcomes(args: argparse.Namespace, ruleset: RuleSet, rules_spec: RulesSpec, tmp: str) -> Iterator[Outcome]:
    from litmus_rules.engine.distributed import check_inputs_dask

    if "-" in args.inputs and args.scheduler is not None:  # before reading stdin: say so at once
        raise LitmusConfigError("--engine dask with --scheduler: the cluster's workers cannot read standard "
                                "input; write it to a file on a path they share")
    stdin_path = spool_stdin(tmp) if "-" in args.inputs else None
    return check_inputs_dask(ruleset, rules_spec, args.inputs, scheduler=args.scheduler, workers=args.jobs,
                             stdin_path=stdin_path, ordered=not args.unordered, notify=say, progress=pass_one())


def say(line: str) -> None:
    """The one line about the cluster (its workers, the dashboard link), on stderr."""
    print(line, file=sys.stderr)


def pass_one() -> Callable[[int, int], None] | None:
    """Pass 1's progress on a terminal (units read for canaries; the verdicts' own counter follows)."""
    stream = sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def show(done: int, total: int) -> None:
        if done % 16 == 0 or done == total:
            stream.write(f"\rlitmus-rules: dask: canaries read from {done}/{total} units" + ("\n" if done == total else ""))
            stream.flush()

    return show


__all__ = ["add_engine_options", "check_engine_options", "dask_outcomes", "say"]
