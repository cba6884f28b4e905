"""`litmus-rules report VERDICTS.jsonl... [-o FILE] [--format html|md|json] [--by run.model,run.attack]`:
the audit report of verdicts written by `check --format jsonl` (or the `verdicts` of a
`check --format json` document). One streaming pass: no verdict is kept (render/report/compute.py).
The ABC checklist reads the `abc:` tags of the rules given by `--rules` (default: the shipped ones).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from litmus_rules.cli._common import EXIT_OK, choose_rules, stoppable, write
from litmus_rules.engine import stages
from litmus_rules.lang import ast
from litmus_rules._resources import default_rules_dir

FORMATS = ("html", "md", "json")

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
    # imported here: other commands start without the report's charts and templates
    from litmus_rules.render.report.compute import ReportBuilder
    from litmus_rules.io.verdicts import read_verdicts
    from litmus_rules.render.report.present import render_html, render_markdown
    from litmus_rules.render.json import dumps  # orjson, uuid and datetime: not on every start either
    from litmus_rules.render.report.provenance import generated_at
    from litmus_rules.render.report.summary import parse_by

    fmt = args.format or _format_of(args.output)
    meta, identity = rules_metadata(str(choose_rules(args, args.rules).path))
    builder = ReportBuilder(parse_by(args.by), meta)
    inputs = []
    with stoppable():  # SIGINT/SIGTERM: exit 130/143 with one line, the hashing thread stopped
        for path in args.inputs:
            digest = hashlib.sha256()
            for v in read_verdicts(path, digest):
                builder.add(v)
            inputs.append({"path": path if path == "-" else str(Path(path)), "sha256": "sha256:" + digest.hexdigest()})
    hashes = {r.get("hash") if isinstance(r, dict) else None for r in map(json.loads, builder.rulesets)}
    identity["matches_verdicts"] = hashes == {identity["hash"]}
    report = builder.build(inputs=inputs, generated_at=generated_at(), checklist_source=identity)
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
    p.add_argument("--rules", metavar="PATH", help="the rules whose `abc:` tags map the checklist (default: as every command chooses: config, rules/ upward, shipped)")
    p.set_defaults(func=cmd_report)
