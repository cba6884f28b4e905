"""AST -> canonical rule text: the formatter behind `litmus-rules fmt` and the parser's round-trip.

The output depends only on the AST, the comments and (where the AST came from a parse) which
declarations the author separated with a blank line, so formatting is idempotent. Parentheses are
added by precedence, never copied from the source. Comments are kept: each attaches to the clause it
sits in or precedes (a comment at the end of a line stays there; one inside a multi-line condition
moves above that clause, since the condition is re-broken), and comments after the last declaration
stay at the end.
"""

from __future__ import annotations

import json
import re
from typing import Iterator, Sequence

import attrs

from litmus_rules.lang import ast

__all__ = ["WIDTH", "format_expr", "format_ruleset", "format_text"]

WIDTH = 100
INDENT = 2  # clauses inside a rule or classifier; continuation lines are 2 deeper than their line

# Precedence levels of the grammar, loosest first.
_OR, _AND, _NOT, _CMP, _SUM, _UNARY, _POSTFIX, _ATOM = range(1, 9)

# Characters that json.dumps(ensure_ascii=False) leaves raw but that line-based tools treat as line
# breaks (str.splitlines, editors), plus lone surrogates, which cannot be written as UTF-8.
_UNSAFE = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")


def _quote(text: str) -> str:
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _prec(e: ast.Expr) -> int:
    if isinstance(e, ast.BoolOp):
        return _OR if e.op == "or" else _AND
    if isinstance(e, (ast.Not, ast.Quantifier)):
        return _NOT
    if isinstance(e, ast.Compare):
        return _CMP
    if isinstance(e, ast.Arith):
        return _SUM
    if isinstance(e, ast.Neg):
        return _UNARY
    if isinstance(e, (ast.Field, ast.Index)):
        return _POSTFIX
    return _ATOM


def _needs_parens(e: ast.Expr, min_prec: int) -> bool:
    # A quantifier's body extends as far right as it can, so as an operand it is always wrapped
    # (min_prec > 0 means "operand of something"), even where the grammar would not insist.
    if isinstance(e, ast.Quantifier) and min_prec > 0:
        return True
    return _prec(e) < min_prec


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _literal(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, float):
        text = repr(value)
        if text in ("inf", "-inf", "nan"):
            raise ValueError(f"{text} cannot be written in the rule language")
        return text
    return str(value)


# ---- flat expressions ------------------------------------------------------------------------------


def format_expr(e: ast.Expr, min_prec: int = 0) -> str:
    """One expression on one line, with the parentheses its context (`min_prec`) needs."""
    if _needs_parens(e, min_prec):
        return "(" + format_expr(e, 0) + ")"
    if isinstance(e, ast.Literal):
        return _literal(e.value)
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.ListExpr):
        return "[" + ", ".join(format_expr(x) for x in e.items) + "]"
    if isinstance(e, ast.Field):
        obj = format_expr(e.obj, _POSTFIX)
        if isinstance(e.obj, ast.Literal) and _is_number(e.obj.value):
            obj = f"({obj})"  # `1.x` would lex as the number `1.` followed by `x`
        return f"{obj}.{e.name}"
    if isinstance(e, ast.Index):
        return f"{format_expr(e.obj, _POSTFIX)}[{format_expr(e.index)}]"
    if isinstance(e, ast.Call):
        args = [format_expr(a) for a in e.args] + [f"{k}: {format_expr(v)}" for k, v in e.kwargs]
        return f"{e.func}({', '.join(args)})"
    if isinstance(e, ast.Not):
        return "not " + format_expr(e.operand, _NOT)
    if isinstance(e, ast.BoolOp):
        inner = _AND if e.op == "or" else _NOT
        return f" {e.op} ".join(format_expr(x, inner) for x in e.operands)
    if isinstance(e, ast.Compare):
        return f"{format_expr(e.left, _SUM)} {e.op} {format_expr(e.right, _SUM)}"
    if isinstance(e, ast.Arith):
        return f"{format_expr(e.left, _SUM)} {e.op} {format_expr(e.right, _UNARY)}"
    if isinstance(e, ast.Neg):
        return "-" + format_expr(e.operand, _UNARY)
    if isinstance(e, ast.Quantifier):
        return f"{_quantifier_head(e)} {format_expr(e.body)}"
    if isinstance(e, ast.Comprehension):
        cond = f" if {format_expr(e.condition)}" if e.condition is not None else ""
        return f"[{format_expr(e.element)} for {e.name} in {format_expr(e.collection, _SUM)}{cond}]"
    raise TypeError(f"not an expression node: {type(e).__name__}")


