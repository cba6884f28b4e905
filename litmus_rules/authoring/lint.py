"""The rule author's tools: `lint` (load-time diagnostics plus style) and `rules info` (what a
ruleset holds), through the loader's stages (engine/stages.py); `fmt` is in fmt.py (its names are
re-exported here for the CLI). Pure functions; `cli/lint.py` and `cli/rules.py` print.

Lint reports every diagnostic the loader would (syntax `L100`, the checker's `L2xx`/`L3xx` from
`lang.checker.CODES`, the header mismatch `L215`; all in `diagnostics.CATALOGUE`) unchanged, plus the style warnings of `STYLE_CODES`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import attrs

from litmus_rules.authoring.evidence import Evidence
from litmus_rules.authoring.null_lint import unguarded_nulls
from litmus_rules.authoring.fmt import FormatResult, display_path, format_file, format_source, unified_diff
from litmus_rules.engine import stages
from litmus_rules.engine.stages import RULE_SUFFIX
from litmus_rules.engine.stages import find as discover_rule_files
from litmus_rules import diagnostics
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import Diagnostic, LitmusConfigError, LitmusSyntaxError
from litmus_rules.lang import ast
from litmus_rules.lang.checker import CODES
from litmus_rules.source import Span

__all__ = [
    "LOADER_CODES",
    "STYLE_CODES",
    "FormatResult",
    "LintReport",
    "discover_rule_files",
    "display_path",
    "format_file",
    "format_source",
    "lint_path",
    "params_used",
    "ruleset_info",
    "style_diagnostics",
    "unified_diff",
]


# Style warnings: code -> (severity, short name, what it flags), from the one catalogue (`diagnostics`).
STYLE_CODES: dict[str, tuple[str, str, str]] = {
    c.code: (c.severity, c.title, c.summary) for c in diagnostics.by_stage("style")
}
LOADER_CODES: dict[str, tuple[str, str]] = {
    **diagnostics.table(diagnostics.lookup(code_for(title)) for title in ("syntax-error", "header-mismatch")),
    **CODES,
}


# ---- lint --------------------------------------------------------------------------------------------


def _style(code: str, message: str, span: Span | None, help: str | None = None) -> Diagnostic:
    return Diagnostic(code, STYLE_CODES[code][0], message, span, help)




def _bindings(e: ast.Expr) -> list[str]:
    out: list[str] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Quantifier):
            out.extend(b.name for b in node.bindings if b.name not in out)
        stack.extend(ast.children(node))
    return out


def _calls(e: ast.Expr) -> list[ast.Call]:
    out: list[ast.Call] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            out.append(node)
        stack.extend(ast.children(node))
    return out


def style_diagnostics(rs: ast.RuleSet | stages.Checked) -> list[Diagnostic]:
    """The style warnings (`STYLE_CODES`, except L409, which needs the file text) of a ruleset,
    from the check stage's types (a tree is checked first): L410 from `null_lint`."""
    know = Evidence(rs)
    rs = know.checked.tree
    out: list[Diagnostic] = []
    for rule in rs.rules:
        if not rule.doc:
            out.append(_style("L401", f"rule `{rule.name}` has no doc string", rule.span,
                              "add a string after the rule's name saying what it rejects and why"))
        if not rule.cite:
            out.append(_style("L402", f"rule `{rule.name}` cites nothing", rule.span,
                              'add `cite "..."` naming the condition of validity it implements'))
        if rule.message is None:
            out.append(_style("L403", f"rule `{rule.name}` has no `because` message", rule.span,
                              "without one, a reject only says which rule fired, not what it saw"))
        else:
            out.extend(_witness(rule, rule.message))
        if rule.mode == "unless" and not know.may_be_unknown(rule.condition):
            out.append(_style("L405", f"the condition of `{rule.name}` can never be unknown, so "
                              "`reject unless` here is only `reject when not`", rule.condition.span,
                              "write `reject when not (...)`: keep `reject unless` for requirements "
                              "whose evidence may be missing"))
    for cls in rs.classifiers:
        if not cls.doc:
            out.append(_style("L406", f"classifier `{cls.name}` has no doc string", cls.span,
                              "add a string after its name saying what it classifies"))
    conditions: list[tuple[str, ast.Expr]] = [(f"rule `{r.name}`", r.condition) for r in rs.rules]
    conditions += [(f"cell `{c.label}`", c.condition) for k in rs.classifiers for c in k.cells if c.condition]
    for what, cond in conditions:
        if not know.reads_facts(cond):
            out.append(_style("L407", f"the condition of {what} reads no fact: it is the same for every "
                              "episode", cond.span, "a param switch belongs inside a condition that reads facts"))
    out.extend(_unused_where(rs))
    out.extend(unguarded_nulls(know.checked))
    exprs = [e for _, e in conditions] + [let.expr for let in rs.lets]
    exprs += [p.expr for r in rs.rules if r.message for p in r.message.parts if isinstance(p, ast.Placeholder)]
    for e in exprs:
        for call in _calls(e):
            if call.func == "default" and call.args and not know.may_be_unknown(call.args[0]):
                out.append(_style("L408", f"`default` never applies: `{call.args[0].span.text}` is "
                                  "always known", call.span, "use the value directly"))
    return out


