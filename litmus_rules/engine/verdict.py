"""What evaluation returns: a Verdict per episode, with its reasons and traces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litmus_rules._resources import installed_version
from litmus_rules.lang.records import record
from litmus_rules.lang.trace import RuleTrace
from litmus_rules.lang.trace_build import JSONValues, finite_name
from litmus_rules.lang.trace_memo import TraceMemo

SCORED = "SCORED"
REJECTED = "REJECTED"
ERROR = "ERROR"


def _tool_version() -> str:
    return installed_version() or "unknown"  # None: a source checkout that was never installed


TOOL_VERSION = _tool_version()


class VerdictJSON(dict):  # type: ignore[type-arg]
    """A verdict's JSON object as `Verdict.to_json` builds it: a plain dict whose every float is
    finite (a non-finite one is already written as its name, "NaN" / "Infinity" / "-Infinity").
    render/json trusts that and skips its own search for non-finite floats in it, which would cost
    more than writing the document. Treat it as read-only: a copy (`dict(v)`) is a plain dict again."""

    __slots__ = ()


def finite(value: Any) -> Any:
    """A copy of `value` with every non-finite float replaced by its name (for the few small parts
    of a verdict that come from an episode or the command line: `run`, params, witnesses)."""
    cls = value.__class__
    if cls is float:
        return value if value - value == 0 else finite_name(value)
    if cls is str or cls is bool or cls is int or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, float):
        return float(value) if value - value == 0 else finite_name(value)
    return value


@record
class RulesetInfo:
    name: str
    version: str
    hash: str  # "sha256:..." over every rule file's path and content
    # The effective params, in declaration order: (name, value, overridden). A verdict records them
    # (`params`), so that a verdict given under `--param` overrides says so and can be reproduced.
    params: tuple[tuple[str, Any, bool], ...] = ()
    # The config file the command line read (`litmus.toml`, `[tool.litmus-rules]`): (path, sha256).
    config: tuple[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "version": self.version, "hash": self.hash}
        if self.config is not None:
            d["config"] = {"path": self.config[0], "sha256": self.config[1]}
        return d

    def params_json(self) -> list[dict[str, Any]]:
        return [{"name": n, "value": finite(v), "override": o} for n, v, o in self.params]


def params_info(values: Mapping[str, Any], overridden: Any) -> tuple[tuple[str, Any, bool], ...]:
    """The `RulesetInfo.params` of bound param values and the names the caller overrode."""
    return tuple((name, value, name in overridden) for name, value in values.items())


def episode_extras(episode: Any) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """What a verdict copies from its episode for the report, as `Verdict`'s (run, baselines,
    harness), None where the episode has none: its grouping keys (`run`), where preflight ran them,
    whether the trivial agents' runs fired the scorer (`baselines`), and the harness's own verdict."""
    # (`x.__class__ is dict` first: the abc check of isinstance(x, Mapping) is slow, and this runs
    # once per episode)
    if episode.__class__ is not dict and not isinstance(episode, Mapping):
        return None, None, None
    out_run = baselines = harness = None
    run = episode.get("run")
    if run is not None and (run.__class__ is dict or isinstance(run, Mapping)) and run:
        out_run = {k: v for k, v in run.items() if isinstance(v, (str, int, float, bool)) or v is None}
    controls = episode.get("controls")
    if controls is not None and (controls.__class__ is dict or isinstance(controls, Mapping)):
        for name in ("trivial_empty", "trivial_dump"):
            control = controls.get(name)
            if control is not None and isinstance(control, Mapping) and "fired" in control:
                fired = control.get("fired")
                if baselines is None:
                    baselines = {}
                baselines[name] = fired if isinstance(fired, bool) else None
    if "episode" in episode:  # (checked here: most episodes have no agent run, and this is per episode)
        harness = _harness_verdict(episode)
    return out_run, baselines, harness


def _harness_verdict(episode: Mapping[str, Any]) -> dict[str, Any] | None:
    """The harness's own verdict on the agent run (episode/1.1 `episode.label` / `fired`), for the
    report's naive rate: `fired` as recorded, else whether the label is a positive one; None when
    the label is invalid or the positive labels are not known."""
    run = episode.get("episode")
    if run is None or not isinstance(run, Mapping) or ("label" not in run and "fired" not in run):
        return None
    label, fired = run.get("label"), run.get("fired")
    detector = episode.get("detector") if isinstance(episode.get("detector"), Mapping) else {}
    positive, invalid = detector.get("positive_labels"), detector.get("invalid_labels")
    if not isinstance(fired, bool):
        fired = None
        if isinstance(label, str) and not (isinstance(invalid, list) and label in invalid) and isinstance(positive, list):
            fired = label in positive
    return {"label": label if isinstance(label, str) else None, "fired": fired}


@record(frozen=False)  # not frozen: built for every reject on the hot path; treat it as read-only
class Reason:
    """Why an episode was rejected (or, for ERROR, why it could not be evaluated)."""

    rule: str  # the rule's name as written, or `input` for an ERROR
    message: str
    kind: str  # `violation` | `insufficient_evidence` | `evaluation_error` | `invalid_input`
    source: str | None = None  # `rules/validity.litmus:14`
    missing: tuple[str, ...] = ()  # fact paths whose absence made the condition unknown
    trace: RuleTrace | None = None
    code: str | None = None  # for an ERROR: the L3xx input code, or L690 for a fault inside the checker
    # A violation found by `collision` or `leak`: up to five witnesses, strongest first, each
    # {origin, injected, transform, kind ("full" | "partial"), matched}.
    witnesses: tuple[Mapping[str, Any], ...] = ()
    # episode/1.1: the context messages this rule's `surfaces` did not hold (stamped after the
    # decision step), each as `context.messages[2] (step 4): after decision_step 3`.
    left_out: tuple[str, ...] = ()

    def __init__(self, rule: str, message: str, kind: str, source: str | None = None, missing: tuple[str, ...] = (),
                 trace: RuleTrace | None = None, code: str | None = None,
                 witnesses: tuple[Mapping[str, Any], ...] = (), left_out: tuple[str, ...] = ()) -> None:
        # spelled out (hot path): a plain assignment per field
        self.rule = rule
        self.message = message
        self.kind = kind
        self.source = source
        self.missing = missing
        self.trace = trace
        self.code = code
        self.witnesses = witnesses
        self.left_out = left_out

    def to_json(self, with_trace: bool = True, values: JSONValues | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {"rule": self.rule, "kind": self.kind, "message": self.message, "source": self.source}
        if self.code is not None:
            d["code"] = self.code
        if self.missing:
            d["missing"] = list(self.missing)
        if self.witnesses:
            d["witnesses"] = [finite(w) for w in self.witnesses]
        if self.left_out:
            d["left_out"] = list(self.left_out)
        if with_trace:  # a reject's trace is what an auditor reads: always the whole tree
            d["trace"] = self.trace.to_json(values=values) if self.trace is not None else None
        return d


@record(frozen=False)  # not frozen: built once per episode on the hot path; treat it as read-only
class Verdict:
    id: str | None
    verdict: str  # SCORED | REJECTED | ERROR
    reasons: tuple[Reason, ...] = ()
    classification: str | None = None  # the label of the first classifier's matching cell (SCORED only)
    classifications: Mapping[str, str | None] = {}  # noqa: RUF012 - a fresh dict per verdict: see __init__
    classification_traces: tuple[RuleTrace, ...] = ()
    passed: tuple[RuleTrace, ...] = ()  # traces of rules that passed, with explain="full"
    ruleset: RulesetInfo | None = None
    source: str | None = None  # the input file (and line) the episode came from
    # episode/1.1: the context messages left out of `surfaces` (as `Reason.left_out`), when the rules
    # read surfaces: what the verdict did not see, whether a rule rejected on it or passed without it
    left_out: tuple[str, ...] = ()
    # A REJECTED episode with an agent run: the first classifier's label on its records, so that a
    # naive rate (over every classified episode) can be set beside the validated one (over SCORED).
    observed_classification: str | None = None
    run: Mapping[str, Any] | None = None  # the episode's grouping keys, copied for the report
    baselines: Mapping[str, bool | None] | None = None  # trivial_empty / trivial_dump fired, from preflight
    harness: Mapping[str, Any] | None = None  # the harness's own verdict on the agent run: {label, fired}
    # `RuleSet.evaluate(explain=...)`: with "fails" the JSON shows a SCORED episode's classification
    # compactly (the deciding cell only, `RuleTrace.to_json(compact=True)`); "full" shows every cell whole.
    explain: str = "fails"
    # The file that was read, when `source` names another: a preflighted copy's verdict names the
    # file preflight made it from (`source`) and the copy (`checked`; io/origins.py). Else None.
    checked: str | None = None

    def __init__(
        self, id: str | None, verdict: str, reasons: tuple[Reason, ...] = (), classification: str | None = None,
        classifications: Mapping[str, str | None] | None = None, classification_traces: tuple[RuleTrace, ...] = (),
        passed: tuple[RuleTrace, ...] = (), ruleset: RulesetInfo | None = None, source: str | None = None,
        left_out: tuple[str, ...] = (), observed_classification: str | None = None,
        run: Mapping[str, Any] | None = None, baselines: Mapping[str, bool | None] | None = None,
        harness: Mapping[str, Any] | None = None, explain: str = "fails", checked: str | None = None,
    ) -> None:
        # spelled out (hot path): a plain assignment per field
        self.id = id
        self.verdict = verdict
        self.reasons = reasons
        self.classification = classification
        self.classifications = {} if classifications is None else classifications
        self.classification_traces = classification_traces
        self.passed = passed
        self.ruleset = ruleset
        self.source = source
        self.left_out = left_out
        self.observed_classification = observed_classification
        self.run = run
        self.baselines = baselines
        self.harness = harness
        self.explain = explain
        self.checked = checked

    @property
    def scored(self) -> bool:
        return self.verdict == SCORED

    def to_json(self, with_traces: bool = True, *, shared: TraceMemo | None = None) -> VerdictJSON:
        """The verdict JSON of DESIGN's contract, built in one pass (every trace straight from its
        recorded values) and free of non-finite floats (see `VerdictJSON`). `shared`: a memo of
        traces recorded alike (lang/trace_memo.py), whose JSON this one then shares with other
        verdicts': only for a reader that writes the JSON and never changes it."""
        values = JSONValues(shared)  # a value several traces show (a let's, say) is copied once for all
        d = VerdictJSON(
            id=self.id,
            verdict=self.verdict,
            classification=self.classification,
            reasons=[r.to_json(with_traces, values) for r in self.reasons],
            source=self.source,
        )
        if self.checked is not None:
            d["checked"] = self.checked
        if len(self.classifications) > 1:
            d["classifications"] = dict(self.classifications)
        if self.left_out:
            d["left_out"] = list(self.left_out)
        if with_traces and self.classification_traces:
            d["classification_trace"] = self.classification_json(values)
        if with_traces and self.passed:
            d["passed"] = [t.to_json(values=values) for t in self.passed]
        if self.verdict == REJECTED and self.observed_classification is not None:
            d["observed_classification"] = self.observed_classification
        if self.run is not None:
            d["run"] = finite(self.run)
        if self.baselines is not None:
            d["baselines"] = dict(self.baselines)
        if self.harness is not None:
            d["harness"] = dict(self.harness)
        if self.ruleset is not None:
            d["ruleset"] = self.ruleset.to_json()
            d["params"] = self.ruleset.params_json()
        d["litmus_rules_version"] = TOOL_VERSION
        return d

    def classification_json(self, values: JSONValues | None = None) -> list[dict[str, Any]]:
        """`classification_trace`: with explain "full", every cell tried, whole. Otherwise each
        classifier's deciding cell only: the one that matched, compact (its own nodes' values and
        its witness binding), or the one left undecided, whole (what an unknown there rests on)."""
        if self.explain == "full":
            return [t.to_json(values=values) for t in self.classification_traces]
        return [t.to_json(compact=t.outcome == "matched", values=values)
                for t in self.classification_traces if t.outcome != "not matched"]
