"""`litmus-rules lint`: load-time diagnostics and style warnings, with stable codes.

`lint -` reads one rule file from standard input (its diagnostics name it `<stdin>`). Warnings can
be silenced by code: `--ignore L402` (repeatable, or comma-separated) and the config's `ignore`
list; errors cannot (they are rules that do not load).

Exit status: 0 clean; 1 warnings only; 2 errors (rules that do not load) or misuse.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from litmus_rules.cli._terminal import emit, use_color, verbosity
from litmus_rules.render.text import paint_diagnostic
from litmus_rules.cli._common import (EXIT_FAIL, EXIT_MISUSE, EXIT_OK, PATHS_HELP, announce, config_defaults, guarded, identity,
                                      is_stdin_rules, project_config, rule_paths, ruleset_line)
from litmus_rules.config import RulesChoice, ignorable
from litmus_rules.errors import Diagnostic, LitmusConfigError
from litmus_rules.source import Source, Span


def _ignored(args: argparse.Namespace) -> set[str]:
    config = project_config()
    codes = set(config.ignore) if config is not None else set()
    for item in args.ignore or ():
        for code in filter(None, (c.strip().upper() for c in item.split(","))):
            problem = ignorable(code)
            if problem is not None:
                raise LitmusConfigError(f"--ignore: {problem}")
            codes.add(code)
    return codes


def _named(d: Diagnostic, stdin: Path) -> Diagnostic:
    """A diagnostic of the spooled standard input, named `<stdin>` as the user knows it."""
    if d.span is None or Path(d.span.source.name).resolve() != stdin.resolve():
        return d
    name = d.span.source.name

    def text(s: str | None) -> str | None:
        return s.replace(f"fmt {name}", "fmt -").replace(name, "<stdin>") if s is not None else None

    span = Span(Source("<stdin>", d.span.source.text), d.span.start, d.span.end)
    return d.replace(span=span, message=text(d.message), help=text(d.help))


def cmd_lint(args: argparse.Namespace) -> int:
    from litmus_rules.authoring import lint as authoring  # here: other commands start without the lints

    paths = rule_paths(args, announced=False)
    ignored = _ignored(args)
    reports = [authoring.lint_path(p) for p in paths]
    stdin = next((p for p in paths if is_stdin_rules(p)), None)
    diags = [d for r in reports for d in r.diagnostics if d.code not in ignored]
    if stdin is not None:
        diags = [_named(d, stdin) for d in diags]
    files = ["<stdin>" if stdin is not None and Path(f).resolve() == stdin.resolve() else f
             for r in reports for f in r.files]
    errors = sum(1 for d in diags if d.severity == "error")
    warnings = len(diags) - errors
    hidden = sum(len(r.diagnostics) for r in reports) - len(diags)
    chosen = getattr(args, "rules_choice", None)
    lines = [ruleset_line(c, *identity(c.path)) for c in ([chosen] if chosen else [RulesChoice(p, "given") for p in paths])]
    if args.format == "json":
        for line in lines:
            announce(args, line)
        summary: dict[str, Any] = {"errors": errors, "warnings": warnings, "files": files}
        if ignored:
            summary.update(ignored=sorted(ignored), hidden=hidden)
        doc = {"summary": summary, "diagnostics": [d.to_json() for d in diags]}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        color, quiet = use_color(args), verbosity(args) < 0
        out = [] if quiet else list(lines)
        out += [paint_diagnostic(d.render(), color) for d in diags]
        if not quiet:
            tail = f" ({hidden} ignored: {', '.join(sorted(ignored))})" if hidden else ""
            out.append(f"{errors} error(s), {warnings} warning(s){tail}")
        emit("".join(line + "\n" for line in out))
    return EXIT_MISUSE if errors else (EXIT_FAIL if warnings else EXIT_OK)


def register(sub: Any) -> None:
    lint = sub.add_parser("lint", help="load-time diagnostics and style warnings, with stable codes")
    lint.add_argument("paths", nargs="*", metavar="PATH", help=PATHS_HELP)
    lint.add_argument("--format", choices=("text", "json"), default="text")
    lint.add_argument("--ignore", action="append", metavar="CODE",
                      help="do not report this warning code (repeatable or comma-separated; adds to the config's `ignore`)")
    config_defaults(lint, "lint")
    lint.set_defaults(func=guarded(cmd_lint))
