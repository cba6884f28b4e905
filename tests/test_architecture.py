"""The dependency direction the README describes, checked on the source (imports only)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import litmus_rules

PACKAGE = Path(litmus_rules.__file__).resolve().parent


def imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def modules() -> dict[str, set[str]]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        out[name] = imports(path)
    return out


def importers(prefix: str) -> set[str]:
    return {m for m, deps in modules().items() if any(d == prefix or d.startswith(prefix + ".") for d in deps)}


def test_only_syntax_imports_lark() -> None:
    assert {m for m in importers("lark") if not m.startswith("litmus_rules.lang.syntax")} == set()


def test_only_the_loader_reads_json_schema_validation() -> None:
    assert importers("jsonschema") == {"litmus_rules.io.episode_schema"}


def test_yaml_is_read_and_written_only_at_the_edges() -> None:
    assert importers("yaml") <= {"litmus_rules.io.yamltext", "litmus_rules.preflight.run", "litmus_rules.authoring.ruletest",
                                 "litmus_rules.preflight.writeback"}


def test_the_evaluator_knows_neither_parser_nor_checker() -> None:
    evaluator = {m: d for m, d in modules().items() if m.startswith("litmus_rules.lang.evaluate")}
    for module, deps in evaluator.items():
        assert not {d for d in deps if d.startswith(("litmus_rules.lang.syntax", "litmus_rules.lang.checker"))}, module


def test_the_ast_depends_only_on_source() -> None:
    deps = {d for d in modules()["litmus_rules.lang.ast"] if d.startswith("litmus_rules")}
    assert deps <= {"litmus_rules.source", "litmus_rules.lang.records"}  # records: its node classes, not attrs
    records = {d for d in modules()["litmus_rules.lang.records"] if d.startswith("litmus_rules")}
    assert records == set()


def test_only_the_command_line_modules_print() -> None:
    printers = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print" for n in ast.walk(tree)):
            printers.add(path.relative_to(PACKAGE).parts[0])
    assert printers <= {"cli"}


def test_the_layer_contracts_hold() -> None:
    # import-linter reads its contracts from pyproject.toml: the layers the README describes
    lint_imports = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([lint_imports, "--no-cache"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
