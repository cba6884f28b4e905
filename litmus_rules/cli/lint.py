"""`litmus-rules lint`: load-time diagnostics and style warnings, with stable codes.

Exit status: 0 clean; 1 warnings only; 2 errors (rules that do not load) or misuse.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from litmus_rules.authoring import lint as authoring
from litmus_rules.cli._common import EXIT_FAIL, EXIT_MISUSE, EXIT_OK, PATHS_HELP, guarded, rule_paths


def cmd_lint(args: argparse.Namespace) -> int:
    reports = [authoring.lint_path(p) for p in rule_paths(args)]
    diags = [d for r in reports for d in r.diagnostics]
    errors = sum(r.errors for r in reports)
    warnings = sum(r.warnings for r in reports)
    if args.format == "json":
        doc = {"summary": {"errors": errors, "warnings": warnings, "files": [f for r in reports for f in r.files]},
               "diagnostics": [d.to_json() for d in diags]}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        for d in diags:
            print(d.render())
        print(f"{errors} error(s), {warnings} warning(s)")
    return EXIT_MISUSE if errors else (EXIT_FAIL if warnings else EXIT_OK)


def register(sub: Any) -> None:
    lint = sub.add_parser("lint", help="load-time diagnostics and style warnings, with stable codes")
    lint.add_argument("paths", nargs="*", metavar="PATH", help=PATHS_HELP)
    lint.add_argument("--format", choices=("text", "json"), default="text")
    lint.set_defaults(func=guarded(cmd_lint))
