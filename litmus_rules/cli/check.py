"""`litmus-rules check`: decide SCORED / REJECTED / ERROR for every episode of the inputs.

When a reader closes a piped stdout early (`| head`), the exit status is the verdicts' status if
every episode had been decided, else 2: a batch that was not checked in full never exits 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from typing import Any, Iterator, TextIO

import attrs

from litmus_rules.cli._common import (
    EXIT_ERROR,
    add_rules_options,
    check_signals,
    exit_code,
    load,
    outcomes,
    quiet_stdout,
    spec,
    stoppable,
    write,
)
from litmus_rules.cli._engine import add_engine_options, check_engine_options, dask_outcomes
from litmus_rules.cli.import_ import add_import_options, imported_outcomes
from litmus_rules.engine.batch import Outcome
from litmus_rules.errors import LitmusConfigError
from litmus_rules.engine.verdict import SCORED
from litmus_rules.render.json import json_line, render_json
from litmus_rules.render.report.provenance import provenance
from litmus_rules.render.report.summary import Summary, parse_by
from litmus_rules.render.text import render_summary


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


@attrs.frozen
class _Row:
    """What the summary keeps of an episode once its output is written: memory stays small."""

    id: str | None
    verdict: str
    rules: tuple[str, ...]
    classification: str | None


def cmd_check(args: argparse.Namespace) -> int:
    check_engine_options(args)
    ruleset = load(args)
    rules_spec = spec(args, args.explain, want_text=args.format == "text")
    progress = _Progress(sys.stderr)
    rows: list[_Row] = []
    traces: list[str] = []
    full: list[dict[str, Any]] = []
    summary = Summary(parse_by(args.by))
    complete = False

    with stoppable(), tempfile.TemporaryDirectory(prefix="litmus-") as tmp:
        if args.from_format is not None:  # import on the fly (cli/import_.py), then check as any input
            found = imported_outcomes(args, ruleset, rules_spec, tmp)
        elif args.detector or args.run or args.option:
            raise LitmusConfigError("--detector, --run and --option apply to imported inputs: add --from FORMAT")
        elif args.engine == "dask":
            found = dask_outcomes(args, ruleset, rules_spec, tmp)
        else:
            found = outcomes(args, ruleset, rules_spec, tmp)

        def tracked() -> Iterator[Outcome]:
            nonlocal complete
            for outcome in found:
                check_signals()
                rows.append(_Row(outcome.id, outcome.verdict, outcome.rules, outcome.classification))
                progress.tick(len(rows))
                yield outcome
            complete = True

        try:
            if args.format == "jsonl":
                write((json_line(o.json) for o in tracked()), args.output)
            else:
                for outcome in tracked():
                    if args.format == "json":
                        full.append(outcome.json)
                        summary.add(outcome.json)
                    elif outcome.text is not None and (outcome.verdict != SCORED or args.explain == "full"):
                        traces.append(outcome.text)
                if args.format == "json":
                    text = render_json(full, {**summary.to_json(), **provenance(ruleset.info, args.inputs)})
                else:
                    text = "\n\n".join([render_summary(rows, ruleset.info), *traces]) + "\n"
                write(iter([text]), args.output)
        except BrokenPipeError:
            quiet_stdout()
            code = exit_code(r.verdict for r in rows) if complete else EXIT_ERROR
            state = "" if complete else f"; {len(rows)} episode(s) decided, the rest not checked"
            print(f"litmus-rules: the output was closed early (broken pipe){state}", file=sys.stderr)
            return code
        finally:
            if hasattr(found, "close"):
                found.close()  # stops the workers now, not when the generator is collected
            progress.close()
    if not rows:
        print("litmus-rules: no episodes found in the inputs", file=sys.stderr)
        return EXIT_ERROR
    return exit_code(r.verdict for r in rows)


def register(sub: Any) -> None:
    check = sub.add_parser("check", help="decide SCORED / REJECTED / ERROR for every episode")
    check.add_argument("inputs", nargs="+", metavar="INPUT", help="episode files or folders; - for stdin")
    add_rules_options(check)
    check.add_argument("--format", choices=("text", "json", "jsonl"), default="text")
    check.add_argument("--explain", choices=("fails", "full"), default="fails", help="which traces to include")
    check.add_argument("--no-traces", action="store_true",
                       help="json/jsonl: verdicts without their traces (reasons, witnesses and messages stay; "
                            "a tenth of the size, what `report` reads)")
    check.add_argument("--by", metavar="KEYS",
                       help="with --format json: also count per group of these verdict keys (run.model,run.attack)")
    check.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    check.add_argument(
        "--jobs", type=int, metavar="N", help="worker processes (default: all cores for inputs over 2 MiB, else 1)"
    )
    check.add_argument("--from", dest="from_format", metavar="FORMAT",
                       help="the inputs are a harness's own files: import them first (see `litmus-rules import`)")
    add_import_options(check)
    add_engine_options(check)
    check.set_defaults(func=cmd_check)
