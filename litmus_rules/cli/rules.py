"""`litmus-rules rules info`: a ruleset's name, version, content hash, rules, citations and params."""

from __future__ import annotations

import argparse
import json
from typing import Any

from litmus_rules.cli._common import (EXIT_OK, RULES_HELP, announce, choose_rules, config_defaults, guarded,
                                      is_stdin_rules, ruleset_line)
from litmus_rules.cli._terminal import emit, use_color
from litmus_rules.render.text import render_rules_info


def cmd_rules_info(args: argparse.Namespace) -> int:
    from litmus_rules.authoring import lint as authoring  # here: other commands start without the lints

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
        emit(render_rules_info(info, color=use_color(args), heading=line))
    return EXIT_OK


def register(sub: Any) -> None:
    rules = sub.add_parser("rules", help="inspect a ruleset")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True)
    info = rules_sub.add_parser("info", help="name, version, content hash, rules, citations and params")
    info.add_argument("path", nargs="?", metavar="PATH", help=RULES_HELP)
    info.add_argument("--format", choices=("text", "json"), default="text")
    config_defaults(info, "rules")
    info.set_defaults(func=guarded(cmd_rules_info))
