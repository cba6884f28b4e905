"""`litmus-rules rules info`: a ruleset's name, version, content hash, rules, citations and params."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from litmus_rules.authoring import lint as authoring
from litmus_rules.cli._common import (EXIT_OK, RULES_HELP, announce, choose_rules, config_defaults, guarded,
                                      is_stdin_rules, ruleset_line)


def _render_info(info: dict[str, Any]) -> str:
    lines = ["files   " + ", ".join(info["files"])]  # after the ruleset line: name, version, hash, path
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
    choice = choose_rules(args, args.path)
    info = authoring.ruleset_info(choice.path)
    line = ruleset_line(choice, info["name"], info["version"], info["hash"])
    if args.format == "json":
        announce(args, line)
        info["path"] = "<stdin>" if is_stdin_rules(choice.path) else str(choice.path)
        info["chosen"] = choice.how  # given | config | found | shipped
        if choice.config is not None:
            info["config"] = choice.config.to_json()
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(line + "\n" + _render_info(info))
    return EXIT_OK


def register(sub: Any) -> None:
    rules = sub.add_parser("rules", help="inspect a ruleset")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True)
    info = rules_sub.add_parser("info", help="name, version, content hash, rules, citations and params")
    info.add_argument("path", nargs="?", metavar="PATH", help=RULES_HELP)
    info.add_argument("--format", choices=("text", "json"), default="text")
    config_defaults(info, "rules")
    info.set_defaults(func=guarded(cmd_rules_info))
