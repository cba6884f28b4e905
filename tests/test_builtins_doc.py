"""docs/builtins.md is generated from the built-in registry: it is current, every built-in is
documented (and nothing else), and every example is a rule condition that checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from litmus_rules.authoring import builtin_docs
from litmus_rules.engine import stages
from litmus_rules.lang import ast
from litmus_rules.lang.builtins import signature
from litmus_rules.lang.syntax import parse

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "builtins.md"


def test_the_page_is_what_the_registry_generates() -> None:
    assert PAGE.read_text(encoding="utf-8") == builtin_docs.render(), (
        "docs/builtins.md is stale: run `python -m litmus_rules.authoring.builtin_docs > docs/builtins.md`"
    )


def test_every_registered_built_in_has_notes_and_every_note_a_built_in() -> None:
    registered = set(builtin_docs.registry())
    documented = set(builtin_docs.NOTES)
    assert registered - documented == set(), "built-ins without notes in authoring/builtin_docs.py"
    assert documented - registered == set(), "notes for built-ins that are not registered"


def test_the_page_shows_each_signature_from_the_registry() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for b in builtin_docs.registry().values():
        assert f"## `{b.name}`\n\n```\n{signature(b)}\n```" in page


@pytest.mark.parametrize("name", sorted(builtin_docs.NOTES))
def test_each_example_is_a_condition_that_checks_and_calls_its_built_in(name: str) -> None:
    example = builtin_docs.NOTES[name].example
    tree = parse(f'ruleset example version "1"\nrule example reject when {example}\n', "example.litmus")
    checked = stages.check(tree)
    errors = [d for d in checked.diagnostics if d.severity == "error" or d.code == "L209"]
    assert errors == [], [d.render() for d in errors]
    calls = {n.func for n in ast.walk(tree.rules[0].condition) if isinstance(n, ast.Call)}
    assert name in calls


def test_a_stale_page_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    notes = dict(builtin_docs.NOTES)
    notes["len"] = builtin_docs.Note("1 unit", "len(canaries) > 1")
    monkeypatch.setattr(builtin_docs, "NOTES", notes)
    assert PAGE.read_text(encoding="utf-8") != builtin_docs.render()


def test_the_module_prints_the_page() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "litmus_rules.authoring.builtin_docs"], capture_output=True, text=True, check=True,
        cwd=ROOT,
    )
    assert out.stdout == builtin_docs.render()

