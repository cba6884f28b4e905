"""Pure renderers: verdicts, traces and diagnostics to text for people and JSON for machines."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable, Sequence

from litmus_rules.trace import RuleTrace, TraceNode
from litmus_rules.values import UNKNOWN, short_repr
from litmus_rules.verdict import ERROR, REJECTED, SCORED, Verdict

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


def render_verdict(v: Verdict, explain: str = "fails") -> str:
    where = f"  ({v.source})" if v.source else ""
    lines = [f"{v.verdict} {v.id or '<no id>'}{where}"]
    for reason in v.reasons:
        lines.append(f"  x {reason.rule}: {reason.message}")
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


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*header).rstrip(), fmt.format(*("-" * w for w in widths))]
    out.extend(fmt.format(*r).rstrip() for r in rows)
    return out


def render_summary(verdicts: Sequence[Verdict]) -> str:
    counts = Counter(v.verdict for v in verdicts)
    lines = []
    if verdicts and verdicts[0].ruleset is not None:
        info = verdicts[0].ruleset
        lines.append(f"ruleset {info.name} version {info.version} ({info.hash[:19]})")
    lines.append(
        f"{len(verdicts)} episode(s): {counts[SCORED]} SCORED, {counts[REJECTED]} REJECTED, {counts[ERROR]} ERROR"
    )
    reasons = Counter(r.rule for v in verdicts if v.verdict == REJECTED for r in v.reasons)
    if reasons:
        lines.append("")
        lines.extend(_table([(rule, str(n)) for rule, n in reasons.most_common()], ("reject reason", "episodes")))
    classes = Counter(v.classification or "undecided" for v in verdicts if v.verdict == SCORED)
    if classes:
        lines.append("")
        lines.extend(_table([(c, str(n)) for c, n in classes.most_common()], ("classification", "episodes")))
    lines.append("")
    rows = []
    for v in verdicts:
        detail = ", ".join(r.rule for r in v.reasons) if v.verdict != SCORED else (v.classification or "undecided")
        rows.append((v.id or "<no id>", v.verdict, detail))
    lines.extend(_table(rows, ("id", "verdict", "reasons / classification")))
    return "\n".join(lines)


def render_text(verdicts: Sequence[Verdict], explain: str = "fails") -> str:
    parts = [render_summary(verdicts)]
    for v in verdicts:
        if v.verdict != SCORED or explain == "full":
            parts.append(render_verdict(v, explain))
    return "\n\n".join(parts) + "\n"


def verdict_json(v: Verdict) -> dict[str, Any]:
    return v.to_json()


def render_jsonl(verdicts: Iterable[Verdict]) -> Iterable[str]:
    for v in verdicts:
        yield json.dumps(v.to_json(), ensure_ascii=False, sort_keys=False) + "\n"


def render_json(verdicts: Sequence[Verdict]) -> str:
    counts = Counter(v.verdict for v in verdicts)
    doc = {
        "summary": {"episodes": len(verdicts), SCORED: counts[SCORED], REJECTED: counts[REJECTED], ERROR: counts[ERROR]},
        "verdicts": [v.to_json() for v in verdicts],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
