"""`litmus-rules test`: run the rule tests (YAML cases beside the rules), with coverage.

Exit status: 0 every case passed; 1 a case failed, or coverage is below `--fail-under`; 2 misuse,
or rules (or test files) that do not load. `-x` stops at the first failure; `-v` lists passing
cases too; `-q` prints the failures and the closing line only. `--fail-under` without
`--coverage` is a usage error (it would otherwise be silently ignored).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from litmus_rules.cli._common import EXIT_FAIL, EXIT_OK, config_defaults, fail, guarded, rule_paths
from litmus_rules.cli._terminal import emit, paint, table, use_color, verbosity
from litmus_rules.render.text import render_rule_trace

if TYPE_CHECKING:  # the rule tests are imported when they run: other commands start without them
    from litmus_rules.authoring.ruletest import CaseResult, Coverage, TestRun


def _render_failure(result: CaseResult, color: bool = False) -> list[str]:
    case = result.case
    lines = [f"{case.file}:{case.line}: {paint('FAIL', 'red', color)} {case.name}"]
    shown: set[tuple[str, int]] = set()
    for p in result.problems:
        lines.append(f"  line {p.line}: {p.key}: expected {p.expected}, got {p.actual}")
    for p in result.problems:
        for trace in p.traces:
            key = (trace.rule, trace.span.start)
            if key in shown:
                continue
            shown.add(key)
            lines.append(f"  trace of `{trace.rule}` ({trace.outcome}):")
            lines.extend("    " + line for line in render_rule_trace(trace))
    return lines


def _coverage_table(cov: Coverage, color: bool = False) -> list[str]:
    info = cov.info
    lines = [f"coverage of {info.name} version {info.version}:"]
    header = ("kind", "name", "location", "true", "false", "unknown")
    rows = []
    for item in cov.items:
        cells = []
        for d in ("true", "false", "unknown"):
            needed = d in item.required or (d != "unknown" and "known" in item.required)
            cells.append(str(item.counts[d]) if needed or item.counts[d] else "-")
        rows.append((item.kind, item.name, item.location, *cells))
    lines.extend(table(rows, header, color=color, right=(3, 4, 5), indent=2))
    missing = cov.uncovered()
    if missing:
        lines.append(f"never exercised ({len(missing)}):")
        lines.extend("  " + m for m in missing)
    lines.append(f"coverage: {cov.covered}/{cov.total} directions ({cov.percent:.1f}%)")
    return lines


def _test_json(run: TestRun, with_coverage: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "summary": {"passed": run.passed, "failed": run.failed, "errors": len(run.errors)},
        "failures": [
            {
                "file": r.case.file,
                "line": r.case.line,
                "case": r.case.name,
                "problems": [
                    {"key": p.key, "line": p.line, "expected": p.expected, "actual": p.actual,
                     "traces": [t.to_json() for t in p.traces]}
                    for p in r.problems
                ],
            }
            for r in run.results
            if not r.passed
        ],
        "errors": [str(e) for e in run.errors],
    }
    if with_coverage:
        doc["coverage"] = [c.to_json() for c in run.coverage.values()]
    return doc


def validate(args: argparse.Namespace) -> str | None:
    """Option checks argparse cannot make alone (cli.main reports them as usage errors)."""
    if args.fail_under is not None and not args.coverage:
        return "--fail-under needs --coverage (it is a minimum coverage percentage)"
    if args.fail_under is not None and not 0 <= args.fail_under <= 100:
        return f"--fail-under takes a percentage from 0 to 100, got {args.fail_under:g}"
    return None


def cmd_test(args: argparse.Namespace) -> int:
    from litmus_rules.authoring.ruletest import run_tests

    rules = Path(args.rules) if args.rules else None
    run = run_tests(rule_paths(args), rules=rules, select=args.k, coverage=args.coverage, exitfirst=args.exitfirst)
    level, color = verbosity(args), use_color(args)
    if not run.results and not run.errors:
        return fail("no rule test cases found")
    below = [c for c in run.coverage.values() if args.fail_under is not None and c.percent < args.fail_under]
    if args.format == "json":
        emit(json.dumps(_test_json(run, args.coverage), ensure_ascii=False, indent=2) + "\n")
    else:
        out: list[str] = []
        for error in run.errors:
            out.append(error.render())
        for result in run.results:
            if not result.passed:
                out.extend(_render_failure(result, color))
            elif level > 0:
                out.append(f"{result.case.file}:{result.case.line}: {paint('ok', 'green', color)} {result.case.name}")
        if args.coverage:
            for cov in run.coverage.values():
                out.extend(_coverage_table(cov, color) if level >= 0 else
                           [f"coverage: {cov.covered}/{cov.total} directions ({cov.percent:.1f}%)"])
        errors = f", {len(run.errors)} error(s)" if run.errors else ""
        stopped = " (stopped at the first failure: -x)" if args.exitfirst and (run.failed or run.errors) else ""
        out.append(f"{run.passed} passed, {run.failed} failed{errors}{stopped}")
        emit("\n".join(out) + "\n")
    for cov in below:
        print(f"litmus-rules: coverage {cov.percent:.1f}% is below --fail-under {args.fail_under:g}", file=sys.stderr)
    code = run.exit_code
    return EXIT_FAIL if code == EXIT_OK and below else code


def register(sub: Any) -> None:
    test = sub.add_parser("test", help="run the rule tests (YAML cases beside the rules)")
    test.add_argument("paths", nargs="*", metavar="PATH", help="test files or folders (default: the shipped rules)")
    test.add_argument("--rules", metavar="PATH", help="test against these rules instead of the ones beside the tests")
    test.add_argument("--coverage", action="store_true", help="report which rules, cells and lets were exercised")
    test.add_argument("--fail-under", type=float, metavar="PCT", help="with --coverage: exit 1 below this percentage")
    test.add_argument("--format", choices=("text", "json"), default="text")
    test.add_argument("-k", metavar="TEXT", help="only the cases whose name contains TEXT")
    test.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failed case")
    test.set_defaults(func=guarded(cmd_test), validate=validate)
    config_defaults(test, "test")  # the project config's format; the command line wins
