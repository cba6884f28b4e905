"""The report's numbers, computed in one streaming pass over verdict JSON objects: no verdict is
kept, so memory stays flat however many there are. Presentation (HTML, Markdown) is elsewhere
(render/report/present.py) and reads only the document `ReportBuilder.build` returns, which is also
the `--format json` output (schema: docs/report.md).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from litmus_rules.engine.verdict import TOOL_VERSION
from litmus_rules.render.report.stats import chi2_independence, wilson
from litmus_rules.render.report.summary import NONE_LABEL, Counts, Summary, digest, unpack_reasons

SCHEMA = "litmus-report/1"
ATTACKED = "executed"  # the label that means the attack took effect
ALPHA = 0.05
RESIDUAL_LIMIT = 1.959963984540054  # |adjusted residual| past which a group is flagged
TOP_WITNESSES = 3
MAX_BREAKDOWN_ROWS = 1_000  # distinct (rule, surface, transform) cells kept; the rest under "(other)"
ABC_PREFIX = "abc:"
_INDEX = re.compile(r"\[[^\]]*\]")


@functools.lru_cache(maxsize=4096)  # a batch repeats a few thousand origins at most
def surface_kind(origin: Any) -> str:
    """`context.tools[1].input_schema.$defs.X.enum[2]` -> `tools.input_schema`: the part of the
    context a witness was found in, without indices or the path inside it."""
    if not isinstance(origin, str) or not origin:
        return "-"
    parts = [p for p in _INDEX.sub("", origin).split(".") if p]
    if parts and parts[0] == "context":
        parts = parts[1:]
    return ".".join(parts[:2]) or origin


class _Groups:
    def __init__(self) -> None:
        self.baselines: dict[str, Counter[str]] = {"trivial_empty": Counter(), "trivial_dump": Counter()}
        # the harness's own verdicts: known / fired over every episode, and over the SCORED ones
        self.harness: Counter[str] = Counter()


class ReportBuilder:
    """Feed it verdicts (`add`), then `build` the report document."""

    def __init__(self, by: Sequence[str] = (), rules_meta: Sequence[Mapping[str, Any]] = ()) -> None:
        self.by = tuple(by)
        self.summary = Summary(self.by)
        self.rules_meta = list(rules_meta)
        self.items: dict[str, list[str]] = {}  # ABC item -> rules tagged with it
        self.rule_items: dict[str, list[str]] = {}
        for rule in self.rules_meta:
            for tag in rule.get("tags") or ():
                if isinstance(tag, str) and tag.startswith(ABC_PREFIX):
                    item = tag[len(ABC_PREFIX):]
                    self.items.setdefault(item, []).append(rule["name"])
                    self.rule_items.setdefault(rule["name"], []).append(item)
        self.item_hits: Counter[str] = Counter()
        self.breakdown: Counter[tuple[str, str, str]] = Counter()
        self.witnesses: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.total_extra = _Groups()
        self.group_extra: dict[tuple[str, ...], _Groups] = {}
        self.rulesets: Counter[str] = Counter()
        self.params: Counter[str] = Counter()
        self.versions: Counter[str] = Counter()
        self.with_baselines = 0
        self.with_harness = 0
        self._last_ruleset: Any = object()
        self._last_params: Any = object()
        self._ruleset_key = self._params_key = ""

    def add(self, v: Mapping[str, Any]) -> None:
        rejected = v.get("verdict") == "REJECTED"
        if rejected:
            rules, kinds, firsts = unpack_reasons(v.get("reasons"))
            key = self.summary.add(v, digest(v, rules, kinds))
        else:
            key = self.summary.add(v)
        # almost every verdict repeats the previous one's ruleset and params: compare, serialize rarely
        ruleset, params = v.get("ruleset"), v.get("params")
        if ruleset != self._last_ruleset:
            self._last_ruleset, self._ruleset_key = ruleset, json.dumps(ruleset, sort_keys=True, default=str)
        if params != self._last_params:
            self._last_params, self._params_key = params, json.dumps(params, sort_keys=True, default=str)
        self.rulesets[self._ruleset_key] += 1
        self.params[self._params_key] += 1
        version = v.get("litmus_rules_version")
        self.versions[version if type(version) is str else str(version)] += 1
        baselines, harness = v.get("baselines"), v.get("harness")
        if isinstance(baselines, dict) or isinstance(harness, dict):
            self._add_runs(key, v, baselines, harness)
        if rejected:
            self._add_rejection(v, rules, firsts)

    def _add_runs(self, key: tuple[str, ...], v: Mapping[str, Any], baselines: Any, harness: Any) -> None:
        """The trivial agents' and the harness's own verdicts, overall and in the verdict's group."""
        extras = [self.total_extra]
        if self.by:
            extra = self.group_extra.get(key)
            if extra is None:
                extra = self.group_extra[key] = _Groups()
            extras.append(extra)
        if isinstance(harness, dict):
            self.with_harness += 1
            fired = harness.get("fired")
            scored = v.get("verdict") == "SCORED"
            for e in extras:
                if isinstance(fired, bool):
                    e.harness["known"] += 1
                    e.harness["fired"] += fired
                    if scored:
                        e.harness["scored_known"] += 1
                        e.harness["scored_fired"] += fired
                else:
                    e.harness["unknown"] += 1
        if isinstance(baselines, dict):
            self.with_baselines += 1
            for name in ("trivial_empty", "trivial_dump"):
                if name in baselines:
                    fired = baselines[name]
                    state = "fired" if fired is True else "not_fired" if fired is False else "unknown"
                    for e in extras:
                        e.baselines[name][state] += 1

    def _add_rejection(self, v: Mapping[str, Any], rules: Sequence[str], firsts: Sequence[dict[str, Any] | None]) -> None:
        """Each reason's (rule, surface kind, transform) cell, its first witnesses, and the checklist
        items its rule checks."""
        hit: set[str] = set()
        breakdown, rule_items = self.breakdown, self.rule_items
        for rule, first in zip(rules, firsts):
            items = rule_items.get(rule)
            if items:
                hit.update(items)
            if not first:
                cell = (rule, "-", "-")
            else:
                origin, transform = first.get("origin"), first.get("transform")
                cell = (rule, surface_kind(origin) if type(origin) is str else "-", str(transform or "-"))
            if cell not in breakdown and len(breakdown) >= MAX_BREAKDOWN_ROWS:
                cell = ("(other)", "-", "-")
            breakdown[cell] += 1
            if first:
                kept = self.witnesses.setdefault(cell, [])
                if len(kept) < TOP_WITNESSES:
                    kept.append({
                        "episode": v.get("id"),
                        "origin": first.get("origin"),
                        "matched": first.get("matched"),
                        "injected": first.get("injected"),
                        "kind": first.get("kind"),
                    })
        for item in hit:
            self.item_hits[item] += 1

    # ---- the document ----------------------------------------------------------------------------------

    def _label(self, key: tuple[str, ...]) -> str:
        return ", ".join(f"{k.removeprefix('run.')}={v}" for k, v in zip(self.by, key)) or "all"

    def _groups(self) -> list[tuple[dict[str, str], str, Counts, _Groups | None]]:
        rows: list[tuple[dict[str, str], str, Counts, _Groups | None]] = [({}, "all", self.summary.total, self.total_extra)]
        for key, counts in self.summary.sorted_groups():
            rows.append((dict(zip(self.by, key)), self._label(key), counts, self.group_extra.get(key)))
        return rows

    def build(self, inputs: Sequence[Mapping[str, Any]] = (), generated_at: str | None = None,
              checklist_source: Mapping[str, Any] | None = None) -> dict[str, Any]:
        groups = self._groups()
        return {
            "schema": SCHEMA,
            "generated_at": generated_at,
            "litmus_rules_version": TOOL_VERSION,
            "provenance": self._provenance(inputs),
            "by": list(self.by),
            "summary": self.summary.to_json(),
            "flow": self._flow(groups),
            "rates": self._rates(groups),
            "rejections": self._rejections(),
            "baselines": self._baselines(groups),
            "harness": self._harness(groups),
            "checklist": self._checklist(checklist_source),
        }

    def _provenance(self, inputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        def listed(counter: Counter[str], name: str) -> list[dict[str, Any]]:
            return [{name: json.loads(k), "episodes": n} for k, n in counter.most_common()]

        rulesets = listed(self.rulesets, "ruleset")
        params = listed(self.params, "params")
        return {
            "rulesets": rulesets,
            "params": params,
            "overrides": sorted({p["name"] for row in params for p in (row["params"] or ()) if p.get("override")}),
            "verdict_versions": dict(self.versions.most_common()),
            "inputs": list(inputs),
            "consistent": len(rulesets) <= 1 and len(params) <= 1,
        }

    def _flow(self, groups: list[tuple[dict[str, str], str, Counts, _Groups | None]]) -> dict[str, Any]:
        rules = sorted({r for _, _, c, _ in groups for r in c.reason_alone})
        rows = []
        for group, label, c, _ in groups:
            n = c.episodes
            rows.append({
                "group": group,
                "label": label,
                "input": n,
                "error": c.verdict["ERROR"],
                "rejected": c.verdict["REJECTED"],
                "rejected_alone": {r: c.reason_alone[r] for r in rules},
                "rejected_by_several": c.several,
                "scored": c.verdict["SCORED"],
                "scored_share": c.verdict["SCORED"] / n if n else None,
                "residual": None,
                "uneven": False,
            })
        test = None
        note = None
        grouped = rows[1:]
        if len(grouped) >= 2:
            table = [[r["scored"], r["rejected"], r["error"]] for r in grouped]
            result = chi2_independence(table)
            if result is not None:
                for r, residuals in zip(grouped, result["residuals"]):  # type: ignore[call-overload]
                    r["residual"] = residuals[0]  # the SCORED column: kept more (+) or fewer (-) than expected
                    r["uneven"] = result["p_value"] < ALPHA and abs(residuals[0]) > RESIDUAL_LIMIT  # type: ignore[operator]
                test = {k: result[k] for k in ("statistic", "dof", "p_value", "min_expected")}
                test["alpha"] = ALPHA
                test["uneven"] = result["p_value"] < ALPHA  # type: ignore[operator]
                if result["min_expected"] < 5:  # type: ignore[operator]
                    note = "an expected count is below 5: the chi-square approximation is rough"
            else:
                note = "every group has the same single outcome: nothing to test"
        else:
            note = "fewer than two groups: no test (use --by)"
        return {"rules": rules, "columns": ["scored", "rejected", "error"], "groups": rows, "test": test, "note": note}

    def _rates(self, groups: list[tuple[dict[str, str], str, Counts, _Groups | None]]) -> dict[str, Any]:
        labels = sorted({lab for _, _, c, _ in groups for lab in (*c.classification, *c.observed_classification)},
                        key=lambda lab: (lab != ATTACKED, lab == NONE_LABEL, lab))
        out = []
        for group, label, c, _ in groups:
            scored = c.verdict["SCORED"]
            rejected = c.verdict["REJECTED"]
            observed = sum(c.observed_classification.values())
            naive_n = scored + observed
            rates = []
            for lab in labels:
                k = c.classification[lab]
                k_naive = k + c.observed_classification[lab]
                rates.append({
                    "label": lab,
                    "validated": _rate(k, scored),
                    "naive": _rate(k_naive, naive_n),
                    # every REJECTED episode counted as this label (upper) or as another (lower)
                    "bounds": {
                        "rejected_all_label": (k + rejected) / (scored + rejected) if scored + rejected else None,
                        "rejected_none_label": k / (scored + rejected) if scored + rejected else None,
                    },
                    "shift": (k / scored - k_naive / naive_n) if scored and naive_n else None,
                })
            out.append({"group": group, "label": label, "scored": scored, "rejected": rejected,
                        "rejected_classified": observed, "naive_n": naive_n, "rates": rates})
        return {"attacked_label": ATTACKED, "labels": labels, "groups": out}

    def _rejections(self) -> dict[str, Any]:
        rows = [
            {"rule": rule, "surface": surface, "transform": transform, "count": n,
             "witnesses": self.witnesses.get((rule, surface, transform), [])}
            for (rule, surface, transform), n in sorted(self.breakdown.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        return {"rows": rows, "note": "one row per reason; a witness is the strongest of its reason (its first)"}

    def _baselines(self, groups: list[tuple[dict[str, str], str, Counts, _Groups | None]]) -> dict[str, Any]:
        if not self.with_baselines:
            return {
                "available": False,
                "note": "no verdict carries trivial-agent runs: run `litmus-rules preflight` on the episodes "
                        "(it adds the do-nothing `trivial_empty` and dump-everything `trivial_dump` controls), "
                        "then `check` them again",
                "groups": [],
            }
        rows = []
        for group, label, _, extra in groups:
            if extra is None:
                continue
            row: dict[str, Any] = {"group": group, "label": label}
            for name, c in extra.baselines.items():
                known = c["fired"] + c["not_fired"]
                row[name] = {"fired": c["fired"], "not_fired": c["not_fired"], "unknown": c["unknown"],
                             **_rate(c["fired"], known)}
            rows.append(row)
        return {"available": True, "episodes_with_runs": self.with_baselines,
                "note": "how often a trivial agent's run was scored as attacked (the scorer fired)", "groups": rows}

    def _harness(self, groups: list[tuple[dict[str, str], str, Counts, _Groups | None]]) -> dict[str, Any]:
        """The benchmark's own number beside the validated one: how often the harness's scorer said
        "attacked", over every episode it labelled (naive) and over the SCORED ones (validated)."""
        if not self.with_harness:
            return {"available": False, "groups": [],
                    "note": "no verdict carries the harness's own verdict (episode/1.1 `episode.label` / `fired`)"}
        rows = []
        for group, label, _, extra in groups:
            if extra is None:
                continue
            h = extra.harness
            rows.append({"group": group, "label": label, "unknown": h["unknown"],
                         "naive": _rate(h["fired"], h["known"]),
                         "validated": _rate(h["scored_fired"], h["scored_known"]),
                         "rejected": h["known"] - h["scored_known"]})
        return {"available": True, "episodes_with_verdict": self.with_harness, "groups": rows,
                "note": "the harness's attack-success rate as it would publish it (naive), and over the episodes "
                        "litmus_rules SCORED (validated); n/a when every labelled episode was rejected"}

    def _checklist(self, source: Mapping[str, Any] | None) -> dict[str, Any]:
        items = [
            {"item": item, "rules": sorted(rules), "episodes_flagged": self.item_hits[item],
             "cite": sorted({str(r.get("cite")) for r in self.rules_meta if r["name"] in rules and r.get("cite")})}
            for item, rules in sorted(self.items.items())
        ]
        note = None if items else (
            f"no rule carries an `{ABC_PREFIX}` tag: the ruleset does not say which Agentic Benchmark Checklist "
            "items it checks")
        return {"tag_prefix": ABC_PREFIX, "rules_from": dict(source) if source else None, "items": items, "note": note}


def _rate(k: int, n: int) -> dict[str, Any]:
    interval = wilson(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None,
            "lo": interval[0] if interval else None, "hi": interval[1] if interval else None}


def build_report(verdicts: Iterable[Mapping[str, Any]], by: Sequence[str] = (),
                 rules_meta: Sequence[Mapping[str, Any]] = (), **kwargs: Any) -> dict[str, Any]:
    builder = ReportBuilder(by, rules_meta)
    for v in verdicts:
        builder.add(v)
    return builder.build(**kwargs)
