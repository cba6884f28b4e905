"""Explanation traces as data: which rule and clause decided, and every sub-expression's value.

A trace is built after the fact from the rule's AST and the values the recording evaluator stored,
so the fast path pays nothing for it (trace_build.py makes the tree, the blame and the JSON).
Renderers (text, JSON) live in `render.py`.
"""

from __future__ import annotations

import copy

from typing import Any, Mapping

from litmus_rules.lang import ast
from litmus_rules.lang.trace_memo import TraceMemo, records_key
from litmus_rules.source import Span
from litmus_rules.lang.trace_build import _ABSENT, JSONTraceBuilder, JSONValues, TraceBuilder, TraceNode, _BlameBuilder


class RuleTrace:
    """The trace of one decision: a reject rule, or a classification cell.

    The recorded values are captured when the decision is made; the TraceNode tree over them is
    built on first access, so a caller that only counts verdicts never pays for it. The JSON is
    built straight from the AST and the recorded values (`to_json`), not through that tree.
    """

    __slots__ = ("rule", "clause", "outcome", "span", "_condition", "_rec", "_lets", "_root", "_json", "_key")

    def __init__(
        self,
        rule: str,  # rule name, or the cell's label
        clause: str,  # `reject when`, `reject unless`, `"executed" when`, `otherwise`
        outcome: str,  # `violated`, `insufficient evidence`, `error`, `passed`, `matched`, `not matched`, `undecided`
        span: Span,
        condition: ast.Expr | None = None,
        rec: Mapping[Any, Any] | None = None,
        lets: Mapping[str, ast.Let] | None = None,
    ) -> None:
        self.rule, self.clause, self.outcome, self.span = rule, clause, outcome, span
        self._condition, self._rec, self._lets = condition, rec, lets
        self._root: TraceNode | None = None
        self._json: tuple[dict[str, Any], dict[str, Any]] | None = None  # (full, compact), once pickled
        self._key: Any = _ABSENT  # `records_key` of the recorded values, once asked for

    def __getstate__(self) -> dict[str, Any]:
        """What crosses a process boundary (a Dask worker's verdicts): the recorded values are keyed
        by the `id()` of this process's AST nodes, which mean nothing in another process, so the
        trace goes as what it shows (its node tree and both JSON forms), not as what it was made of."""
        return {"rule": self.rule, "clause": self.clause, "outcome": self.outcome, "span": self.span,
                "root": self.root, "json": (self.to_json(), self.to_json(compact=True))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.rule, self.clause, self.outcome, self.span = state["rule"], state["clause"], state["outcome"], state["span"]
        self._condition, self._rec, self._lets = None, None, None
        self._root, self._json, self._key = state["root"], state["json"], None

    @property
    def root(self) -> TraceNode | None:
        if self._root is None and self._condition is not None:
            self._root = TraceBuilder(self._rec or {}, self._lets or {}).build(self._condition)
        return self._root

    def blame(self) -> tuple[list[str], list[str]]:
        """The root's `missing_paths()` and `unknown_lets()`, without building the tree if it is not
        built yet."""
        if self._root is None and self._condition is not None:
            condition = self._condition
            # a blame is a function of the records: the same ones, the same (read-only) blame
            missing, lets = _BLAMES.built(condition, self._records(), lambda: tuple(map(
                tuple, _BlameBuilder(self._rec or {}, self._lets or {}).blame(condition))))
            return list(missing), list(lets)
        root = self.root
        return (root.missing_paths(), root.unknown_lets()) if root is not None else ([], [])

    def _records(self) -> Any:
        """The recorded values as a key (lang/trace_memo.py), or None when they cannot be one."""
        if self._key is _ABSENT:
            self._key = records_key(self._condition, self._rec) if self._condition is not None and self._rec else None
        return self._key

    def __repr__(self) -> str:
        return f"RuleTrace({self.rule!r}, {self.clause!r}, {self.outcome!r})"

    def to_json(self, compact: bool = False, values: JSONValues | None = None) -> dict[str, Any]:
        """The trace as JSON, in one pass over the condition. `compact`: the condition's own
        evaluated nodes only, each with its value, fact path and witness binding; a let shows its
        name and value but not its definition, and what was not evaluated is left out. `values`:
        the copies of values to share with the other traces of one verdict (`Verdict.to_json`)."""
        if self._json is not None:
            return copy.deepcopy(self._json[1 if compact else 0])
        condition = None
        if self._condition is not None:
            tree, rec, lets = self._condition, self._rec or {}, self._lets or {}

            def build() -> Any:
                return JSONTraceBuilder(rec, lets, compact=compact, values=values).build(tree)

            # a trace recorded as an earlier one was is that one's JSON (`values.shared`: the writer's memo)
            shared = values.shared if values is not None else None
            condition = build() if shared is None else shared.built(tree, self._records(), build, compact)
        d: dict[str, Any] = {
            "rule": self.rule,
            "clause": self.clause,
            "outcome": self.outcome,
            "location": f"{self.span.source.name}:{self.span.line}",
            "condition": condition,
        }
        if compact and condition is not None:
            d["compact"] = True  # additive: `--explain full` gives the whole tree
        return d


# RuleTrace.blame's answers by recorded values: read-only tuples, so shared with every caller
_BLAMES = TraceMemo()
