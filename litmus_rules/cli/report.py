"""`litmus-rules report VERDICTS.jsonl... [-o FILE] [--format html|md|json] [--by run.model,run.attack]`:
the audit report of verdicts written by `check --format jsonl` (or the `verdicts` of a
`check --format json` document). One streaming pass: no verdict is kept (render/report/compute.py).
The ABC checklist reads the `abc:` tags of the rules given by `--rules` (default: the shipped ones).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Iterator

from litmus_rules.cli._common import EXIT_OK, write
from litmus_rules.diagnostics import code_for
from litmus_rules.engine import stages
from litmus_rules.errors import FactsError
from litmus_rules.lang import ast
from litmus_rules._resources import default_rules_dir
from litmus_rules.render.json import dumps
from litmus_rules.render.report.compute import ReportBuilder
from litmus_rules.render.report.present import render_html, render_markdown
from litmus_rules.render.report.provenance import generated_at, input_hashes
from litmus_rules.render.report.summary import parse_by

FORMATS = ("html", "md", "json")


def read_verdicts(path: str) -> Iterator[dict[str, Any]]:
    """The verdicts of one file: JSON Lines, or one `check --format json` document."""
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise FactsError(f"cannot read `{path}`: {exc.strerror or exc}", source=path,
                         code=code_for("unreadable-input")) from None
    with fh:
        first = fh.readline()
        if first.strip() == b"{":  # an indented `check --format json` document
            try:
                doc = json.loads(first + fh.read())
            except (ValueError, UnicodeDecodeError) as exc:
                raise FactsError(f"not a JSON document: {exc}", source=path, code=code_for("unparseable-input")) from None
            verdicts = doc.get("verdicts") if isinstance(doc, dict) else None
            if not isinstance(verdicts, list):
                raise FactsError("a JSON document without `verdicts`", source=path, code=code_for("not-an-object"))
            yield from (v for v in verdicts if isinstance(v, dict))
            return
        line_no = 0
        for line in _chain(first, fh):
            line_no += 1
            if not line.strip():
                continue
            try:
                v = json.loads(line)
            except (ValueError, UnicodeDecodeError) as exc:
                raise FactsError(f"not a JSON verdict: {exc}", source=path, line=line_no,
                                 code=code_for("unparseable-input")) from None
            if not isinstance(v, dict) or "verdict" not in v:
                raise FactsError("not a verdict object (no `verdict` key)", source=path, line=line_no,
                                 code=code_for("not-an-object"))
            yield v


def _chain(first: bytes, rest: Any) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def rules_metadata(path: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each rule's name, tags and cite, and the ruleset's identity, from the rule files (parsed
    only: the checklist needs their metadata, not their meaning)."""
    sources = stages.find_and_read(Path(path) if path else default_rules_dir())
    trees = [stages.parse(text, name) for name, text in sources.texts]
    meta = [{"name": item.name, "tags": list(item.tags), "cite": item.cite}
            for tree in trees for item in tree.items if isinstance(item, ast.Rule)]
    first = trees[0]
    return meta, {"name": first.name, "version": first.version, "hash": stages.digest(sources.texts)}


def cmd_report(args: argparse.Namespace) -> int:
    fmt = args.format or _format_of(args.output)
    meta, identity = rules_metadata(args.rules)
    builder = ReportBuilder(parse_by(args.by), meta)
    for path in args.inputs:
        for v in read_verdicts(path):
            builder.add(v)
    hashes = {json.loads(k)["hash"] for k in builder.rulesets if json.loads(k)}
    identity["matches_verdicts"] = hashes == {identity["hash"]}
    report = builder.build(inputs=input_hashes(args.inputs), generated_at=generated_at(), checklist_source=identity)
    if fmt == "json":
        text = dumps(report, indent=2) + "\n"
    elif fmt == "html":
        text = render_html(report)
    else:
        text = render_markdown(report)
    write(iter([text]), args.output)
    return EXIT_OK


def _format_of(output: str | None) -> str:
    suffix = Path(output).suffix.lower() if output else ""
    return {".html": "html", ".htm": "html", ".json": "json"}.get(suffix, "md")


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="the audit report of verdicts: exclusion flow, naive vs validated rates, checklist")
    p.add_argument("inputs", nargs="+", metavar="VERDICTS", help="verdict files from `check --format jsonl` (or json)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    p.add_argument("--format", choices=FORMATS, help="default: from the -o suffix (.html, .json), else md")
    p.add_argument("--by", metavar="KEYS", help="group by these verdict keys, comma-separated (run.model,run.attack)")
    p.add_argument("--rules", metavar="PATH", help="the rules whose `abc:` tags map the checklist (default: shipped)")
    p.set_defaults(func=cmd_report)
