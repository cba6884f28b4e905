"""The rule author's tools: `fmt` (canonical layout), `lint` (load-time diagnostics plus style) and
`rules info` (what a ruleset holds). Pure functions; the CLI in `cli_authoring.py` prints.

Lint reports every diagnostic the loader would (syntax `L100`, the checker's `L2xx`/`L3xx` from
`check.CODES`, the header mismatch `L215`) unchanged, plus the style warnings of `STYLE_CODES`.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import attrs

from litmus_rules.lang import ast
from litmus_rules.lang import types as t
from litmus_rules.domain.builtins import REGISTRY
from litmus_rules.lang.checker import CODES, Checker, literal_type
from litmus_rules import diagnostics
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import Diagnostic, LitmusConfigError, LitmusSyntaxError
from litmus_rules.engine.ruleset import RULE_FILE_READ_LIMIT
from litmus_rules.domain.facts import DERIVED, FactSchema
from litmus_rules.io.inputs import read_text_file
from litmus_rules.lang.printer import format_ruleset
from litmus_rules.source import Span
from litmus_rules.lang.syntax import parse

__all__ = [
    "LOADER_CODES",
    "STYLE_CODES",
    "FormatResult",
    "Knowledge",
    "LintReport",
    "discover_rule_files",
    "display_path",
    "format_file",
    "format_source",
    "lint_path",
    "merge",
    "params_used",
    "ruleset_info",
    "style_diagnostics",
    "unified_diff",
]

RULE_SUFFIX = ".litmus"

# Style warnings: code -> (severity, short name, what it flags), from the one catalogue (`diagnostics`).
STYLE_CODES: dict[str, tuple[str, str, str]] = {
    c.code: (c.severity, c.title, c.summary) for c in diagnostics.by_stage("style")
}
LOADER_CODES: dict[str, tuple[str, str]] = {
    **diagnostics.table(diagnostics.lookup(code_for(title)) for title in ("syntax-error", "header-mismatch")),
    **CODES,
}


def display_path(path: Path) -> str:
    """Paths as the user would type them: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def discover_rule_files(path: Path, *, include_tests: bool = False) -> list[Path]:
    """`*.litmus` under a folder (a file is itself). Like the loader, a ruleset is the files outside
    `tests/` folders; `fmt` formats those too. Hidden folders (.git, virtualenvs) are skipped."""
    if path.exists() and not path.is_dir():
        return [path]  # a FIFO or device too: reading it says what it is, without blocking
    if not path.is_dir():
        raise LitmusConfigError(f"rules path `{path}` does not exist")
    out = []
    for file in sorted(path.rglob(f"*{RULE_SUFFIX}")):
        parts = file.relative_to(path).parts[:-1]
        if any(p.startswith(".") for p in parts) or (not include_tests and "tests" in parts):
            continue
        out.append(file)
    return out


# ---- fmt ---------------------------------------------------------------------------------------------


@attrs.frozen
class FormatResult:
    path: str
    original: str
    formatted: str | None  # None when the file does not parse
    error: LitmusSyntaxError | None = None

    @property
    def changed(self) -> bool:
        return self.formatted is not None and self.formatted != self.original


def format_file(path: Path, name: str | None = None) -> FormatResult:
    shown = name or display_path(path)
    try:
        text = read_text_file(path, RULE_FILE_READ_LIMIT)
    except (OSError, UnicodeDecodeError) as exc:
        raise LitmusConfigError(f"cannot read rule file `{shown}`: {exc}") from None
    return format_source(text, shown)


def format_source(text: str, name: str) -> FormatResult:
    try:
        return FormatResult(name, text, format_ruleset(parse(text, name)))
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


# ---- what can be unknown -----------------------------------------------------------------------------


