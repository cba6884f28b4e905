"""Build the one LALR parser, once per process."""

from __future__ import annotations

import functools

from lark import Lark

from litmus_rules._resources import grammar_path


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    # Two start symbols: whole rule files, and single expressions (message placeholders).
    return Lark(
        grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        start=["start", "expr"],
        propagate_positions=True,
        maybe_placeholders=True,
    )
