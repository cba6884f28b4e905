"""`litmus-rules import FORMAT INPUT...`: what a harness wrote, as episode/1.1 JSONL; and the import
half of `litmus-rules check --from FORMAT`.

Output: one episode per line (stdout, or `-o FILE` written atomically). A record that cannot be
imported is printed on stderr as `file:position: error[CODE]: message` and the rest go on.
Exit status: 0 every record imported; 1 some record could not be (a located ERROR each); 2 misuse
(an unknown format or option, a `--detector` file that cannot be used, output over an input).

`check --from` imports into a temporary JSONL file first (memory stays flat: episodes go to disk,
and only one 8-byte offset per episode is kept to report its original location), then checks that
file as `check` checks any input, in parallel when it is large. Each verdict names the original
`file:position`; a record that could not be imported is an ERROR verdict in its input order.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from array import array
from typing import TYPE_CHECKING, Any, Iterator

from litmus_rules.cli._common import EXIT_FAIL, EXIT_OK, check_signals, guarded, stoppable, write
from litmus_rules.engine.batch import Outcome, RulesSpec, check_inputs
from litmus_rules.engine.ruleset import RuleSet
from litmus_rules.engine.verdict import ERROR, Reason, Verdict
from litmus_rules.errors import LitmusConfigError
from litmus_rules.lang.records import replace
from litmus_rules.render.text import render_verdict

if TYPE_CHECKING:
    from litmus_rules.io.importers import Options

# The importers' framework (io/importers) and the JSON writer are imported when a command imports:
# every command's parser is built at start, `check` on episode files included, and needs neither.
# The format names, for `import --help`, are io/importers' FORMATS (a test keeps them equal).
FORMAT_NAMES = ("inspect", "agentdojo", "injecagent", "garak", "mcp", "skills", "openai", "anthropic")


def _pairs(items: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise LitmusConfigError(f"{flag} takes KEY=VALUE, got `{item}`")
        out[key.strip()] = value
    return out


def options_from(args: argparse.Namespace, format: str) -> Options:
    from litmus_rules.io.importers import format_module, make_options

    module = format_module(format)
    return make_options(module, args.detector, _pairs(args.run, "--run"), _pairs(args.option, "--option"))


def add_import_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--detector", metavar="FILE",
                   help="YAML/JSON detector fragment merged into every episode's detector (what the format does not record)")
    p.add_argument("--run", action="append", metavar="KEY=VALUE", help="set run.KEY on every episode (repeatable)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="a format option (repeatable); see docs/importers.md")


def _check_inputs(inputs: list[str], output: str | None) -> None:
    if "-" in inputs:
        raise LitmusConfigError("import reads files and folders, not standard input (an .eval log is an archive)")
    if output and output != "-" and os.path.exists(output):
        for item in inputs:
            if os.path.exists(item) and os.path.samefile(item, output):
                raise LitmusConfigError(f"-o `{output}` is one of the inputs: it would be overwritten")


def cmd_import(args: argparse.Namespace) -> int:
    from litmus_rules.io.importers import iter_records
    from litmus_rules.render.json import dumps

    options = options_from(args, args.format)
    _check_inputs(args.inputs, args.output)
    problems = 0

    def lines() -> Iterator[str]:
        nonlocal problems
        for record in iter_records(args.format, args.inputs, options):
            check_signals()
            if record.episode is None:
                problems += 1
                print(record.render(), file=sys.stderr)
                continue
            yield dumps(record.episode) + "\n"

    with stoppable():
        write(lines(), args.output)
    if problems:
        print(f"litmus-rules: {problems} record(s) could not be imported", file=sys.stderr)
    return EXIT_FAIL if problems else EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import", help="read a harness's own files (Inspect, MCP, skills, provider chats, ...) as episode/1.1 JSONL",
        description="Read what a harness wrote as episode/1.1, one episode per line. A record that cannot be "
        "imported is a located ERROR on stderr and the rest go on. Exit 0: all imported; 1: some record could "
        "not be; 2: misuse.",
    )
    p.add_argument("format", metavar="FORMAT", help=f"one of: {', '.join(FORMAT_NAMES)}")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="the harness's files or folders")
    p.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here (atomically) instead of stdout")
    add_import_options(p)
    p.set_defaults(func=guarded(cmd_import))


# ---- check --from ---------------------------------------------------------------------------------


def imported_outcomes(args: argparse.Namespace, ruleset: RuleSet, spec: RulesSpec, tmp: str) -> Iterator[Outcome]:
    """The verdicts of every imported episode and an ERROR for every record that could not be
    imported, in input order, each naming its original location."""
    from litmus_rules.io.importers import iter_records
    from litmus_rules.render.json import dumps

    options = options_from(args, args.from_format)
    _check_inputs(args.inputs, None)
    episodes = os.path.join(tmp, "imported.jsonl")
    side = os.path.join(tmp, "imported.where")  # one line per record: where it came from, or its problem
    offsets = array("q")  # offset in `side` of each episode's line: its original location, on demand
    with open(episodes, "w", encoding="utf-8") as out, open(side, "w", encoding="utf-8") as where:
        for record in iter_records(args.from_format, args.inputs, options):
            check_signals()
            if record.episode is not None:
                offsets.append(where.tell())
                out.write(dumps(record.episode) + "\n")
                where.write(json.dumps(["E", record.location]) + "\n")
            else:
                where.write(json.dumps(["P", record.location, record.code, record.message]) + "\n")
    return _merged(args, ruleset, spec, episodes, side, offsets)


class _Side:
    """Reads the side file in step with the verdicts: the problems recorded before each episode."""

    def __init__(self, fh: Any) -> None:
        self.fh, self.episodes = fh, 0

    def before(self, episode: int | None, ruleset: RuleSet, spec: RulesSpec) -> Iterator[Outcome]:
        """The problems recorded before episode number `episode` (1-based; None: all that are left)."""
        while episode is None or self.episodes < episode:
            entry = self.fh.readline()
            if not entry:
                return
            item = json.loads(entry)
            if item[0] == "E":
                self.episodes += 1
            else:
                yield _problem_outcome(ruleset, spec, item[1], item[2], item[3])


def _merged(args: argparse.Namespace, ruleset: RuleSet, spec: RulesSpec, episodes: str, side: str,
            offsets: array) -> Iterator[Outcome]:
    pattern = re.compile(re.escape(episodes) + r":(\d+)")
    with open(side, encoding="utf-8") as where, open(side, encoding="utf-8") as lookup:
        problems = _Side(where)

        def location(line: int) -> str:
            lookup.seek(offsets[line - 1])
            return str(json.loads(lookup.readline())[1])

        def relocate(value: Any) -> Any:
            if isinstance(value, str):
                return pattern.sub(lambda m: location(int(m.group(1))), value) if episodes in value else value
            if isinstance(value, list):
                return [relocate(v) for v in value]
            if isinstance(value, dict):
                return {k: relocate(v) for k, v in value.items()}
            return value

        if offsets:
            for outcome in check_inputs(ruleset, spec, [episodes], jobs=getattr(args, "jobs", None)):
                found = pattern.fullmatch(str(outcome.json.get("source") or ""))
                if found:
                    yield from problems.before(int(found.group(1)), ruleset, spec)
                text = relocate(outcome.text) if outcome.text is not None else None
                yield replace(outcome, json=relocate(outcome.json), text=text)
        yield from problems.before(None, ruleset, spec)


def _problem_outcome(ruleset: RuleSet, spec: RulesSpec, location: str, code: str, message: str) -> Outcome:
    reason = Reason("input", f"{location}: {message}", "invalid_input", code=code)
    verdict = Verdict(id=None, verdict=ERROR, reasons=(reason,), ruleset=ruleset.info, source=location)
    text = render_verdict(verdict, spec.explain) if spec.want_text else None
    return Outcome(None, ERROR, ("input",), None, verdict.to_json(), text)
