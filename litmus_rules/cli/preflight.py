"""`litmus-rules preflight`: the command line of the preflight pass (`preflight/run.py`).

Exit status: 0 controls written and none shows a problem; 1 some control shows a problem or the
scorer failed (`check` will reject that instance); 2 misuse or unusable input documents.

On a terminal, a progress bar on stderr (instances done of the total, a rate and an ETA; the
total is counted first, by parsing without validating); then a summary, the per-instance table
only with `-v`. `-q`: the findings' counts and the problems only, no progress.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from litmus_rules.cli._engine import add_engine_options, check_engine_options, say
from litmus_rules.cli._terminal import Progress, emit, use_color, verbosity
from litmus_rules.errors import LitmusConfigError
from litmus_rules.preflight import DEFAULT_TIMEOUT


def cmd_preflight(args: argparse.Namespace) -> int:
    # imported here: every other command (a `check`) starts without the pre-flight machinery
    from litmus_rules.preflight.report import render_json, render_text
    from litmus_rules.preflight.run import run_preflight
    from litmus_rules.preflight.scorer_process import ScorerProcess
    from litmus_rules.preflight.scoring import check_spec, declared_scorer

    if args.format == "jsonl" and args.output:
        raise LitmusConfigError("preflight: --format jsonl writes the instances to stdout; drop -o")
    if args.format != "jsonl" and not args.output:
        raise LitmusConfigError("preflight: give -o OUTDIR (or --format jsonl to write to stdout)")
    if args.output and os.path.exists(args.output) and not os.path.isdir(args.output):
        raise LitmusConfigError(f"preflight: -o `{args.output}` exists and is not a folder")
    timeout = args.scorer_timeout
    if not (timeout > 0 and timeout != float("inf")):  # NaN fails `> 0` too
        raise LitmusConfigError(f"preflight: --scorer-timeout must be a positive number of seconds, got {timeout:g}")
    check_engine_options(args)
    engine = {"engine": args.engine, "scheduler": args.scheduler, "notify": say}
    if args.scorer:
        check_spec(args.scorer)
    with Progress(args, "preflight", "instances") as progress:
        if progress.enabled and "-" not in args.inputs:
            progress.update(description="preflight (counting)")
            progress.update(total=_count(args.inputs) or None, description="preflight")
        tick = (lambda: progress.update(advance=1)) if progress.enabled else None
        if not args.scorer:
            report = run_preflight(args.inputs, args.output, declared_scorer, "declared detector",
                                   replace_controls=args.replace_controls, on_instance=tick, **engine)
        else:
            with ScorerProcess(args.scorer, timeout) as scorer:
                report = run_preflight(args.inputs, args.output, scorer, args.scorer,
                                       replace_controls=args.replace_controls, on_instance=tick, **engine)
    if args.format == "json":
        emit(render_json(report))
    else:
        sys.stderr.write(render_text(report, verbose=verbosity(args) > 0, color=use_color(args, sys.stderr)))
    if not report.results and not report.input_errors:
        print("litmus-rules: no episodes found in the inputs", file=sys.stderr)
    return report.exit_code()


def _count(inputs: list[str]) -> int:
    """How many documents the inputs hold (the progress bar's total): parsed, not validated."""
    from litmus_rules.io.inputs import plan_units
    from litmus_rules.io.load import iter_unit

    try:
        return sum(1 for unit in plan_units(inputs, find_origins=False) for _ in iter_unit(unit, check=False))
    except Exception:  # noqa: BLE001 -- only a progress total: the pass itself reports what is wrong
        return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "preflight", help="run null/positive/refusal/compliance stub agents and record the controls",
        description="Run deterministic stub agents on every instance, score them with the instance's "
        "detector or your scorer, and write each instance with `controls` filled in (episode/1.1: the "
        "harness's own control runs are kept, and where a stub disagrees with one it is reported). Then run "
        "`litmus-rules check OUTDIR`. Exit 0: no problem; 1: some control shows a problem or the "
        "scorer failed; 2: misuse or unusable input.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="instance files or folders; - for stdin")
    p.add_argument("-o", "--output", metavar="OUTDIR", help="write one file per input file here (atomically)")
    p.add_argument("--scorer", metavar="MODULE:FUNCTION",
                   help="your harness's scorer (or path/to/file.py:FUNCTION); imported and run: it executes your code")
    p.add_argument("--scorer-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"time limit for your scorer on one instance (its five runs), default {DEFAULT_TIMEOUT:g}; "
                   "a scorer past it is killed and the instance's controls stay unknown")
    p.add_argument("--replace-controls", action="store_true",
                   help="episode/1.1: replace the control runs the harness recorded (every run not marked "
                   "`source: stub`) with the stubs' runs; by default they are kept and only absent controls are "
                   "filled in (episode/1 controls are always replaced: that format cannot mark the harness's runs)")
    p.add_argument("--format", choices=("text", "json", "jsonl"), default="text",
                   help="text: summary on stderr (-v: a row per instance); json: summary as JSON on stdout; "
                   "jsonl: instances as JSONL on stdout (no -o), summary on stderr")
    add_engine_options(p, unordered=False)
    p.set_defaults(func=cmd_preflight)