def _unused_where(rs: ast.RuleSet) -> list[Diagnostic]:
    """L411: a `where` name that neither its quantifier's body, a later name, nor (in a rule's
    condition) the rule's message reads."""
    out: list[Diagnostic] = []
    roots: list[tuple[ast.Expr, set[str]]] = []
    for rule in rs.rules:
        shown = set()
        for part in rule.message.parts if rule.message else ():
            if isinstance(part, ast.Placeholder):
                shown |= ast.names(part.expr)
        roots.append((rule.condition, shown))
    roots += [(c.condition, set()) for k in rs.classifiers for c in k.cells if c.condition is not None]
    roots += [(let.expr, set()) for let in rs.lets]
    for root, shown in roots:
        for node in ast.walk(root):
            if not isinstance(node, ast.Quantifier):
                continue
            locals_ = node.locals
            for i, b in enumerate(locals_):
                read = ast.names(node.body).union(*(ast.names(later.value) for later in locals_[i + 1 :]))
                if b.name not in read and b.name not in shown:
                    out.append(Diagnostic.of(code_for("unused-where"), b.span, name=b.name))
    return out


def _witness(rule: ast.Rule, message: ast.Message) -> list[Diagnostic]:
    shown: set[str] = set()
    for part in message.parts:
        if isinstance(part, ast.Placeholder):
            shown |= ast.names(part.expr)
    bound = _bindings(rule.condition)
    if bound and not shown & set(bound):
        names = ", ".join(f"`{b}`" for b in bound)
        return [_style("L404", f"the message of `{rule.name}` names none of its witnesses ({names})",
                       message.span, f"show it with a placeholder such as `{{{bound[0]}}}`, so a reader sees which "
                       "element made the rule reject")]
    if not bound and not shown:
        return [_style("L404", f"the message of `{rule.name}` shows no fact value", message.span,
                       "add a placeholder such as `{detector.channel!r}` naming what the rule saw")]
    return []


@attrs.frozen
class LintReport:
    diagnostics: tuple[Diagnostic, ...]
    files: tuple[str, ...]

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity != "error")


def _syntax_diagnostic(exc: LitmusSyntaxError) -> Diagnostic:
    help = "expected " + ", ".join(exc.expected[:8]) if exc.expected else None
    return Diagnostic(exc.code, diagnostics.lookup(exc.code).severity, exc.message, exc.span, help)


def lint_path(path: Path) -> LintReport:
    """Every diagnostic of the ruleset at `path` (a file, or a folder of `*.litmus` files): the
    stages find -> read -> parse -> merge -> check of the loader, then the style lints."""
    files = discover_rule_files(path)
    if not files:
        raise LitmusConfigError(f"no `*{RULE_SUFFIX}` files under `{display_path(path)}`")
    diags: list[Diagnostic] = []
    parsed: list[ast.RuleSet] = []
    for file in files:
        result = format_file(file)
        if result.tree is None:
            assert result.error is not None
            diags.append(_syntax_diagnostic(result.error))
            continue
        parsed.append(result.tree)
        if result.changed:
            diags.append(_style("L409", f"`{result.path}` is not in canonical format", Span(result.tree.span.source, 0, 0),
                                f"run `litmus-rules fmt {result.path}`"))
    if parsed and len(parsed) == len(files):
        merged = stages.merge(parsed)
        checked = stages.check(merged.tree, extra=merged.diagnostics)
        diags += checked.diagnostics
        diags += style_diagnostics(checked)
    return LintReport(tuple(sorted(diags, key=Diagnostic.sort_key)), tuple(display_path(f) for f in files))


# ---- rules info --------------------------------------------------------------------------------------


def params_used(rs: ast.RuleSet, exprs: Iterable[ast.Expr]) -> list[str]:
    """The params an expression reads, directly or through lets, in declaration order."""
    lets = {let.name: let for let in rs.lets}
    params = [p.name for p in rs.params]
    seen: set[str] = set()
    stack = list(exprs)
    while stack:
        for name in ast.names(stack.pop()):
            if name in seen:
                continue
            seen.add(name)
            if name in lets:
                stack.append(lets[name].expr)
    return [p for p in params if p in seen]


def ruleset_info(path: Path | None = None) -> dict[str, Any]:
    """Name, version, content hash, files, params, rules (with citations and the params each reads)
    and classifiers of a ruleset, as loaded (so the rules must load)."""
    from litmus_rules._resources import default_rules_dir
    from litmus_rules.engine.ruleset import build

    base = path if path is not None else default_rules_dir()
    sources = stages.find_and_read(base)
    loaded = build(sources.texts)
    tree = loaded.ast
    rules = []
    for r in tree.rules:
        exprs = [r.condition] + [p.expr for p in (r.message.parts if r.message else ()) if isinstance(p, ast.Placeholder)]
        rules.append({
            "name": r.name,
            "mode": f"reject {r.mode}",
            "doc": r.doc,
            "cite": r.cite,
            "tags": list(r.tags),
            "params": params_used(tree, exprs),
            "location": r.span.short_location(),
        })
    from litmus_rules.lang.printer import format_expr

    return {
        **loaded.info.to_json(),
        "files": [display_path(f) for f in sources.files],
        "params": [
            {"name": p.name, "type": p.type_name, "default": format_expr(p.default), "value": loaded.params[p.name],
             "location": p.span.short_location()}
            for p in tree.params
        ],
        "rules": rules,
        "classifiers": [
            {"name": c.name, "doc": c.doc, "labels": [cell.label for cell in c.cells],
             "params": params_used(tree, [cell.condition for cell in c.cells if cell.condition]),
             "location": c.span.short_location()}
            for c in tree.classifiers
        ],
        "warnings": [d.to_json() for d in loaded.diagnostics],
    }
