"""Pure renderers for people: verdicts, rule traces and the batch summary, as text.

The tables are drawn by rich (`tables.py`). The machine formats are beside it, one module each
(`json.py`: the verdict and summary JSON; `junit.py`, `sarif.py`, `github.py`: CI reports).

A witness's or surface's `origin` (the path in the episode where the text was found) is never cut
in a trace: it is what a reader needs to find the leak; the other fields of a record are shortened."""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol, Sequence

from litmus_rules.lang.trace import RuleTrace, TraceNode
from litmus_rules.lang.values import UNKNOWN, short_repr
from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED, RulesetInfo, Verdict
from litmus_rules.render import tables

LOCATION_WIDTH = 30
TEXT_WIDTH = 72


def _one_line(text: str, width: int = TEXT_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _has_origin(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("origin"), str)


def trace_repr(value: Any, limit: int = 100) -> str:
    """`short_repr`, except that a record with an `origin` (a surface, a witness) shows its origin
    whole, and a list of such records is shortened by whole records, never inside an origin."""
    if _has_origin(value):
        rest = [(k, v) for k, v in value.items() if k != "origin"]
        inner = [f"origin: {value['origin']!r}", *(f"{k}: {short_repr(v, 30)}" for k, v in rest[:3])]
        return "{" + ", ".join(inner) + (", ..." if len(rest) > 3 else "") + "}"
    if isinstance(value, (list, tuple)) and any(_has_origin(v) for v in value[:5]):  # a list can be huge
        shown: list[str] = []
        for item in value:
            if shown and sum(len(s) + 2 for s in shown) >= limit:
                break
            shown.append(trace_repr(item, limit))
        cut = len(shown) < len(value)
        return "[" + ", ".join(shown) + (", ...]" if cut else "]") + (f" ({len(value)} items)" if cut else "")
    return short_repr(value, limit)


def _value(node: TraceNode) -> str:
    if node.error:
        return f"error: {node.error}"
    if not node.evaluated:
        return "not evaluated"
    if node.value is UNKNOWN:
        return "unknown"
    return trace_repr(node.value, 100)


def _constant(node: TraceNode) -> bool:
    return node.kind == "literal" or (node.kind == "listexpr" and all(_constant(c) for c in node.children))


def render_trace_node(node: TraceNode, depth: int = 0) -> list[str]:
    if _constant(node):  # its value is in the source line already
        return []
    extras = []
    if node.binding:
        extras.append("{" + ", ".join(f"{k} = {v}" for k, v in node.binding.items()) + "}")
    if node.missing:
        extras.append(f"missing: {node.missing}")
    elif node.reads and node.reads != node.text:
        extras.append(f"({node.reads})")
    if node.let:
        extras.append(f"(let {node.let})")
    if node.where:  # a computed `where` name: its definition (a fact path one shows its path above)
        extras.append(f"(where {_one_line(node.where, 100)})")
    line = f"{node.location:<{LOCATION_WIDTH}} {'| ' * depth}{_one_line(node.text)}  = {_value(node)}"
    if extras:
        line += "  " + "  ".join(extras)
    lines = [line]
    if node.evaluated:
        for child in node.children:
            if node.kind == "comprehension" and not child.evaluated:
                continue  # per-element values are not kept for lists; the list's value says it all
            lines.extend(render_trace_node(child, depth + 1))
    return lines


def render_rule_trace(trace: RuleTrace) -> list[str]:
    head = f"{trace.span.short_location():<{LOCATION_WIDTH}} {trace.clause}  -> {trace.outcome}"
    if trace.root is None:
        return [head]
    return [head, *render_trace_node(trace.root, 1)]


def _witness(w: Any) -> str:
    where = f"{w.get('origin')}{' (injected)' if w.get('injected') else ''}"
    return f"{where}, {w.get('transform')}, {w.get('kind')}: {short_repr(w.get('matched'), 80)}"


def render_verdict(v: Verdict, explain: str = "fails") -> str:
    where = f"  ({v.source}; checked: {v.checked})" if v.source and v.checked else f"  ({v.source})" if v.source else ""
    lines = [f"{v.verdict} {v.id or '<no id>'}{where}"]
    if v.left_out and not any(r.left_out for r in v.reasons):  # else each surfaces reason says it
        lines.extend(f"  left out of surfaces: {line}" for line in v.left_out)
    for reason in v.reasons:
        lines.append(f"  x {reason.rule}: {reason.message}")
        lines.extend(f"    left out of surfaces: {line}" for line in reason.left_out)
        lines.extend(f"    witness {n}: {_witness(w)}" for n, w in enumerate(reason.witnesses, 1))
        if reason.trace is not None:
            lines.extend("    " + line for line in render_rule_trace(reason.trace))
    if v.verdict == SCORED:
        lines.append(f"  classification: {v.classification if v.classification is not None else 'undecided'}")
        for trace in v.classification_traces:
            lines.extend("    " + line for line in render_rule_trace(trace))
    if explain == "full":
        for trace in v.passed:
            lines.append(f"  ok {trace.rule}")
            lines.extend("    " + line for line in render_rule_trace(trace))
    return "\n".join(lines)


def table(rows: Sequence[Sequence[str]], header: Sequence[str], color: bool = False,
          styles: dict[int, dict[str, str]] | None = None) -> list[str]:
    """A plain left-aligned table with a rule under the header (drawn by rich: `tables.py`)."""
    return tables.table(rows, header, color=color, styles=styles)


class Row(Protocol):
    """What the batch summary needs of one episode (a Verdict, or the CLI's Outcome).

    Read-only properties, so that frozen classes (`cli/check.py`'s `_Row`) match too."""

    @property
    def id(self) -> str | None: ...

    @property
    def verdict(self) -> str: ...

    @property
    def classification(self) -> str | None: ...

    @property
    def rules(self) -> Sequence[str]: ...


def counts_line(rows: Sequence[Row]) -> str:
    counts = Counter(r.verdict for r in rows)
    return f"{len(rows)} episode(s): {counts[SCORED]} SCORED, {counts[REJECTED]} REJECTED, {counts[ERROR]} ERROR"


def render_summary(rows: Sequence[Row], ruleset: RulesetInfo | str | None, color: bool = False, detail: bool = True) -> str:
    """The counts, the reject reasons and classifications, and a row per episode (`detail`). An
    ERROR row names the file and line of its document (a `source` attribute, when the row has one):
    an unreadable document often has no id. `ruleset`: its identity, or the line the CLI made of it
    (which also says where the rules came from)."""
    lines = []
    if isinstance(ruleset, str):
        lines.append(ruleset)
    elif ruleset is not None:
        lines.append(f"ruleset {ruleset.name} version {ruleset.version} ({ruleset.hash[:19]})")
    lines.append(counts_line(rows))
    reasons = Counter(rule for r in rows if r.verdict == REJECTED for rule in r.rules)
    if reasons:
        lines.append("")
        lines.extend(table([(rule, str(n)) for rule, n in reasons.most_common()], ("reject reason", "episodes"),
                           color=color))
    classes = Counter(r.classification or "undecided" for r in rows if r.verdict == SCORED)
    if classes:
        lines.append("")
        lines.extend(table([(c, str(n)) for c, n in classes.most_common()], ("classification", "episodes"),
                           color=color))
    if not detail:
        return "\n".join(lines)
    lines.append("")
    rows_out = []
    for r in rows:
        source = getattr(r, "source", None)
        if r.verdict == ERROR:
            what = f"input error at {source}" if source else "input error"
        else:
            what = ", ".join(r.rules) if r.verdict == REJECTED else (r.classification or "undecided")
        rows_out.append((r.id or (f"<no id> ({source})" if source else "<no id>"), r.verdict, what))
    lines.extend(table(rows_out, ("id", "verdict", "reasons / classification"), color=color,
                       styles={1: tables.STYLES}))
    return "\n".join(lines)


def render_rules_info(info: dict[str, Any], color: bool = False, heading: str | None = None) -> str:
    """`rules info` as text (from `authoring.lint.ruleset_info`): the identity (or `heading`, the
    CLI's line that also says where the rules came from), the params as a table drawn by rich, then
    each rule with its cite, tags and params, and the classifiers."""
    lines = [heading] if heading is not None else [f"ruleset {info['name']} version {info['version']}",
                                                    f"hash    {info['hash']}"]
    lines.append("files   " + ", ".join(info["files"]))
    if info["params"]:
        rows = [(p["name"] + (f": {p['type']}" if p["type"] else ""), f"= {p['default']}", p["location"])
                for p in info["params"]]
        lines += ["", "params", *tables.table(rows, ("name", "default", "location"), color=color, indent=2)]
    lines += ["", f"rules ({len(info['rules'])})"]
    for r in info["rules"]:
        lines.append(f"  {tables.paint(r['name'], 'bold', color)}  ({r['mode']}, {r['location']})")
        if r["cite"]:
            lines.append(f"      cite:   {r['cite']}")
        if r["tags"]:
            lines.append(f"      tags:   {', '.join(r['tags'])}")
        if r["params"]:
            lines.append(f"      params: {', '.join(r['params'])}")
    if info["classifiers"]:
        lines += ["", "classifiers"]
        for c in info["classifiers"]:
            lines.append(f"  {c['name']}: {', '.join(c['labels'])}  ({c['location']})")
    return "\n".join(lines) + "\n"


def paint_diagnostic(line: str, color: bool = False) -> str:
    """A rendered diagnostic (`file:line:col: warning[L402]: ...`) with its severity coloured."""
    if not color:
        return line
    for severity in ("error", "warning"):
        marker = f": {severity}["
        if marker in line:
            head, _, rest = line.partition(marker)
            return f"{head}: {tables.paint(severity, tables.STYLES[severity], True)}[{rest}"
    return line
