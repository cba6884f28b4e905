"""`fmt`: the canonical layout of a rule file (lang/printer.py), as a result the CLI shows or writes."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import attrs

from litmus_rules.engine import stages
from litmus_rules.errors import LitmusSyntaxError
from litmus_rules.lang import ast
from litmus_rules.lang.printer import format_ruleset

__all__ = ["FormatResult", "display_path", "format_file", "format_source", "unified_diff"]


def display_path(path: Path) -> str:
    """Paths as the user would type them: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


@attrs.frozen
class FormatResult:
    path: str
    original: str
    formatted: str | None  # None when the file does not parse
    error: LitmusSyntaxError | None = None
    tree: ast.RuleSet | None = attrs.field(default=None, eq=False, repr=False)  # the parse stage's output

    @property
    def changed(self) -> bool:
        return self.formatted is not None and self.formatted != self.original


def format_file(path: Path, name: str | None = None) -> FormatResult:
    shown = name or display_path(path)
    return format_source(stages.read(path, shown), shown)


def format_source(text: str, name: str) -> FormatResult:
    try:
        tree = stages.parse(text, name)
        return FormatResult(name, text, format_ruleset(tree), tree=tree)
    except LitmusSyntaxError as exc:
        return FormatResult(name, text, None, exc)


def unified_diff(result: FormatResult) -> str:
    assert result.formatted is not None
    lines = difflib.unified_diff(
        result.original.splitlines(keepends=True),
        result.formatted.splitlines(keepends=True),
        f"{result.path} (original)",
        f"{result.path} (formatted)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