def _quantifier_head(e: ast.Quantifier) -> str:
    bindings = ", ".join(f"{b.name} in {format_expr(b.collection, _SUM)}" for b in e.loops)
    where = f" {_where(e.locals)}" if e.locals else ""
    return f"{e.kind} {bindings}{where}:"


def _local(b: ast.Binding) -> str:
    # a quantifier as the value is wrapped (min_prec > 0): its body would otherwise run on
    return f"{b.name} = {format_expr(b.value, _OR)}"


def _where(locals_: Sequence[ast.Binding]) -> str:
    return "where " + ", ".join(_local(b) for b in locals_)


def _quantifier_head_lines(e: ast.Quantifier, col: int, ind: int, width: int) -> list[str]:
    """The head on one line if it fits; else the `where` clause on lines of its own, at `ind`,
    one name a line if the clause does not fit on one either."""
    head = _quantifier_head(e)
    if col + len(head) <= width or not e.locals:
        return [head]
    loops = ", ".join(f"{b.name} in {format_expr(b.collection, _SUM)}" for b in e.loops)
    where = _where(e.locals) + ":"
    if ind + len(where) <= width:
        return [f"{e.kind} {loops}", " " * ind + where]
    lines = [f"{e.kind} {loops}"]
    for i, b in enumerate(e.locals):
        lead = " " * ind + ("where " if i == 0 else " " * len("where "))
        lines.append(lead + _local(b) + ("," if i < len(e.locals) - 1 else ":"))
    return lines


# ---- line breaking ---------------------------------------------------------------------------------


def _layout(e: ast.Expr, col: int, ind: int, min_prec: int = 0, width: int = WIDTH) -> list[str]:
    """`e` starting at column `col`, continuation lines indented `ind`: first line without its
    prefix, later lines whole. Breaks only where a reader expects it: before `and`/`or` operands,
    after a quantifier's colon, and before a comprehension's `if`; anything else stays on one line."""
    flat = format_expr(e, min_prec)
    if col + len(flat) <= width:
        return [flat]
    if _needs_parens(e, min_prec):
        lines = _layout(e, col + 1, ind, 0, width)
        lines[0] = "(" + lines[0]
        lines[-1] += ")"
        return lines
    if isinstance(e, ast.BoolOp):
        inner = _AND if e.op == "or" else _NOT
        lines = _layout(e.operands[0], col, ind + INDENT, inner, width)
        for operand in e.operands[1:]:
            lead = " " * ind + e.op + " "
            sub = _layout(operand, len(lead), ind + INDENT, inner, width)
            lines.append(lead + sub[0])
            lines.extend(sub[1:])
        return lines
    if isinstance(e, ast.Quantifier):
        body_col = ind + INDENT
        body = _layout(e.body, body_col, body_col + INDENT, 0, width)
        return [*_quantifier_head_lines(e, col, body_col, width), " " * body_col + body[0], *body[1:]]
    if isinstance(e, ast.Not):
        sub = _layout(e.operand, col + 4, ind, _NOT, width)
        return ["not " + sub[0], *sub[1:]]
    if isinstance(e, ast.Comprehension) and e.condition is not None:
        head = f"[{format_expr(e.element)} for {e.name} in {format_expr(e.collection, _SUM)}"
        lead = " " * ind + "if "
        cond = _layout(e.condition, len(lead), ind + INDENT, 0, width)
        cond[-1] += "]"
        return [head, lead + cond[0], *cond[1:]]
    return [flat]


