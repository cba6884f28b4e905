"""The preflight summary a user reads: a text summary (stderr) or JSON (`--format json`), from a
Report of `run.py`. Findings marked `x` are what `check` will reject for; `!` marks a warning.

The text is a summary: the counts per finding and the instances that have findings. The table of
every instance's control labels (one row per instance: hundreds of rows) is shown with `-v`
(`verbose`); `--format json` always has every instance."""

from __future__ import annotations

import json

from litmus_rules.preflight import stubs
from litmus_rules.preflight.run import CONTROLS, FINDINGS, WARNINGS, Report
from litmus_rules.render.text import table


def render_text(report: Report, verbose: bool = False, color: bool = False) -> str:
    n = len(report.results)
    per = f", {1000 * sum(r.seconds for r in report.results) / n:.1f} ms per instance" if n else ""
    lines = [f"preflight: stubs v{stubs.STUB_VERSION}, scorer: {report.scorer}, {n} instance(s) "
             f"in {report.seconds:.2f} s{per} -> {report.output}", ""]
    counts = [("instances", str(n)), *((FINDINGS[f], str(report.count(f))) for f in FINDINGS),
              ("unusable inputs", str(len(report.input_errors)))]
    lines += table(counts, ("finding", "instances"), color=color)
    scorers: dict[str, int] = {}
    for r in report.results:
        if r.detector_scorer is not None:
            name = r.detector_scorer["name"] + (f" ({r.detector_scorer['kind']})" if isinstance(
                r.detector_scorer.get("kind"), str) else "")
            scorers[name] = scorers.get(name, 0) + 1
    if scorers:  # episode/1.1 `detector.scorer`: which harness scorer each instance names
        lines += ["", *table([(k, str(v)) for k, v in sorted(scorers.items())],
                             ("harness scorer (detector.scorer)", "instances"), color=color)]
        if report.scorer == "declared detector":
            lines.append("(runs were labelled by the declared signals, not by these scorers: "
                         "--scorer runs yours)")
    if report.results and verbose:
        rows = []
        for r in report.results:
            cells = [("?" if (label := r.labels[c]) is None else label) + ("*" if c in r.kept else "") for c in CONTROLS]
            rows.append([r.id, *cells, ", ".join(FINDINGS[f] for f in r.findings) or "-"])
        lines += ["", *table(rows, ("id", "null", "positive", "refusal", "compliance", "empty", "dump", "findings"),
                             color=color)]
        if any(r.kept for r in report.results):
            lines.append("* the harness's run, kept (episode/1.1: not `source: stub`); "
                         "--replace-controls replaces it with the stub's")
    elif report.results:
        lines.append("(-v lists every instance's control labels; --format json has them too)")
    seen: dict[str, str] = {}
    for r in report.results:
        if not r.findings:
            continue
        lines += ["", f"{r.id}  ({r.source})"]
        for kind, details in r.findings.items():
            mark = "!" if kind in WARNINGS else "x"  # ! is a warning: `check` does not reject for it
            lines.append(f"  {mark} {FINDINGS[kind]}: {'; '.join(details)}")
        for f in r.failures:
            if not f.traceback:  # no traceback: the scorer timed out, exited or returned a non-label
                continue
            first = seen.setdefault(f.traceback, f"{r.id} ({f.control} run)")
            if first != f"{r.id} ({f.control} run)":
                lines.append(f"    {f.control} run: same traceback as {first}")
            else:
                lines += [f"    {f.control} run:", *("      " + t for t in f.traceback.rstrip().splitlines())]
    for e in report.input_errors:
        lines.append(f"\nunusable input: {e['message']}")
    for file in report.files:
        if file["status"] != "written":
            lines.append(f"{file['source']}: {file['status']} to {file['output']} (it has unusable documents)")
    return "\n".join(lines) + "\n"


def render_json(report: Report) -> str:
    doc = {
        "stub_version": stubs.STUB_VERSION, "scorer": report.scorer, "output": report.output,
        "replace_controls": report.replace_controls, "seconds": round(report.seconds, 6),
        "counts": {"instances": len(report.results), **{f: report.count(f) for f in FINDINGS},
                   "unusable_inputs": len(report.input_errors)},
        "instances": [r.to_json() for r in report.results],
        "input_errors": report.input_errors, "files": report.files, "exit_code": report.exit_code(),
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
