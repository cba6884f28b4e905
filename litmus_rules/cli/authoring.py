"""The rule author's subcommands: `test`, `fmt`, `lint` and `rules info`.

Each handler returns the exit status: 0 all good; 1 a test failed, a file would change, lint found
warnings; 2 misuse, or rules (or test files) that do not load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from litmus_rules.authoring import lint as authoring
from litmus_rules.errors import LitmusError
from litmus_rules.render.text import render_rule_trace
from litmus_rules.authoring.ruletest import CaseResult, Coverage, TestRun, run_tests

__all__ = ["register"]

EXIT_OK, EXIT_FAIL, EXIT_MISUSE = 0, 1, 2


def _paths(args: argparse.Namespace) -> list[Path]:
    from litmus_rules._resources import default_rules_dir

    return [Path(p) for p in args.paths] if args.paths else [default_rules_dir()]


def _fail(message: str) -> int:
    print(f"litmus-rules: {message}", file=sys.stderr)
    return EXIT_MISUSE


# ---- test ----------------------------------------------------------------------------------------


def _render_failure(result: CaseResult) -> list[str]:
    case = result.case
    lines = [f"{case.file}:{case.line}: FAIL {case.name}"]
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


def _coverage_table(cov: Coverage) -> list[str]:
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
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
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


def cmd_test(args: argparse.Namespace) -> int:
    rules = Path(args.rules) if args.rules else None
    run = run_tests(_paths(args), rules=rules, select=args.k, coverage=args.coverage)
    if not run.results and not run.errors:
        return _fail("no rule test cases found")
    below = [c for c in run.coverage.values() if args.fail_under is not None and c.percent < args.fail_under]
    if args.format == "json":
        print(json.dumps(_test_json(run, args.coverage), ensure_ascii=False, indent=2))
    else:
        out: list[str] = []
        for error in run.errors:
            out.append(error.render())
        for result in run.results:
            if not result.passed:
                out.extend(_render_failure(result))
            elif args.verbose:
                out.append(f"{result.case.file}:{result.case.line}: ok {result.case.name}")
        if args.coverage:
            for cov in run.coverage.values():
                out.extend(_coverage_table(cov))
        errors = f", {len(run.errors)} error(s)" if run.errors else ""
        out.append(f"{run.passed} passed, {run.failed} failed{errors}")
        print("\n".join(out))
    for cov in below:
        print(f"litmus-rules: coverage {cov.percent:.1f}% is below --fail-under {args.fail_under:g}", file=sys.stderr)
    code = run.exit_code
    return EXIT_FAIL if code == EXIT_OK and below else code


# ---- fmt -----------------------------------------------------------------------------------------


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
        result = authoring.format_source(sys.stdin.read(), "<stdin>")
        if result.error is not None:
            print(result.error.render(), file=sys.stderr)
            return EXIT_MISUSE
        assert result.formatted is not None
        if args.diff:
            sys.stdout.write(authoring.unified_diff(result))
        elif not args.check:
            sys.stdout.write(result.formatted)
        return EXIT_FAIL if (args.check or args.diff) and result.changed else EXIT_OK
    files = [f for p in _paths(args) for f in authoring.discover_rule_files(p, include_tests=True)]
    if not files:
        return _fail("no `*.litmus` files found")
    changed = broken = 0
    for file in files:
        result = authoring.format_file(file)
        if result.error is not None:
            print(result.error.render(), file=sys.stderr)
            broken += 1
            continue
        if not result.changed:
            continue
        changed += 1
        if args.diff:
            sys.stdout.write(authoring.unified_diff(result))
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


# ---- lint ----------------------------------------------------------------------------------------


def cmd_lint(args: argparse.Namespace) -> int:
    reports = [authoring.lint_path(p) for p in _paths(args)]
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


# ---- rules info ----------------------------------------------------------------------------------


def _render_info(info: dict[str, Any]) -> str:
    lines = [f"ruleset {info['name']} version {info['version']}", f"hash    {info['hash']}"]
    lines.append("files   " + ", ".join(info["files"]))
    if info["params"]:
        lines += ["", "params"]
        decls = [(p["name"] + (f": {p['type']}" if p["type"] else ""), f"= {p['default']}", p) for p in info["params"]]
        w1, w2 = max(len(d[0]) for d in decls), max(len(d[1]) for d in decls)
        for name, default, p in decls:
            lines.append(f"  {name:<{w1}} {default:<{w2}}  {p['location']}")
    lines += ["", f"rules ({len(info['rules'])})"]
    for r in info["rules"]:
        lines.append(f"  {r['name']}  ({r['mode']}, {r['location']})")
        if r["cite"]:
            lines.append(f"      cite:   {r['cite']}")
        if r["tags"]:
            lines.append(f"      tags:   {', '.join(r['tags'])}")
        if r["params"]:
            lines.append(f"      params: {', '.join(r['params'])}")
    if info["classifiers"]:
        lines += ["", "classifiers"]
        for c in info["classifiers"]:
            lines.append(f"  {c['name']}: {', '.join(c['labels'])}  ({c['location']})")
    return "\n".join(lines) + "\n"


def cmd_rules_info(args: argparse.Namespace) -> int:
    info = authoring.ruleset_info(Path(args.path) if args.path else None)
    if args.format == "json":
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(_render_info(info))
    return EXIT_OK


def _guarded(handler: Any) -> Any:
    """Config errors (a missing path, a bad param) are misuse: exit 2 with the message."""

    def run(args: argparse.Namespace) -> int:
        try:
            return int(handler(args))
        except LitmusError as exc:
            if type(exc).__name__ in ("RuleCheckError", "LitmusSyntaxError"):
                raise  # cli.main renders these with every diagnostic
            print(f"litmus-rules: {exc}", file=sys.stderr)
            return EXIT_MISUSE

    return run


def register(sub: Any) -> None:
    """Add `test`, `fmt`, `lint` and `rules` to the `litmus-rules` subcommands."""
    paths_help = "rule files or folders (default: the shipped rules)"

    test = sub.add_parser("test", help="run the rule tests (YAML cases beside the rules)")
    test.add_argument("paths", nargs="*", metavar="PATH", help="test files or folders (default: the shipped rules)")
    test.add_argument("--rules", metavar="PATH", help="test against these rules instead of the ones beside the tests")
    test.add_argument("--coverage", action="store_true", help="report which rules, cells and lets were exercised")
    test.add_argument("--fail-under", type=float, metavar="PCT", help="with --coverage: exit 1 below this percentage")
    test.add_argument("--format", choices=("text", "json"), default="text")
    test.add_argument("-k", metavar="TEXT", help="only the cases whose name contains TEXT")
    test.add_argument("-v", "--verbose", action="store_true", help="list passing cases too")
    test.set_defaults(func=_guarded(cmd_test))

    fmt = sub.add_parser("fmt", help="rewrite rule files in the canonical layout")
    fmt.add_argument("paths", nargs="*", metavar="PATH", help=paths_help + "; - formats standard input")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    mode.add_argument("--diff", action="store_true", help="print the changes as a diff; exit 1 if any")
    fmt.set_defaults(func=_guarded(cmd_fmt))

    lint = sub.add_parser("lint", help="load-time diagnostics and style warnings, with stable codes")
    lint.add_argument("paths", nargs="*", metavar="PATH", help=paths_help)
    lint.add_argument("--format", choices=("text", "json"), default="text")
    lint.set_defaults(func=_guarded(cmd_lint))

    rules = sub.add_parser("rules", help="inspect a ruleset")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True)
    info = rules_sub.add_parser("info", help="name, version, content hash, rules, citations and params")
    info.add_argument("path", nargs="?", metavar="PATH", help="rule file or folder (default: the shipped rules)")
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(func=_guarded(cmd_rules_info))