# ---- strings that may span lines -------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Split after each run of spaces, so that joined pieces give back the text."""
    return [w for w in re.findall(r"[^ ]* *", text) if w]


def _message_pieces(message: ast.Message) -> list[str]:
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, str):
            for word in _words(part):
                pieces.append(_quote(word)[1:-1].replace("{", "{{").replace("}", "}}"))
        else:
            text = format_expr(part.expr)
            if '"' in text or "\\" in text:
                raise ValueError("a message placeholder cannot hold a string literal")
            pieces.append("{" + text + ("!r" if part.repr else "") + "}")
    return pieces


def _text_pieces(text: str) -> list[str]:
    return [_quote(w)[1:-1] for w in _words(text)] or [""]


def _pack(pieces: Sequence[str], first_col: int, cont_col: int, width: int) -> list[str]:
    """Greedy fill: each string literal as long as fits, split only after a space (a placeholder
    glued to its neighbouring text stays with it)."""
    units: list[str] = [""]
    for piece in pieces:
        units[-1] += piece
        if piece.endswith(" "):
            units.append("")
    chunks: list[str] = []
    current = ""
    col = first_col
    for unit in units:
        if current and col + len(current) + len(unit) + 2 > width:
            chunks.append(current)
            current, col = "", cont_col
        current += unit
    chunks.append(current)
    return ['"' + c + '"' for c in chunks]


# ---- comments --------------------------------------------------------------------------------------


@attrs.define
class _Clause:
    """A stretch of a declaration that comments can sit before or at the end of."""

    start: int
    end: int
    before: list[str] = attrs.Factory(list)
    trailing: list[str] = attrs.Factory(list)


@attrs.define
class _Decl:
    node: ast.Decl | None  # None for the header
    clauses: list[_Clause]
    # blank lines (True) between leading comments and after the last one, as the author wrote them
    gaps: list[bool] = attrs.Factory(list)
    blank_before: bool = False


_BLANK = re.compile(r"\n[ \t\r\f\v]*\n")
_HEADER = re.compile(r'ruleset\s+[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*\s+version\s+"(?:[^"\\\n]|\\.)*"')


