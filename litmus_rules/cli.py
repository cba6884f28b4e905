"""`litmus-rules`: the command line. The only module that prints or exits.

Exit status (contract): 0 every episode SCORED; 1 any REJECTED; 2 any ERROR, or the command was
misused (bad arguments, rules that do not load).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any, Iterable, Iterator, Sequence, TextIO

import attrs

from litmus_rules import render
from litmus_rules.batch import Outcome, RulesSpec, check_inputs
from litmus_rules.engine import RuleSet, load_rules
from litmus_rules.errors import LitmusError, RuleCheckError
from litmus_rules.verdict import ERROR, REJECTED, SCORED

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


def _spool_stdin(directory: str) -> str:
    """Standard input is read twice (two passes): keep it in a file."""
    path = os.path.join(directory, "stdin")
    with open(path, "w", encoding="utf-8") as fh:
        for chunk in iter(lambda: sys.stdin.read(2**20), ""):
            fh.write(chunk)
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


def _write(text_chunks: Iterator[str], output: str | None) -> None:
    """Write to stdout, or atomically to a file: an interrupted run never leaves a truncated file."""
    if output is None or output == "-":
        for chunk in text_chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=".litmus-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for chunk in text_chunks:
                fh.write(chunk)
        os.replace(tmp, output)
    except BaseException:
        os.unlink(tmp)
        raise


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

    with tempfile.TemporaryDirectory(prefix="litmus-") as tmp:

        def tracked() -> Iterator[Outcome]:
            for outcome in _outcomes(args, ruleset, spec, tmp):
                rows.append(_Row(outcome.id, outcome.verdict, outcome.rules, outcome.classification))
                progress.tick(len(rows))
                yield outcome

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
        finally:
            progress.close()
    if not rows:
        print("litmus-rules: no episodes found in the inputs", file=sys.stderr)
        return EXIT_ERROR
    return _exit_code(r.verdict for r in rows)


def cmd_explain(args: argparse.Namespace) -> int:
    ruleset = _load(args)
    explain = "full" if args.full else "fails"
    spec = _spec(args, explain, want_text=True)
    with tempfile.TemporaryDirectory(prefix="litmus-") as tmp:
        for outcome in _outcomes(args, ruleset, spec, tmp):
            if outcome.id != args.id:
                continue
            if args.format == "json":
                _write(iter([render.render_json([outcome.json])]), None)
            else:
                print(outcome.text)
                if outcome.verdict == SCORED and not args.full:
                    print("(every rule passed; --full shows their traces)")
            return _exit_code([outcome.verdict])
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
    from litmus_rules import preflight
    preflight.register(sub)
    from litmus_rules import cli_authoring
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
    except KeyboardInterrupt:
        print("litmus-rules: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
