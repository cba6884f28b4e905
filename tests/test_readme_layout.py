"""The README's "How it works" names modules that exist, and every top-level module of the package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import litmus_rules

PACKAGE = Path(litmus_rules.__file__).resolve().parent
README = Path(__file__).resolve().parents[1] / "README.md"


def section() -> str:
    if not README.exists():
        pytest.skip("no README next to the tests")
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## How it works\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def package_path(name: str) -> Path:
    return PACKAGE.parent / name


def test_every_module_path_it_names_exists() -> None:
    named = [s for s in code_spans(section()) if s.startswith("litmus_rules/")]
    assert named, "the section names no module"
    missing = [s for s in named if not package_path(s.rstrip("/")).exists()]
    assert missing == []


def test_every_bare_module_in_a_table_row_is_in_that_row_s_folders() -> None:
    rows = [line for line in section().splitlines() if line.startswith("| ") and "litmus_rules/" in line]
    assert rows
    for row in rows:
        spans = code_spans(row)
        folders = [package_path(s.rstrip("/")) for s in spans if s.startswith("litmus_rules/") and s.endswith("/")]
        bare = [s for s in spans if re.fullmatch(r"[\w.]+\.py|[\w]+/", s)]
        for name in bare:
            assert any((f / name.rstrip("/")).exists() for f in folders) or (PACKAGE / name.rstrip("/")).exists(), (name, row)


def test_every_top_level_module_and_layer_is_named() -> None:
    text = section()
    top = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    top |= {p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    unnamed = [name for name in sorted(top) if f"litmus_rules/{name}" not in text and f"`{name}`" not in text]
    assert unnamed == []


def test_the_where_to_add_lines_name_existing_modules() -> None:
    text = section()
    lines = text[text.index("Where to add:"):].splitlines()[1:]
    entries = [line for line in lines if line.startswith("- ")]
    assert len(entries) >= 5
    for line in entries:
        for span in code_spans(line):
            if span.startswith("litmus_rules/"):
                assert package_path(span.rstrip("/")).exists(), (span, line)
            elif span.startswith("rules/"):
                assert (README.parent / span).exists(), (span, line)