class _Comments:
    """Assigns each comment of a parsed file to a clause, using the spans into the original text."""

    def __init__(self, rs: ast.RuleSet) -> None:
        self.rs = rs
        source = rs.span.source
        self.text = source.text
        self.usable = bool(self.text) and all(d.span.source is source for d in rs.items)
        self.tail: list[str] = []
        self.tail_blank = False
        self.tail_gaps: list[bool] = []
        masked = list(self.text)
        for c in rs.comments:  # keywords are searched backwards; a comment must not fool that
            masked[c.span.start : c.span.end] = " " * (c.span.end - c.span.start)
        self.masked = "".join(masked)

    def _keyword_before(self, keyword: str, pos: int) -> int:
        found = self.masked.rfind(keyword, 0, pos)
        return found if found >= 0 else pos

    def _line_end(self, pos: int) -> int:
        nl = self.text.find("\n", pos)
        return len(self.text) if nl < 0 else nl

    def decls(self) -> list[_Decl]:
        rs = self.rs
        out = [_Decl(None, [self._header()])]
        for item in rs.items:
            out.append(_Decl(item, self._clauses(item) if self.usable else [_Clause(0, 0)]))
        if not self.usable:  # no positions to attach comments to: keep them, at the end
            self.tail = [c.text.rstrip() for c in rs.comments]
            self.tail_blank = True
            return out
        flat = [(clause, d) for d in out for clause in d.clauses]
        leading: dict[int, list[tuple[int, int, str]]] = {}
        tail: list[tuple[int, int, str]] = []
        for c in rs.comments:
            p, body = c.span.start, c.text.rstrip()
            i = max((k for k, (cl, _) in enumerate(flat) if cl.start <= p), default=-1)
            if i >= 0:
                clause = flat[i][0]
                if p >= clause.end and "\n" not in self.text[clause.end : p]:
                    clause.trailing.append(body)
                    continue
                if p < clause.end:  # inside a clause: it describes that clause
                    i -= 1
            target = i + 1
            if target >= len(flat):
                tail.append((c.span.start, c.span.end, body))
            elif flat[target][0] is flat[target][1].clauses[0]:
                leading.setdefault(id(flat[target][1]), []).append((c.span.start, c.span.end, body))
            else:
                flat[target][0].before.append(body)
        prev_end = 0
        for d in out:
            comments = leading.get(id(d), [])
            d.clauses[0].before = [b for _, _, b in comments]
            start = d.clauses[0].start
            marks = [(s, e) for s, e, _ in comments]
            first = marks[0][0] if marks else start
            d.blank_before = bool(_BLANK.search(self.text, prev_end, max(prev_end, first)))
            d.gaps = [bool(_BLANK.search(self.text, a[1], max(a[1], b[0]))) for a, b in zip(marks, marks[1:] + [(start, 0)])]
            prev_end = max(d.clauses[-1].end, max((e for _, e in marks), default=0))
        self.tail = [b for _, _, b in tail]
        self.tail_blank = bool(tail) and bool(_BLANK.search(self.text, prev_end, max(prev_end, tail[0][0])))
        self.tail_gaps = [bool(_BLANK.search(self.text, a[1], max(a[1], b[0]))) for a, b in zip(tail, tail[1:])]
        return out

    def _header(self) -> _Clause:
        if not self.usable:
            return _Clause(0, 0)
        start = self.rs.span.start
        m = _HEADER.match(self.masked, start)
        return _Clause(start, m.end() if m else start + len("ruleset"))

    def _clauses(self, item: ast.Decl) -> list[_Clause]:
        keyword = {ast.Param: "param", ast.Let: "let", ast.Rule: "rule", ast.Classify: "classify"}[type(item)]
        start = self._keyword_before(keyword, item.span.start)
        if isinstance(item, ast.Param):
            return [_Clause(start, item.default.span.end)]
        if isinstance(item, ast.Let):
            return [_Clause(start, item.expr.span.end)]
        if isinstance(item, ast.Rule):
            # the name line; then doc, cite and tags (no spans: comments there go before `reject`)
            clauses = [_Clause(start, item.span.end)]
            reject = self._keyword_before("reject", item.condition.span.start)
            clauses.append(_Clause(reject, item.condition.span.end))
            if item.message is not None:
                clauses.append(_Clause(item.message.span.start, item.message.span.end))
            return clauses
        clauses = [_Clause(start, item.span.end)]
        for cell in item.cells:
            end = cell.condition.span.end if cell.condition is not None else cell.span.end
            clauses.append(_Clause(cell.span.start, end))
        return clauses


# ---- declarations ----------------------------------------------------------------------------------


def _with_trailing(lines: list[str], clause: _Clause) -> list[str]:
    if clause.trailing:
        lines[-1] += "  " + "  ".join(clause.trailing)
    return lines


def _condition(prefix: str, e: ast.Expr, ind: int, width: int) -> list[str]:
    body = _layout(e, len(prefix), ind, 0, width)
    return [prefix + body[0], *body[1:]]


