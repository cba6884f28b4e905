"""`litmus-rules fmt`: rewrite rule files in the canonical layout (or, with --check / --diff, say
which would change).

Exit status: 0 nothing (left) to change; 1 with --check or --diff, a file would change; 2 misuse,
or a file with syntax errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from litmus_rules.atomic import write_text
from litmus_rules.cli._common import (EXIT_FAIL, EXIT_MISUSE, EXIT_OK, PATHS_HELP, fail, guarded, identity, rule_paths,
                                      ruleset_line)
from litmus_rules.config import installed_package
from litmus_rules.diagnostics import code_for, lookup
from litmus_rules.engine.stages import find as discover_rule_files

INSTALLED = code_for("write-into-installed-package")


def _installed(files: list[Path]) -> int | None:
    """Rule files inside an installed package are the package's: an edit there is lost on the next
    install, and the checkout's copy (the one to edit) stays as it was. Exit 2 before any write."""
    from litmus_rules.authoring.fmt import display_path

    for file in files:
        where = installed_package(file)
        if where is not None:
            entry = lookup(INSTALLED)
            print(f"litmus-rules: error[{INSTALLED}]: {entry.message(path=display_path(file))} ({where})\n"
                  f"     = help: {entry.help}", file=sys.stderr)
            return EXIT_MISUSE
    return None


def cmd_fmt(args: argparse.Namespace) -> int:
    from litmus_rules.authoring import fmt as formatter  # here: other commands start without the printer

    if args.paths == ["-"]:
        result = formatter.format_source(sys.stdin.read(), "<stdin>")
        if result.error is not None:
            print(result.error.render(), file=sys.stderr)
            return EXIT_MISUSE
        assert result.formatted is not None
        if args.diff:
            sys.stdout.write(formatter.unified_diff(result))
        elif not args.check:
            sys.stdout.write(result.formatted)
        return EXIT_FAIL if (args.check or args.diff) and result.changed else EXIT_OK
    paths = rule_paths(args, announced=False)
    choice = getattr(args, "rules_choice", None)
    if choice is not None:  # the rules were not named: say which ones are formatted
        print(ruleset_line(choice, *identity(choice.path)), file=sys.stderr)
    files = [f for p in paths for f in discover_rule_files(p, include_tests=True)]
    if not files:
        return fail("no `*.litmus` files found")
    refused = None if args.check or args.diff else _installed(files)
    if refused is not None:
        return refused
    changed = broken = 0
    for file in files:
        result = formatter.format_file(file)
        if result.error is not None:
            print(result.error.render(), file=sys.stderr)
            broken += 1
            continue
        if not result.changed:
            continue
        changed += 1
        if args.diff:
            sys.stdout.write(formatter.unified_diff(result))
        elif args.check:
            print(f"would reformat {result.path}")
        else:
            assert result.formatted is not None
            write_text(file, result.formatted, newline="")
            print(f"reformatted {result.path}")
    verb = "would be reformatted" if args.check or args.diff else "reformatted"
    print(f"{changed} file(s) {verb}, {len(files) - changed - broken} unchanged"
          + (f", {broken} with syntax errors" if broken else ""), file=sys.stderr)
    if broken:
        return EXIT_MISUSE
    return EXIT_FAIL if (args.check or args.diff) and changed else EXIT_OK


def register(sub: Any) -> None:
    fmt = sub.add_parser("fmt", help="rewrite rule files in the canonical layout")
    fmt.add_argument("paths", nargs="*", metavar="PATH", help=PATHS_HELP)
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    mode.add_argument("--diff", action="store_true", help="print the changes as a diff; exit 1 if any")
    fmt.set_defaults(func=guarded(cmd_fmt))
