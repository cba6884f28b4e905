"""`litmus-rules check`: decide SCORED / REJECTED / ERROR for every episode of the inputs.

Formats: text (a summary and the traces of what was not scored), json, jsonl, and the CI reports
junit, sarif and github (`_check_formats.py`). On a terminal, a progress bar on stderr from the
start (`_terminal.Progress`), its total estimated from the bytes of input done and exact once
every unit is done.

When a reader closes a piped stdout early (`| head`), the output was not delivered in full: exit
2 with one line on stderr, no traceback, never 0 (a CI job with `pipefail` fails).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from litmus_rules.cli import _check_formats
from litmus_rules.cli._common import (
    EXIT_ERROR,
    add_rules_options,
    check_signals,
    config_defaults,
    exit_code,
    load,
    outcomes,
    quiet_stdout,
    spec,
    stoppable,
    write,
)
from litmus_rules.cli._engine import add_engine_options, check_engine_options, dask_outcomes
from litmus_rules.cli._terminal import (
    Progress,
    is_terminal,
    paint_verdict_lines,
    positive_int,
    use_color,
    verbosity,
)
from litmus_rules.cli.import_ import add_import_options, imported_outcomes
from litmus_rules.engine.batch import Outcome
from litmus_rules.errors import LitmusConfigError
from litmus_rules.engine.verdict import SCORED
from litmus_rules.render.text import counts_line, render_summary

if TYPE_CHECKING:
    from litmus_rules.render.report.summary import Summary

# The JSON writers (orjson, and through it uuid and datetime), the summary and the provenance are
# imported by the formats that write them: the text summary of one file starts without them.


class _Row:
    """What the summary keeps of an episode once its output is written: memory stays small. A
    plain slotted class (not attrs): one fewer generated class on every start."""

    __slots__ = ("id", "verdict", "rules", "classification", "source")

    def __init__(self, id: str | None, verdict: str, rules: tuple[str, ...], classification: str | None,
                 source: str | None = None) -> None:
        self.id = id
        self.verdict = verdict
        self.rules = rules
        self.classification = classification
        self.source = source  # "file:line": an ERROR row names its file (its id is often unknown)


def cmd_check(args: argparse.Namespace) -> int:
    check_engine_options(args)
    ruleset = load(args, header=args.format == "text")  # text: the ruleset line heads the summary
    if args.format in _check_formats.CI_FORMATS:
        args.no_traces = True  # the CI reports carry reasons and witnesses, never traces
    rules_spec = spec(args, args.explain, want_text=args.format == "text")
    to_stdout = args.output is None or args.output == "-"
    # A streamed format on the same terminal as the bar would interleave with it: no bar then.
    streamed = args.format not in ("text", "junit") and to_stdout and is_terminal(sys.stdout)
    progress = Progress(args, "checking", "episodes", allowed=not streamed)
    color = use_color(args) if to_stdout or getattr(args, "color", "auto") == "always" else False
    level = verbosity(args)
    rows: list[_Row] = []
    complete = False

    with stoppable(), tempfile.TemporaryDirectory(prefix="litmus-") as tmp:
        if args.from_format is not None:  # import on the fly (cli/import_.py), then check as any input
            found = imported_outcomes(args, ruleset, rules_spec, tmp)
        elif args.detector or args.run or args.option:
            raise LitmusConfigError("--detector, --run and --option apply to imported inputs: add --from FORMAT")
        elif args.engine == "dask":
            found = dask_outcomes(args, ruleset, rules_spec, tmp)
        else:
            found = outcomes(args, ruleset, rules_spec, tmp, progress.batch_hook() if progress.enabled else None)

        def tracked() -> Iterator[Outcome]:
            nonlocal complete
            for outcome in found:
                check_signals()
                source = outcome.json.get("source") if outcome.verdict == "ERROR" else None
                rows.append(_Row(outcome.id, outcome.verdict, outcome.rules, outcome.classification, source))
                progress.update(advance=1)
                yield outcome
            complete = True

        try:
            if args.format == "jsonl":
                from litmus_rules.render.json import json_line

                write((json_line(o.json) for o in tracked()), args.output)
            elif args.format in _check_formats.CI_FORMATS:
                write(_check_formats.chunks(args.format, tracked(), ruleset), args.output)
            elif args.format == "json":  # streamed: the summary, known last, is the last key
                from litmus_rules.render.report.provenance import provenance
                from litmus_rules.render.report.summary import Summary, parse_by

                summary = Summary(parse_by(args.by))
                write(_json_document(tracked(), summary, lambda: provenance(ruleset.info, args.inputs)), args.output)
            else:
                with _Spool(tmp) as traces:  # on disk until the summary table, written first, is known
                    for outcome in tracked():
                        if level >= 0 and outcome.text is not None and (
                                outcome.verdict != SCORED or args.explain == "full"):
                            traces.add(paint_verdict_lines(outcome.text, color))
                    progress.close()
                    if level < 0:  # -q: the outcome only
                        head = counts_line(rows) + "\n"
                        body: Iterator[str] = iter(())
                    else:
                        head = render_summary(rows, args.ruleset_line, color=color)
                        body = itertools.chain(("\n\n" + t for t in traces), ["\n"])
                    write(itertools.chain([head], body), args.output)  # in slices: a closed pipe raises
        except BrokenPipeError:
            quiet_stdout()
            state = "" if complete else f"; {len(rows)} episode(s) decided, the rest not checked"
            print(f"litmus-rules: the output was closed early (broken pipe){state}", file=sys.stderr)
            return EXIT_ERROR
        finally:
            if hasattr(found, "close"):
                found.close()  # stops the workers now, not when the generator is collected
            progress.close()
    if not rows:
        print("litmus-rules: no episodes found in the inputs", file=sys.stderr)
        return EXIT_ERROR
    if level > 0:
        print(f"litmus-rules: {counts_line(rows)} in {progress.elapsed():.2f} s "
              f"({len(rows) / max(progress.elapsed(), 1e-9):,.0f}/s)", file=sys.stderr)
    return exit_code(r.verdict for r in rows)


def _json_document(
    found: Iterator[Outcome], summary: Summary, extra: Callable[[], Mapping[str, Any]]
) -> Iterator[str]:
    """The `--format json` document, one verdict at a time: what `render_json` writes, with the
    summary (counted while the verdicts stream) as the last key instead of the first."""
    from litmus_rules.render.json import dumps

    yield '{\n  "verdicts": ['
    sep = "\n    "
    for outcome in found:
        summary.add(outcome.json)
        yield sep + dumps(outcome.json, indent=2).replace("\n", "\n    ")  # strings hold no raw newline
        sep = ",\n    "
    closing = "]" if sep == "\n    " else "\n  ]"
    yield closing + ',\n  "summary": ' + dumps({**summary.to_json(), **extra()}, indent=2).replace("\n", "\n  ") + "\n}\n"


class _Spool:
    """Texts kept in a file until they are written: length-prefixed, so any text survives."""

    def __init__(self, folder: str) -> None:
        self.fh = tempfile.TemporaryFile(dir=folder)

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.fh.close()

    def add(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate comes back as it went
        self.fh.write(b"%d\n" % len(data) + data)

    def __iter__(self) -> Iterator[str]:
        self.fh.seek(0)
        while size := self.fh.readline():
            yield self.fh.read(int(size)).decode("utf-8", "surrogatepass")


def register(sub: Any) -> None:
    check = sub.add_parser("check", help="decide SCORED / REJECTED / ERROR for every episode")
    check.add_argument("inputs", nargs="+", metavar="INPUT", help="episode files or folders; - for stdin")
    add_rules_options(check)
    check.add_argument("--format", choices=("text", "json", "jsonl", *_check_formats.CI_FORMATS), default="text",
                       help="text (default), json, jsonl; CI reports: junit (JUnit XML), sarif (SARIF 2.1.0), "
                            "github (GitHub Actions annotations)")
    check.add_argument("--explain", choices=("fails", "full"), default="fails", help="which traces to include")
    check.add_argument("--no-traces", action="store_true",
                       help="json/jsonl: verdicts without their traces (reasons, witnesses and messages stay; "
                            "a tenth of the size, what `report` reads)")
    check.add_argument("--by", metavar="KEYS",
                       help="with --format json: also count per group of these verdict keys (run.model,run.attack)")
    check.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    check.add_argument(
        "--jobs", type=positive_int, metavar="N",
        help="worker processes, at least 1 (default: all cores for inputs over 2 MiB, else 1)"
    )
    check.add_argument("--from", dest="from_format", metavar="FORMAT",
                       help="the inputs are a harness's own files: import them first (see `litmus-rules import`)")
    add_import_options(check)
    add_engine_options(check)
    check.set_defaults(func=cmd_check)
    config_defaults(check, "check")  # the project config's format and jobs; the command line wins
