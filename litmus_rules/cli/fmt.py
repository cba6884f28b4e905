"""`litmus-rules fmt`: rewrite rule files in the canonical layout (or, with --check / --diff, say
which would change).

Exit status: 0 nothing (left) to change; 1 with --check or --diff, a file would change; 2 misuse,
or a file with syntax errors.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from litmus_rules.authoring import fmt as formatter
from litmus_rules.engine.stages import find as discover_rule_files
from litmus_rules.cli._common import EXIT_FAIL, EXIT_MISUSE, EXIT_OK, PATHS_HELP, fail, guarded, rule_paths


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".litmus-fmt-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def cmd_fmt(args: argparse.Namespace) -> int:
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
    files = [f for p in rule_paths(args) for f in discover_rule_files(p, include_tests=True)]
    if not files:
        return fail("no `*.litmus` files found")
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
            _write_atomically(file, result.formatted)
            print(f"reformatted {result.path}")
    verb = "would be reformatted" if args.check or args.diff else "reformatted"
    print(f"{changed} file(s) {verb}, {len(files) - changed - broken} unchanged"
          + (f", {broken} with syntax errors" if broken else ""), file=sys.stderr)
    if broken:
        return EXIT_MISUSE
    return EXIT_FAIL if (args.check or args.diff) and changed else EXIT_OK


def register(sub: Any) -> None:
    fmt = sub.add_parser("fmt", help="rewrite rule files in the canonical layout")
    fmt.add_argument("paths", nargs="*", metavar="PATH", help=PATHS_HELP + "; - formats standard input")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    mode.add_argument("--diff", action="store_true", help="print the changes as a diff; exit 1 if any")
    fmt.set_defaults(func=guarded(cmd_fmt))
