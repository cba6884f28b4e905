"""Pure renderers for people: verdicts, rule traces, the batch summary and tables, as text.

The machine formats are beside it, one module each (`json.py`: the verdict and summary JSON)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol, Sequence

from litmus_rules.lang.trace import RuleTrace, TraceNode
from litmus_rules.lang.values import UNKNOWN, short_repr
from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED, RulesetInfo, Verdict

LOCATION_WIDTH = 30
TEXT_WIDTH = 72


def _one_line(text: str, width: int = TEXT_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _value(node: TraceNode) -> str:
    if node.error:
        return f"error: {node.error}"
    if not node.evaluated:
        return "not evaluated"
    if node.value is UNKNOWN:
        return "unknown"
    return short_repr(node.value, 100)


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
    where = f"  ({v.source})" if v.source else ""
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


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> list[str]:
    """A plain left-aligned table with a rule under the header."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*header).rstrip(), fmt.format(*("-" * w for w in widths)).rstrip()]
    out.extend(fmt.format(*r).rstrip() for r in rows)
    return out


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


def render_summary(rows: Sequence[Row], ruleset: RulesetInfo | None) -> str:
    counts = Counter(r.verdict for r in rows)
    lines = []
    if ruleset is not None:
        lines.append(f"ruleset {ruleset.name} version {ruleset.version} ({ruleset.hash[:19]})")
    lines.append(f"{len(rows)} episode(s): {counts[SCORED]} SCORED, {counts[REJECTED]} REJECTED, {counts[ERROR]} ERROR")
    reasons = Counter(rule for r in rows if r.verdict == REJECTED for rule in r.rules)
    if reasons:
        lines.append("")
        lines.extend(table([(rule, str(n)) for rule, n in reasons.most_common()], ("reject reason", "episodes")))
    classes = Counter(r.classification or "undecided" for r in rows if r.verdict == SCORED)
    if classes:
        lines.append("")
        lines.extend(table([(c, str(n)) for c, n in classes.most_common()], ("classification", "episodes")))
    lines.append("")
    detail = []
    for r in rows:
        what = ", ".join(r.rules) if r.verdict == REJECTED else "input error" if r.verdict == ERROR else (
            r.classification or "undecided")
        detail.append((r.id or "<no id>", r.verdict, what))
    lines.extend(table(detail, ("id", "verdict", "reasons / classification")))
    return "\n".join(lines)
