"""Streaming counts over verdict JSON objects: what `check --format json` and the report's JSON
summarize. One pass, memory proportional to the number of distinct labels and groups, not episodes.

Counts (each a name -> count mapping):
- `verdict`: SCORED / REJECTED / ERROR;
- `reason`: every reason of every REJECTED episode, so an episode rejected by three rules counts
  under each of the three: these add up to more than the REJECTED total;
- `reason_alone`: REJECTED episodes with exactly one reason, under that reason ("rejected by this
  rule alone"); `several` in `rejected_by_several` for the rest;
- `classification`: the label of every SCORED episode (null as "none");
- `observed_classification`: the label of every REJECTED episode that had an agent run;
- `reason_kind`: every reason's kind (violation, insufficient_evidence, evaluation_error, invalid_input).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

VERDICTS = ("SCORED", "REJECTED", "ERROR")
NONE_LABEL = "none"  # a classification that is null (undecided: fail closed)
NO_GROUP = "(none)"  # a verdict without this grouping key
MAX_GROUPS = 10_000  # distinct groups kept; the rest are counted under "(other)"
OTHER_GROUP = "(other)"

SUMMARY_NOTE = (
    "`reason` counts every reason, so an episode rejected by several rules is counted under each and the "
    "reason counts add up to more than REJECTED; `reason_alone` counts the episodes rejected by that rule only, "
    "and `rejected_by_several` the rest."
)


class Counts:
    """The counts of one set of verdicts (the whole batch, or one group)."""

    __slots__ = ("verdict", "reason", "reason_alone", "classification", "observed_classification", "reason_kind",
                 "several")

    def __init__(self) -> None:
        self.verdict: Counter[str] = Counter()
        self.reason: Counter[str] = Counter()
        self.reason_alone: Counter[str] = Counter()
        self.classification: Counter[str] = Counter()
        self.observed_classification: Counter[str] = Counter()
        self.reason_kind: Counter[str] = Counter()
        self.several = 0

    def add(self, v: Mapping[str, Any]) -> None:
        verdict = v.get("verdict")
        self.verdict[verdict] += 1
        reasons = v.get("reasons") or ()
        if verdict == "REJECTED":
            for r in reasons:
                self.reason[r.get("rule")] += 1
                self.reason_kind[r.get("kind")] += 1
            if len(reasons) == 1:
                self.reason_alone[reasons[0].get("rule")] += 1
            else:
                self.several += 1
            observed = v.get("observed_classification")
            if observed is not None:
                self.observed_classification[observed] += 1
        elif verdict == "SCORED":
            self.classification[v.get("classification") or NONE_LABEL] += 1
        else:
            for r in reasons:
                self.reason_kind[r.get("kind")] += 1

    @property
    def episodes(self) -> int:
        return sum(self.verdict.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "verdict": {k: self.verdict[k] for k in VERDICTS},
            "reason": _sorted(self.reason),
            "reason_alone": _sorted(self.reason_alone),
            "rejected_by_several": self.several,
            "classification": _sorted(self.classification),
            "observed_classification": _sorted(self.observed_classification),
            "reason_kind": _sorted(self.reason_kind),
        }


def _sorted(c: Counter[str]) -> dict[str, int]:
    return {str(k): n for k, n in sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0])))}


def parse_by(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """`run.model,run.attack` -> ("run.model", "run.attack"); a bare `model` means `run.model`."""
    if text is None:
        return ()
    items = text.split(",") if isinstance(text, str) else list(text)
    out = []
    for item in items:
        item = item.strip()
        if item:
            out.append(item if "." in item else f"run.{item}")
    return tuple(out)


def group_value(v: Mapping[str, Any], key: str) -> str:
    """The value of a dotted key (`run.model`) in a verdict, as text; NO_GROUP when absent."""
    node: Any = v
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return NO_GROUP
        node = node[part]
    if node is None:
        return NO_GROUP
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


class Summary:
    """Counts overall and per group (`by`: dotted keys of the verdict JSON, usually `run.*`)."""

    def __init__(self, by: Iterable[str] = ()) -> None:
        self.by = tuple(by)
        self.total = Counts()
        self.groups: dict[tuple[str, ...], Counts] = {}

    def group_of(self, v: Mapping[str, Any]) -> tuple[str, ...]:
        key = tuple(group_value(v, k) for k in self.by)
        if key not in self.groups and len(self.groups) >= MAX_GROUPS:
            key = tuple(OTHER_GROUP for _ in self.by)
        return key

    def add(self, v: Mapping[str, Any]) -> tuple[str, ...]:
        self.total.add(v)
        if not self.by:
            return ()
        key = self.group_of(v)
        counts = self.groups.get(key)
        if counts is None:
            counts = self.groups[key] = Counts()
        counts.add(v)
        return key

    def sorted_groups(self) -> list[tuple[tuple[str, ...], Counts]]:
        return sorted(self.groups.items(), key=lambda kv: kv[0])

    def to_json(self) -> dict[str, Any]:
        total = self.total.to_json()
        doc: dict[str, Any] = {
            "episodes": total["episodes"],
            **total["verdict"],  # the keys the summary always had
            "counts": total,
            "note": SUMMARY_NOTE,
        }
        if self.by:
            doc["groups"] = {
                "by": list(self.by),
                "rows": [{"group": dict(zip(self.by, key)), **c.to_json()} for key, c in self.sorted_groups()],
            }
        return doc
