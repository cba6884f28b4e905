"""Build the one LALR parser, once per process (and, through the user's cache, once per grammar)."""

from __future__ import annotations

import functools

from lark import Lark

from litmus_rules._resources import grammar_path
from litmus_rules.lang.syntax._parser_cache import cached_parser

# Two start symbols: whole rule files, and single expressions (message placeholders).
_OPTIONS = {"parser": "lalr", "start": ["start", "expr"], "propagate_positions": True, "maybe_placeholders": True}


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    return cached_parser(grammar_path().read_text(encoding="utf-8"), dict(_OPTIONS))
