"""Rule-test coverage: which directions (true, false, unknown) of which rules, cells and lets the
tests of one ruleset exercised."""

from __future__ import annotations

from typing import Any, Iterable

import attrs

from litmus_rules.authoring.evidence import Evidence
from litmus_rules.engine.ruleset import RuleSet
from litmus_rules.engine.verdict import ERROR, Verdict
from litmus_rules.lang import ast
from litmus_rules.lang.trace import RuleTrace, TraceNode
from litmus_rules.lang.values import UNKNOWN

__all__ = ["Coverage", "CoverageItem", "let_values", "value_state"]


def let_values(node: TraceNode | None) -> Iterable[tuple[str, Any]]:
    """(let name, value) for every let a trace evaluated."""
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if n.let and n.evaluated:
            if n.children and n.children[0].evaluated:
                yield n.let, n.children[0].value
            elif n.kind == "name":
                yield n.let, n.value
        stack.extend(n.children)


def value_state(value: Any) -> str:
    """`true`, `false` or `unknown`; a non-boolean value counts as true when non-empty."""
    if value is UNKNOWN:
        return "unknown"
    if value is None or value is False:
        return "false"
    if value is True:
        return "true"
    if isinstance(value, (list, dict, str, tuple)):
        return "true" if len(value) else "false"
    if isinstance(value, (int, float)):
        return "true" if value else "false"
    return "true"


@attrs.define
class CoverageItem:
    kind: str  # `rule`, `cell` or `let`
    name: str
    location: str  # `rules/validity.litmus:28`
    required: tuple[str, ...]  # directions a test can reach: true, false, unknown; `known` for a plain value
    counts: dict[str, int] = attrs.Factory(lambda: {"true": 0, "false": 0, "unknown": 0})

    def missing(self) -> list[str]:
        seen = {k for k, n in self.counts.items() if n}
        return [d for d in self.required if not (d in seen or (d == "known" and seen - {"unknown"}))]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "location": self.location, "counts": dict(self.counts),
                "required": list(self.required), "missing": self.missing()}


_MISSING_TEXT = {"true": "never true", "false": "never false", "unknown": "never unknown",
                 "known": "never evaluated to a known value"}
_LET_TEXT = {"true": "never non-empty (or true)", "false": "never empty (or false)"}


class Coverage:
    """Which directions of which rules, cells and lets the tests of one ruleset exercised.

    A direction is required when a test could reach it: true and false always (for a let that is
    neither a condition nor a list, a known value), unknown where the static analysis says the
    value can be unknown (see `authoring.evidence`).
    """

    def __init__(self, ruleset: RuleSet, know: Evidence) -> None:
        tree = ruleset.ast
        self.info = ruleset.info
        self.items: list[CoverageItem] = []
        self._rules: dict[str, tuple[CoverageItem, str]] = {}
        self._cells: dict[tuple[str, int], CoverageItem] = {}
        self._classifiers: list[tuple[list[tuple[str, int]], tuple[str, int]]] = []
        self._lets: dict[str, CoverageItem] = {}
        for item in tree.items:
            if isinstance(item, ast.Rule):
                maybe = ("unknown",) if know.may_be_unknown(item.condition) else ()
                cov = CoverageItem("rule", item.name, item.span.short_location(), ("true", "false", *maybe))
                self._rules[item.name] = (cov, item.mode)
                self.items.append(cov)
            elif isinstance(item, ast.Let):
                unknown, typ, _ = know.let_info(item.name)
                dirs = ("true", "false") if typ.kinds and typ.kinds <= {"boolean", "array"} else ("known",)
                cov = CoverageItem("let", item.name, item.span.short_location(), dirs + (("unknown",) if unknown else ()))
                self._lets[item.name] = cov
                self.items.append(cov)
            elif isinstance(item, ast.Classify):
                keys = []
                for cell in item.cells:
                    key = (cell.span.source.name, cell.span.start)
                    maybe = ("unknown",) if cell.condition is not None and know.may_be_unknown(cell.condition) else ()
                    cov = CoverageItem("cell", f'{item.name} "{cell.label}"', cell.span.short_location(),
                                       ("true", "false", *maybe))
                    self._cells[key] = cov
                    self.items.append(cov)
                    keys.append(key)
                self._classifiers.append((keys[:-1], keys[-1]))

    def record(self, v: Verdict) -> None:
        if v.verdict == ERROR:
            return
        traces: list[RuleTrace] = []
        for reason in v.reasons:
            if reason.rule in self._rules:
                cov, mode = self._rules[reason.rule]
                state = "unknown" if reason.kind != "violation" else ("true" if mode == "when" else "false")
                cov.counts[state] += 1
            if reason.trace is not None:
                traces.append(reason.trace)
        for passed in v.passed:
            if passed.rule in self._rules:
                cov, mode = self._rules[passed.rule]
                cov.counts["false" if mode == "when" else "true"] += 1
            traces.append(passed)
        matched: set[tuple[str, int]] = set()
        for trace in v.classification_traces:
            key = (trace.span.source.name, trace.span.start)
            cell = self._cells.get(key)
            if cell is not None:
                state = {"matched": "true", "not matched": "false"}.get(trace.outcome, "unknown")
                cell.counts[state] += 1
                if state == "true":
                    matched.add(key)
            traces.append(trace)
        for cells, otherwise in self._classifiers:
            if matched & set(cells):  # an earlier cell decided: `otherwise` was false
                self._cells[otherwise].counts["false"] += 1
        states: dict[str, str] = {}  # a let has one value per episode, however many traces show it
        for trace in traces:
            for name, value in let_values(trace.root):
                states.setdefault(name, value_state(value))
        for name, state in states.items():
            if name in self._lets:
                self._lets[name].counts[state] += 1

    @property
    def total(self) -> int:
        return sum(len(i.required) for i in self.items)

    @property
    def covered(self) -> int:
        return self.total - sum(len(i.missing()) for i in self.items)

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 100.0

    def uncovered(self) -> list[str]:
        out = []
        for item in self.items:
            texts = _LET_TEXT if item.kind == "let" else {}
            for d in item.missing():
                out.append(f"{item.location}: {item.kind} `{item.name}` {texts.get(d, _MISSING_TEXT[d])}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"ruleset": self.info.to_json(), "covered": self.covered, "total": self.total,
                "percent": round(self.percent, 1), "items": [i.to_json() for i in self.items],
                "uncovered": self.uncovered()}
