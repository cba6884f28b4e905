"""`litmus-rules explain`: the full trace of one episode, found by its id."""

from __future__ import annotations

import argparse
import sys
import tempfile
from typing import Any

from litmus_rules.cli._common import (
    EXIT_ERROR,
    add_rules_options,
    config_defaults,
    exit_code,
    load,
    outcomes,
    quiet_stdout,
    spec,
    stoppable,
    write,
)
from litmus_rules.engine.verdict import SCORED


def cmd_explain(args: argparse.Namespace) -> int:
    ruleset = load(args, header=args.format == "text")  # text: the ruleset line heads the trace
    explain = "full" if args.full else "fails"
    rules_spec = spec(args, explain, want_text=True)
    with stoppable(), tempfile.TemporaryDirectory(prefix="litmus-") as tmp:
        found = outcomes(args, ruleset, rules_spec, tmp)
        try:
            for outcome in found:
                if outcome.id != args.id:
                    continue
                try:
                    if args.format == "json":
                        from litmus_rules.render.json import render_json  # orjson: only when JSON is written

                        write(iter([render_json([outcome.json])]), None)
                    else:
                        write(iter([args.ruleset_line, "\n\n", outcome.text or "", "\n"]), None)
                        if outcome.verdict == SCORED and not args.full:
                            write(iter(["(every rule passed; --full shows their traces)\n"]), None)
                except BrokenPipeError:  # the explanation was not delivered in full: as every command
                    quiet_stdout()
                    print("litmus-rules: the output was closed early (broken pipe)", file=sys.stderr)
                    return EXIT_ERROR
                return exit_code([outcome.verdict])
        finally:
            if hasattr(found, "close"):
                found.close()
    print(f"litmus-rules: no episode with id `{args.id}` in the inputs", file=sys.stderr)
    return EXIT_ERROR


def register(sub: Any) -> None:
    explain = sub.add_parser("explain", help="print the full trace of one episode")
    explain.add_argument("inputs", nargs="+", metavar="INPUT")
    explain.add_argument("--id", required=True, help="the episode's id")
    add_rules_options(explain)
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--full", action="store_true", help="also show the rules that passed")
    config_defaults(explain, "explain")
    explain.set_defaults(func=cmd_explain)
