"""`litmus-rules`: the command line. The only module that prints or exits.

Exit status (contract): 0 every episode SCORED; 1 any REJECTED; 2 any ERROR, or the command was
misused (bad arguments, rules that do not load).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from typing import Any, Iterator, Sequence, TextIO

from litmus_rules import render
from litmus_rules.engine import RuleSet, load_rules
from litmus_rules.errors import FactsError, LitmusError, RuleCheckError
from litmus_rules.verdict import ERROR, REJECTED, SCORED, Reason, Verdict

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


def _error_verdict(ruleset: RuleSet, error: FactsError, ident: str | None, source: str) -> Verdict:
    return Verdict(
        id=ident,
        verdict=ERROR,
        reasons=(Reason("input", str(error), "invalid_input"),),
        ruleset=ruleset.info,
        source=source,
    )


def _episodes(inputs: Sequence[str], stdin_text: str | None) -> Iterator[Any]:
    from litmus_rules.load import iter_episodes

    stdin = io.StringIO(stdin_text) if stdin_text is not None else None
    return iter_episodes(inputs, stdin=stdin)


def _location(loaded: Any) -> str:
    return f"{loaded.source}:{loaded.line}" if loaded.line else str(loaded.source)


def iter_verdicts(ruleset: RuleSet, inputs: Sequence[str], explain: str = "fails") -> Iterator[Verdict]:
    """Evaluate every episode of the inputs, in input order, streaming.

    Two passes: the first reads only ids and canaries (the batch facts), the second evaluates, so a
    large batch is never held in memory. Standard input is read once and replayed.
    """
    stdin_text = sys.stdin.read() if "-" in inputs else None
    owners: dict[str, list[str]] = {}
    first_seen: dict[str, str] = {}
    for loaded in _episodes(inputs, stdin_text):
        if loaded.data is None:
            continue
        ident = loaded.data.get("id")
        for canary in loaded.data.get("canaries") or ():
            ids = owners.setdefault(canary.get("value"), [])
            if ident not in ids:
                ids.append(ident)
    batch = {"canary_owners": owners}
    for loaded in _episodes(inputs, stdin_text):
        location = _location(loaded)
        if loaded.error is not None:
            yield _error_verdict(ruleset, loaded.error, loaded.id, location)
            continue
        ident = loaded.data["id"]
        if ident in first_seen:
            dup = FactsError(
                f"duplicate id `{ident}` (first seen at {first_seen[ident]}); ids must be unique in a batch",
                source=loaded.source,
                line=loaded.line,
                pointer="/id",
            )
            yield _error_verdict(ruleset, dup, ident, location)
            continue
        first_seen[ident] = location
        yield ruleset.evaluate(loaded.data, batch=batch, explain=explain, validate=False, source=location)


def _exit_code(verdicts: Sequence[Verdict]) -> int:
    kinds = {v.verdict for v in verdicts}
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


def cmd_check(args: argparse.Namespace) -> int:
    ruleset = _load(args)
    progress = _Progress(sys.stderr)
    verdicts: list[Verdict] = []

    def tracked() -> Iterator[Verdict]:
        for v in iter_verdicts(ruleset, args.inputs, args.explain):
            verdicts.append(v) if args.format != "jsonl" else verdicts.append(_light(v))
            progress.tick(len(verdicts))
            yield v

    try:
        if args.format == "jsonl":
            _write(render.render_jsonl(tracked()), args.output)
        else:
            for _ in tracked():
                pass
            text = render.render_json(verdicts) if args.format == "json" else render.render_text(verdicts, args.explain)
            _write(iter([text]), args.output)
    finally:
        progress.close()
    if not verdicts:
        print("litmus-rules: no episodes found in the inputs", file=sys.stderr)
        return EXIT_ERROR
    return _exit_code(verdicts)


def _light(v: Verdict) -> Verdict:
    """For streamed output keep only what the exit code needs, so memory stays flat."""
    return Verdict(id=v.id, verdict=v.verdict)


def cmd_explain(args: argparse.Namespace) -> int:
    ruleset = _load(args)
    for v in iter_verdicts(ruleset, args.inputs, "full" if args.full else "fails"):
        if v.id == args.id:
            if args.format == "json":
                _write(iter([render.render_json([v])]), None)
            else:
                print(render.render_verdict(v, "full" if args.full else "fails"))
                if v.verdict == SCORED and not args.full:
                    print("(every rule passed; --full shows their traces)")
            return _exit_code([v])
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