def _decl_lines(d: ast.Decl, clauses: list[_Clause], width: int) -> list[str]:
    pad = " " * INDENT
    if isinstance(d, (ast.Param, ast.Let)):
        if isinstance(d, ast.Param):
            typed = f": {d.type_name}" if d.type_name is not None else ""
            prefix, expr = f"param {d.name}{typed} = ", d.default
        else:
            prefix, expr = f"let {d.name} = ", d.expr
        return _with_trailing(_condition(prefix, expr, INDENT, width), clauses[0])
    if isinstance(d, ast.Rule):
        lines = _with_trailing([f"rule {d.name}"], clauses[0])
        if d.doc is not None:
            lines.extend(pad + c for c in _pack(_text_pieces(d.doc), INDENT, INDENT, width))
        if d.cite is not None:
            chunks = _pack(_text_pieces(d.cite), INDENT + 5, 2 * INDENT, width)
            lines.append(pad + "cite " + chunks[0])
            lines.extend(" " * (2 * INDENT) + c for c in chunks[1:])
        if d.tags:
            lines.append(pad + "tags [" + ", ".join(_quote(t) for t in d.tags) + "]")
        reject = clauses[1] if len(clauses) > 1 else _Clause(0, 0)
        lines.extend(pad + b for b in reject.before)
        lines.extend(_with_trailing(_condition(f"{pad}reject {d.mode} ", d.condition, 2 * INDENT, width), reject))
        if d.message is not None:
            because = clauses[2] if len(clauses) > 2 else _Clause(0, 0)
            lines.extend(pad + b for b in because.before)
            chunks = _pack(_message_pieces(d.message), INDENT + 8, 2 * INDENT, width)
            out = [pad + "because " + chunks[0], *(" " * (2 * INDENT) + c for c in chunks[1:])]
            lines.extend(_with_trailing(out, because))
        return lines
    lines = _with_trailing([f"classify {d.name}"], clauses[0])
    if d.doc is not None:
        lines.append(pad + _quote(d.doc))
    for i, cell in enumerate(d.cells):
        clause = clauses[i + 1] if i + 1 < len(clauses) else _Clause(0, 0)
        lines.extend(pad + b for b in clause.before)
        if cell.condition is None:
            out = [f"{pad}{_quote(cell.label)} otherwise"]
        else:
            out = _condition(f"{pad}{_quote(cell.label)} when ", cell.condition, 2 * INDENT, width)
        lines.extend(_with_trailing(out, clause))
    return lines


def _separated(prev: ast.Decl | None, d: ast.Decl, author_blank: bool) -> bool:
    """Rules and classifiers stand apart; params and lets group as the author grouped them."""
    if prev is None or type(prev) is not type(d) or isinstance(d, (ast.Rule, ast.Classify)):
        return True
    return author_blank


def _emit(decls: list[_Decl], rs: ast.RuleSet, comments: _Comments, width: int) -> Iterator[str]:
    header, *rest = decls
    yield from _comment_block(header)
    yield from _with_trailing([f"ruleset {rs.name} version {_quote(rs.version)}"], header.clauses[0])
    prev: ast.Decl | None = None
    for d in rest:
        assert d.node is not None
        if _separated(prev, d.node, d.blank_before):
            yield ""
        yield from _comment_block(d)
        yield from _decl_lines(d.node, d.clauses, width)
        prev = d.node
    if comments.tail:
        if comments.tail_blank or not rest:
            yield ""
        for i, line in enumerate(comments.tail):
            yield line
            if i < len(comments.tail_gaps) and comments.tail_gaps[i]:
                yield ""


def _comment_block(d: _Decl) -> Iterator[str]:
    for i, line in enumerate(d.clauses[0].before):
        yield line
        if i < len(d.gaps) and d.gaps[i]:
            yield ""


def format_ruleset(rs: ast.RuleSet, *, width: int = WIDTH) -> str:
    """The canonical text of a ruleset, comments included (when `rs` came from `syntax.parse`)."""
    comments = _Comments(rs)
    decls = comments.decls()
    text = "\n".join(_emit(decls, rs, comments, width))
    return text + "\n"


def format_text(text: str, name: str = "<rules>", *, width: int = WIDTH) -> str:
    """Parse and reformat rule text. Raises LitmusSyntaxError when it does not parse."""
    from litmus_rules.lang.syntax import parse

    return format_ruleset(parse(text, name), width=width)