class Knowledge:
    """Static facts about a ruleset's expressions: can a value be *unknown* (a missing fact), and does
    it read the episode at all. Conservative: "may be unknown" whenever the schema does not promise
    the fact. The fact schema's `required` lists (and the engine's derived facts) are the promises."""

    def __init__(self, rs: ast.RuleSet, facts: FactSchema | None = None) -> None:
        self.facts = facts or FactSchema()
        self.lets = {let.name: let for let in rs.lets}
        self.params = {p.name for p in rs.params}
        self._lets: dict[str, tuple[bool, t.T, bool]] = {}

    def may_be_unknown(self, e: ast.Expr) -> bool:
        return self._info(e, {})[0]

    def reads_facts(self, e: ast.Expr) -> bool:
        return self._info(e, {})[2]

    def let_info(self, name: str) -> tuple[bool, t.T, bool]:
        """(may be unknown, type, reads facts) of a let."""
        if name not in self._lets:
            self._lets[name] = (True, t.ANY, True)  # a cycle (the checker reports it): assume the worst
            self._lets[name] = self._info(self.lets[name].expr, {})
        return self._lets[name]

    def _info(self, e: ast.Expr, scope: dict[str, t.T]) -> tuple[bool, t.T, bool]:  # noqa: C901
        if isinstance(e, ast.Literal):
            return False, literal_type(e.value), False
        if isinstance(e, ast.Name):
            if e.name in scope:
                return False, scope[e.name], False  # an element of a list is a value, never unknown
            if e.name in self.lets:
                return self.let_info(e.name)
            if e.name in self.params:
                return False, t.ANY, False
            if e.name in DERIVED:
                return False, DERIVED[e.name].type, True
            root = self.facts.root_type(e.name)
            required = _required(self.facts.schema)
            return e.name not in required, root or t.ANY, True
        if isinstance(e, ast.Field):
            unknown, base, reads = self._info(e.obj, scope)
            field = t.field_type(base, e.name) if not base.is_any else None
            return unknown or not _always_has(base, e.name), field or t.ANY, reads
        if isinstance(e, ast.Call):
            infos = [self._info(a, scope) for a in e.args] + [self._info(v, scope) for _, v in e.kwargs]
            reads = any(i[2] for i in infos)
            if e.func == "default" and len(infos) == 2:
                # the fallback stands in for an absent value: the value's own type is the precise one
                typ = infos[0][1] if not infos[0][1].is_any else infos[1][1]
                return infos[1][0], typ, reads
            if e.func == "known":
                return False, t.BOOL, reads
            fn = REGISTRY.get(e.func)
            unknown = any(i[0] for i in infos) or fn is None or fn.sees_unknown
            return unknown, fn.returns if fn else t.ANY, reads
        if isinstance(e, ast.Quantifier):
            inner = dict(scope)
            unknown = reads = False
            for b in e.bindings:
                cu, ct, cr = self._info(b.collection, inner)
                unknown, reads = unknown or cu, reads or cr
                inner[b.name] = t.item_type(ct)
            bu, _, br = self._info(e.body, inner)
            return unknown or bu, t.NUM if e.kind == "count" else t.BOOL, reads or br
        if isinstance(e, ast.Comprehension):
            cu, ct, cr = self._info(e.collection, scope)
            inner = {**scope, e.name: t.item_type(ct)}
            eu, et, er = self._info(e.element, inner)
            qu, _, qr = self._info(e.condition, inner) if e.condition is not None else (False, t.ANY, False)
            return cu or eu or qu, t.list_of(et), cr or er or qr
        parts = [self._info(c, scope) for c in ast.children(e)]
        unknown = any(p[0] for p in parts) or isinstance(e, ast.Index)
        reads = any(p[2] for p in parts)
        if isinstance(e, ast.ListExpr):
            typ = t.list_of(parts[0][1] if parts else t.ANY)
        elif isinstance(e, (ast.Not, ast.BoolOp, ast.Compare)):
            typ = t.BOOL
        elif isinstance(e, (ast.Arith, ast.Neg)):
            typ = parts[0][1] if parts else t.NUM
        else:
            typ = t.ANY
        return unknown, typ, reads




def _required(schema: Any) -> set[str]:
    """Properties a schema object always has: its own `required` and its `allOf` branches' (the
    conditional `then` branches promise nothing unconditionally)."""
    if not isinstance(schema, dict):
        return set()
    out = set(schema.get("required", ()))
    for sub in schema.get("allOf", ()):
        if isinstance(sub, dict):
            out |= set(sub.get("required", ()))
    return out


def _always_has(base: t.T, name: str) -> bool:
    if base.is_any or base.kinds != frozenset({"object"}):
        return False  # it may be null or not an object: its field is then unknown
    if base.fields is not None:  # derived facts and built-in results carry every declared field
        return name in base.fields
    if base.schema is None or base.root is None:
        return False
    return name in _required(base.schema)  # `from_schema` stored it with its `$ref` resolved


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


def style_diagnostics(rs: ast.RuleSet, facts: FactSchema | None = None) -> list[Diagnostic]:
    """The style warnings (`STYLE_CODES`, except L409, which needs the file text) of a ruleset."""
    know = Knowledge(rs, facts)
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
    exprs = [e for _, e in conditions] + [let.expr for let in rs.lets]
    exprs += [p.expr for r in rs.rules if r.message for p in r.message.parts if isinstance(p, ast.Placeholder)]
    for e in exprs:
        for call in _calls(e):
            if call.func == "default" and call.args and not know.may_be_unknown(call.args[0]):
                out.append(_style("L408", f"`default` never applies: `{call.args[0].span.text}` is "
                                  "always known", call.span, "use the value directly"))
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


def _header_mismatches(parsed: Sequence[ast.RuleSet]) -> list[Diagnostic]:
    """The loader's L215, with the loader's message: every file of a ruleset has one header."""
    first = parsed[0]
    return [
        Diagnostic.of(
            code_for("header-mismatch"), o.span,
            name=o.name, version=o.version, first_name=first.name, first_version=first.version,
        )
        for o in parsed[1:]
        if (o.name, o.version) != (first.name, first.version)
    ]


def merge(parsed: Sequence[ast.RuleSet]) -> ast.RuleSet:
    """The files of one ruleset as one AST, as the loader sees them."""
    first = parsed[0]
    items = tuple(i for rs in parsed for i in rs.items)
    comments = tuple(c for rs in parsed for c in rs.comments)
    return ast.RuleSet(first.name, first.version, items, span=first.span, comments=comments)


def lint_path(path: Path, facts: FactSchema | None = None) -> LintReport:
    """Every diagnostic of the ruleset at `path` (a file, or a folder of `*.litmus` files)."""
    files = discover_rule_files(path)
    if not files:
        raise LitmusConfigError(f"no `*{RULE_SUFFIX}` files under `{display_path(path)}`")
    diags: list[Diagnostic] = []
    parsed: list[ast.RuleSet] = []
    for file in files:
        result = format_file(file)
        if result.error is not None:
            diags.append(_syntax_diagnostic(result.error))
            continue
        rs = parse(result.original, result.path)
        parsed.append(rs)
        if result.changed:
            diags.append(_style("L409", f"`{result.path}` is not in canonical format", Span(rs.span.source, 0, 0),
                                f"run `litmus-rules fmt {result.path}`"))
    if parsed and len(parsed) == len(files):
        facts = facts or FactSchema()
        merged = merge(parsed)
        diags += _header_mismatches(parsed)
        diags += Checker(merged, facts).run()
        diags += style_diagnostics(merged, facts)
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
    from litmus_rules.engine.ruleset import load_rules

    base = path if path is not None else default_rules_dir()
    loaded = load_rules(base)
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
        "files": [display_path(f) for f in discover_rule_files(base)],
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
