"""The one diagnostic catalogue: well formed, the only place a code is defined, and the docs agree with it."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

import litmus_rules
from litmus_rules.authoring.lint import LOADER_CODES, STYLE_CODES, lint_path
from litmus_rules.diagnostics import CATALOGUE, SEVERITIES, STAGES, code_for, inline, lookup, message
from litmus_rules.errors import Diagnostic
from litmus_rules.lang.checker import CODES

PACKAGE = Path(litmus_rules.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[1]  # the checkout: docs are not installed with the package
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = re.compile(r"^L[1-7]\d\d$")
# which stages may report in each range: L1xx syntax, L2xx check, L3xx input, L4xx style, L6xx evaluation, L7xx config
RANGES = {"1": {"parser"}, "2": {"checker", "loader"}, "3": {"input", "batch"}, "4": {"style"},
          "6": {"evaluation", "batch"}, "7": {"config", "test"}}


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_entry_is_well_formed() -> None:
    titles = [c.title for c in CATALOGUE.values()]
    assert len(titles) == len(set(titles)), "titles are unique"
    for code, entry in CATALOGUE.items():
        assert entry.code == code and CODE.match(code), code
        assert entry.severity in SEVERITIES and entry.stage in STAGES, code
        assert entry.stage in RANGES[code[1]], f"{code} is reported by {entry.stage}, outside its range"
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", entry.title), code
        assert entry.summary and entry.template and not entry.summary[0].isupper() and not entry.summary.endswith(".")
        # every template fills from its own field names, and no message names a Python class
        filled = entry.message(**{name: f"<{name}>" for name in fields(entry.template)})
        assert not re.search(r"\b[A-Z][a-z]+(Error|Exception)\b", filled + (entry.help or "")), code
        assert code_for(entry.title) == code and lookup(code) is entry


def test_a_code_or_title_missing_from_the_catalogue_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="L999"):
        lookup("L999")
    with pytest.raises(KeyError, match="no-such-title"):
        code_for("no-such-title")


def test_the_checker_and_lint_tables_are_views_of_the_catalogue() -> None:
    assert CODES == {c: (e.severity, e.title) for c, e in CATALOGUE.items() if e.stage == "checker"}
    assert STYLE_CODES == {c: (e.severity, e.title, e.summary) for c, e in CATALOGUE.items() if e.stage == "style"}
    assert set(LOADER_CODES) == set(CODES) | {code_for("syntax-error"), code_for("header-mismatch")}


def _definitions(path: Path) -> list[str]:
    """Code literals that *define* a code: assigned to a name, or a key of a dict literal."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        values: list[ast.expr | None] = []
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            values = [node.value]
        elif isinstance(node, ast.Dict):
            values = list(node.keys)
        found += [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str) and CODE.match(v.value)]
    return found


def test_codes_are_defined_only_in_the_catalogue() -> None:
    defined = {str(p.relative_to(PACKAGE)): d for p in PACKAGE.rglob("*.py") if (d := _definitions(p))}
    assert defined == {}


def test_every_code_literal_in_the_package_is_in_the_catalogue() -> None:
    literal = re.compile(r"""["'](L[1-7]\d\d)["']""")
    for path in PACKAGE.rglob("*.py"):
        for code in literal.findall(path.read_text(encoding="utf-8")):
            assert code in CATALOGUE, f"{path.relative_to(PACKAGE)} uses {code}, which the catalogue lacks"


def _doc_rows() -> dict[str, list[str]]:
    """`| `L201` | `unknown-name` | error | checker | meaning |` rows of the authoring guide's tables."""
    rows: dict[str, list[str]] = {}
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and CODE.match(cells[0].strip("`")):
            code = cells[0].strip("`")
            assert code not in rows, f"{code} is listed twice in docs/authoring.md"
            rows[code] = cells
    return rows


def test_the_docs_table_lists_every_code_of_the_catalogue_and_no_other() -> None:
    rows = _doc_rows()
    assert sorted(set(CATALOGUE) - set(rows)) == [], "codes in the catalogue missing from docs/authoring.md"
    assert sorted(set(rows) - set(CATALOGUE)) == [], "codes in docs/authoring.md the catalogue lacks"
    for code, cells in rows.items():
        entry = CATALOGUE[code]
        assert cells[1:4] == [f"`{entry.title}`", entry.severity, entry.stage], code


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_docs_name_no_code_the_catalogue_lacks(doc: Path) -> None:
    named = set(re.findall(r"\bL[1-7]\d\d\b", doc.read_text(encoding="utf-8")))
    assert sorted(named - set(CATALOGUE)) == []


def test_the_inline_form_is_the_form_lint_prints() -> None:
    assert inline("L601", "internal error: x") == "error[L601]: internal error: x"
    assert inline("L209", "y") == "warning[L209]: y"
    assert message("L206", name="d") == "unbound name `d` in message"


def test_a_header_mismatch_is_the_same_diagnostic_from_the_loader_and_from_lint(tmp_path: Path) -> None:
    from litmus_rules import load_rules
    from litmus_rules.errors import RuleCheckError

    (tmp_path / "a.litmus").write_text('ruleset one version "1"\n\nrule a reject when false\n', encoding="utf-8")
    (tmp_path / "b.litmus").write_text('ruleset two version "2"\n\nrule b reject when false\n', encoding="utf-8")
    with pytest.raises(RuleCheckError) as info:
        load_rules(tmp_path)
    loaded = [d for d in info.value.diagnostics if d.code == code_for("header-mismatch")]
    linted = [d for d in lint_path(tmp_path).diagnostics if d.code == code_for("header-mismatch")]
    def shown(d: Diagnostic) -> tuple[object, ...]:  # (the two name the file differently: relative, absolute)
        assert d.span is not None
        return d.code, d.severity, d.message, d.help, Path(d.span.source.name).name, d.span.line, d.span.column

    assert [shown(d) for d in loaded] == [shown(d) for d in linted] and len(loaded) == 1
    assert loaded[0].message == "ruleset `two` version `2` does not match `one` version `1` of the other files"
    assert loaded[0].severity == "error" and loaded[0].help is None
