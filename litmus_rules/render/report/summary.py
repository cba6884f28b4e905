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


Digest = tuple  # (verdict, classification, reason rules, reason kinds, observed_classification)


def _key(value: Any) -> str:
    """A count's key: verdict files are untrusted, and a list where a label belongs must count
    (as its text), not crash the report."""
    return value if type(value) is str else str(value)


def unpack_reasons(reasons: Any) -> tuple[tuple[str, ...], tuple[str, ...], list[dict[str, Any] | None]]:
    """(rules, kinds, first witnesses) of a verdict's reasons, in one loop: the per-reason work of
    both the counts and the report's breakdown."""
    rules: list[str] = []
    kinds: list[str] = []
    firsts: list[dict[str, Any] | None] = []
    if isinstance(reasons, list):
        for r in reasons:
            if isinstance(r, dict):
                rule, kind, w = r.get("rule"), r.get("kind"), r.get("witnesses")
                first = w[0] if isinstance(w, list) and w and isinstance(w[0], dict) else None
            else:
                rule = kind = first = None
            rules.append(rule if type(rule) is str else str(rule))
            kinds.append(kind if type(kind) is str else str(kind))
            firsts.append(first)
    return tuple(rules), tuple(kinds), firsts


def digest(v: Mapping[str, Any], rules: tuple[str, ...] | None = None, kinds: tuple[str, ...] = ()) -> Digest:
    """What the counts need of one verdict, as a hashable tuple: a batch has few distinct digests
    (a handful of verdict x label x reason combinations), so counting digests and expanding them at
    the end costs one tuple and one dict update per verdict, whatever the number of groups.
    `rules` and `kinds`: the verdict's `unpack_reasons`, when the caller has them already."""
    verdict = _key(v.get("verdict"))
    if verdict == "SCORED":
        return (verdict, _key(v.get("classification") or NONE_LABEL), (), (), None)
    if rules is None:
        rules, kinds, _ = unpack_reasons(v.get("reasons"))
    observed = v.get("observed_classification") if verdict == "REJECTED" else None
    return (verdict, None, rules, kinds, None if observed is None else _key(observed))


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

    def add_digest(self, d: Digest, n: int = 1) -> None:
        verdict, label, rules, kinds, observed = d
        self.verdict[verdict] += n
        if verdict == "SCORED":
            self.classification[label] += n
            return
        for kind in kinds:
            self.reason_kind[kind] += n
        if verdict == "REJECTED":
            for rule in rules:
                self.reason[rule] += n
            if len(rules) == 1:
                self.reason_alone[rules[0]] += n
            else:
                self.several += n
            if observed is not None:
                self.observed_classification[observed] += n

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


def group_value(v: Mapping[str, Any], key: str | tuple[str, ...]) -> str:
    """The value of a dotted key (`run.model`, or its parts) in a verdict, as text; NO_GROUP when
    absent."""
    node: Any = v
    for part in key.split(".") if isinstance(key, str) else key:
        if not isinstance(node, dict) or part not in node:
            return NO_GROUP
        node = node[part]
    if node is None:
        return NO_GROUP
    if isinstance(node, bool):
        return "true" if node else "false"
    return node if type(node) is str else str(node)


# Distinct (group, digest) pairs held before they are expanded into the groups' counts: bounds the
# tally's memory on a batch whose reasons are all different (hostile rule names, say).
TALLY_LIMIT = 50_000


class Summary:
    """Counts overall and per group (`by`: dotted keys of the verdict JSON, usually `run.*`)."""

    def __init__(self, by: Iterable[str] = ()) -> None:
        self.by = tuple(by)
        self._paths = tuple(tuple(k.split(".")) for k in self.by)
        self._total = Counts()
        self._groups: dict[tuple[str, ...], Counts] = {}
        self._tally: Counter[tuple[tuple[str, ...], Digest]] = Counter()

    def group_of(self, v: Mapping[str, Any]) -> tuple[str, ...]:
        key = tuple(group_value(v, path) for path in self._paths)
        if key not in self._groups:
            if len(self._groups) >= MAX_GROUPS:
                key = tuple(OTHER_GROUP for _ in self.by)
            if key not in self._groups:
                self._groups[key] = Counts()
        return key

    def add(self, v: Mapping[str, Any], d: Digest | None = None) -> tuple[str, ...]:
        """Count one verdict (`d`: its `digest`, when the caller made it); its group's key."""
        key = self.group_of(v) if self.by else ()
        tally = self._tally
        tally[(key, digest(v) if d is None else d)] += 1
        if len(tally) > TALLY_LIMIT:
            self._flush()
        return key

    def _flush(self) -> None:
        for (key, d), n in self._tally.items():
            self._total.add_digest(d, n)
            if self.by:
                self._groups[key].add_digest(d, n)
        self._tally.clear()

    @property
    def total(self) -> Counts:
        self._flush()
        return self._total

    @property
    def groups(self) -> dict[tuple[str, ...], Counts]:
        self._flush()
        return self._groups

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
