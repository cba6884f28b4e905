"""The facade: load rule files once (the stages of engine/stages.py: find -> read -> parse ->
merge -> check -> compile), evaluate episodes many times (validate -> evaluate).

`load_rules` returns a `RuleSet`; `RuleSet.evaluate` returns a `Verdict`. A RuleSet is immutable
after loading and safe to share across threads: all per-episode state lives in an `Env`, and the
caches of per-episode work its environment owns are bounded and thread-safe (cache.py).
"""

from __future__ import annotations

from collections import abc
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Iterable

from litmus_rules._resources import default_rules_dir
from litmus_rules.engine import stages
from litmus_rules.engine.program import Compiled, Program, compile_program
from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED, Reason, RulesetInfo, Verdict, episode_extras, params_info
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import Diagnostic, FactsError, LitmusConfigError, LitmusError, LitmusFault, RuleCheckError
from litmus_rules.lang import ast
from litmus_rules.lang.checker import PARAM_TYPES
from litmus_rules.lang.evaluate import DEFAULT_BUDGET, UNBOUND, Env, Found, truth
from litmus_rules.lang.trace import RuleTrace
from litmus_rules.domain import steps, unknowns
from litmus_rules.domain.predicates import close_episode, open_episode
from litmus_rules.domain.regexes import close_budget, open_budget
from litmus_rules.lang.values import INTERNAL_ERROR, UNKNOWN, BudgetExceeded, EvalFailure, short_repr, type_name

EXPLAIN_MODES = ("fails", "full")


class RuleSet:
    """A loaded, checked and compiled ruleset. Build it with `load_rules` or `load_rules_text`."""

    # What `build` built it from: a Dask worker builds the same ruleset again (a RuleSet does not pickle)
    sources: tuple[tuple[str, str], ...] = ()
    source_params: Mapping[str, Any] = {}

    def __init__(
        self, checked: stages.Checked, program: Program, digest: str, *, budget: int = DEFAULT_BUDGET
    ) -> None:
        """From the stage outputs (engine/stages.py): a checked ruleset without errors, and its
        compiled program."""
        tree = checked.tree
        self.ast = tree
        self.checked = checked  # the check stage's output: the types of every node, for later passes
        self.environment = checked.environment
        self.diagnostics: tuple[Diagnostic, ...] = checked.diagnostics
        self.info = RulesetInfo(tree.name, tree.version, digest, params_info(program.params, program.overridden))
        self.budget = budget
        self.params = program.params
        self._lets = program.lets
        self._derived = checked.environment.derived
        self._names = self._mentioned(tree)
        self._fast_compiler, self._rec_compiler = program.fast_compiler, program.rec_compiler
        self._rules = program.rules
        # (fast closure, the condition value that lets the episode pass, rule) for the hot loop
        self._hot_rules = [(c.fast, c.node.mode == "unless", c) for c in self._rules]  # type: ignore[union-attr]
        self._classifiers = program.classifiers
        # the rules whose condition or message reads `surfaces` (through lets too): their reasons
        # say which context messages the surfaces left out (episode/1.1 steps)
        self._surface_rules = self._reading(tree, "surfaces")
        self._left_out = self._derived.get("left_out") if self.reads("surfaces") else None

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def version(self) -> str:
        return self.info.version

    @property
    def rule_names(self) -> list[str]:
        return [r.name for r in self.ast.rules]

    def reads(self, name: str) -> bool:
        """Does any rule, let or cell mention this name (a fact, say `shared_canaries`)?"""
        return name in self._names

    @staticmethod
    def _reading(tree: ast.RuleSet, fact: str) -> frozenset[str]:
        """The names of the rules that read `fact`, directly or through lets."""
        lets = {item.name: ast.names(item.expr) for item in tree.items if isinstance(item, ast.Let)}
        reading: set[str] = set()
        changed = True
        while changed:  # lets that read it, to a fixed point (lets may use lets)
            changed = False
            for name, uses in lets.items():
                if name not in reading and (fact in uses or uses & reading):
                    reading.add(name)
                    changed = True
        out = set()
        for item in tree.items:
            if isinstance(item, ast.Rule):
                exprs = [item.condition]
                if item.message is not None:
                    exprs.extend(p.expr for p in item.message.parts if isinstance(p, ast.Placeholder))
                uses = set().union(*(ast.names(e) for e in exprs))
                if fact in uses or uses & reading:
                    out.add(item.name)
        return frozenset(out)

    @staticmethod
    def _mentioned(tree: ast.RuleSet) -> frozenset[str]:
        roots: list[ast.Expr] = []
        for item in tree.items:
            if isinstance(item, ast.Let):
                roots.append(item.expr)
            elif isinstance(item, ast.Rule):
                roots.append(item.condition)
                if item.message is not None:
                    roots.extend(p.expr for p in item.message.parts if isinstance(p, ast.Placeholder))
            elif isinstance(item, ast.Classify):
                roots.extend(c.condition for c in item.cells if c.condition is not None)
        names: set[str] = set()
        for root in roots:
            names |= ast.names(root)
        return frozenset(names)

    # ---- evaluation ---------------------------------------------------------------------------------

    def evaluate(
        self,
        episode: Mapping[str, Any],
        *,
        batch: Mapping[str, Any] | None = None,
        explain: str = "fails",
        validate: bool = True,
        source: str | None = None,
        json_traces: bool | None = None,
    ) -> Verdict:
        """Decide one episode. Never raises for bad input: that is an ERROR verdict.

        `json_traces`: for a caller that only writes the verdict as `to_json(with_traces=json_traces)`
        and drops it, the classification traces that JSON leaves out are not recorded (with explain
        "fails" it shows no cell that did not match; without traces, none). None: all of them.

        With `validate=False` the caller vouches for the episode's shape, so an episode that is not
        a mapping at all raises `FactsError` (L304) instead. Any fault inside the evaluation of one
        rule is that rule's `evaluation_error` reject; a fault outside every rule is an ERROR verdict.
        """
        if explain not in EXPLAIN_MODES:
            raise LitmusConfigError(f"explain must be one of {', '.join(EXPLAIN_MODES)}, not `{explain}`")
        is_mapping = episode.__class__ is dict or isinstance(episode, abc.Mapping)  # (typing's is slow)
        if not validate and not is_mapping:
            raise FactsError(
                f"an episode must be an object (a mapping), got {type_name(episode)}",
                source=source,
                code=code_for("not-an-object"),
            )
        episode_id = episode.get("id") if is_mapping else None
        try:
            if validate:  # the io stage, before the episode reaches the rules (as files get it)
                episode, problem = stages.validate(episode, source or "<episode>")
                if problem is not None:
                    invalid = self._invalid(problem, episode_id, source)
                    invalid.run = episode_extras(episode)[0]  # the report groups ERRORs too
                    return invalid
            # each regex's cumulative time limit spans one evaluation; signals read as its format
            # says (the scopes of regexes.regex_budget and predicates.episode_scope, opened here
            # without their context managers: two generator frames per episode on the hot path)
            budget = open_budget()
            try:
                reading = open_episode(episode)
                try:
                    return self._evaluate(episode, episode_id, batch, explain, source, json_traces)
                finally:
                    close_episode(reading)
            finally:
                close_budget(budget)
        except LitmusError:
            raise
        except Exception as exc:  # the last boundary: one episode's fault never ends a batch
            return Verdict(
                id=episode_id if isinstance(episode_id, str) else None,
                verdict=ERROR,
                reasons=(Reason("evaluation", _internal(exc), "evaluation_error", code=INTERNAL_ERROR),),
                ruleset=self.info,
                source=source,
            )

    def _evaluate(
        self,
        episode: Mapping[str, Any],
        episode_id: Any,
        batch: Mapping[str, Any] | None,
        explain: str,
        source: str | None,
        json_traces: bool | None = None,
    ) -> Verdict:
        batch = batch if batch is not None else {}  # a batch of one: no canary is shared
        # facts the producer declared unknown are absent to the rules (domain/unknowns.py)
        facts = unknowns.mask(episode) if episode.get("unknowns") else episode
        fast = Env(facts, batch, self._fast_compiler.nslots, len(self._lets), self.budget)
        reasons: list[Reason] = []
        passed: list[RuleTrace] = []
        spent_in: str | None = None  # the rule in which the evaluation's budget ran out
        for fn, passing, compiled in self._hot_rules:  # (kept lean: this loop runs for every episode)
            failure = None
            try:
                value = fn(fast)
                if value is passing:
                    if explain == "full":
                        passed.append(self._trace(compiled, fast, "passed")[0])
                    continue
                value = truth(value, compiled.node.condition)  # type: ignore[arg-type]
            except BudgetExceeded as exc:
                # one budget for the episode: the rules after the one that used it up are not
                # evaluated, and each says where it went
                value, failure = UNKNOWN, exc.message
                if spent_in is None:
                    spent_in = compiled.name
                else:
                    failure += f" (it ran out in rule `{spent_in}`, before this rule)"
            except EvalFailure as exc:
                value, failure = UNKNOWN, exc.message
            except Exception as exc:  # a fault in one rule fails that rule closed, not the batch
                value, failure = UNKNOWN, _internal(exc)
            if value is passing and failure is None:
                if explain == "full":
                    passed.append(self._trace(compiled, fast, "passed")[0])
                continue
            outcome = "error" if failure else ("insufficient evidence" if value is UNKNOWN else "violated")
            reasons.append(self._reason(compiled, fast, outcome, failure))
        classification: str | None = None
        classifications: dict[str, str | None] = {}
        class_traces: list[RuleTrace] = []
        if not reasons:
            # which cells' traces to record: all, the ones the JSON shows, or none
            shown = 2 if json_traces is None or explain == "full" else (1 if json_traces else 0)
            for classifier, cells, otherwise in self._classifiers:
                label, traces = self._classify(classifier, cells, otherwise, fast, shown)
                classifications[classifier.name] = label
                class_traces.extend(traces)
            if self._classifiers:
                classification = classifications[self._classifiers[0][0].name]
        observed = None  # a REJECTED episode's agent run, classified all the same (labels only, no traces)
        if reasons and self._classifiers and isinstance(episode.get("episode"), abc.Mapping):
            observed = _label(*self._classifiers[0], fast)
        run, baselines, harness = episode_extras(episode)
        # (positional: attrs' __init__ takes 15 keywords at a third of the speed, once per episode)
        return Verdict(
            episode_id if isinstance(episode_id, str) else None,  # id
            REJECTED if reasons else SCORED,  # verdict
            tuple(reasons),
            classification,
            classifications,
            tuple(class_traces),  # classification_traces
            tuple(passed),
            self.info,  # ruleset
            source,
            self._left_out_lines(fast) if self._left_out is not None else (),  # left_out
            observed,  # observed_classification
            run,
            baselines,
            harness,
            explain,  # which classification traces the JSON shows whole
        )

    def _invalid(self, problem: FactsError, episode_id: Any, source: str | None) -> Verdict:
        return Verdict(
            id=episode_id if isinstance(episode_id, str) else None,
            verdict=ERROR,
            reasons=(Reason("input", str(problem), "invalid_input", code=problem.code),),
            ruleset=self.info,
            source=source,
        )

    def evaluate_batch(
        self, episodes: Iterable[Mapping[str, Any]], *, explain: str = "fails", validate: bool = True,
        engine: str = "local", scheduler: Any = None,
    ) -> list[Verdict]:
        """Decide a batch: canaries shared between its episodes are seen (both are rejected).
        `engine="dask"`: on a Dask cluster (`scheduler`: an address or a `distributed.Client`; None
        starts a LocalCluster), see engine/distributed.py; the same verdicts in the same order."""
        if engine != "local":
            from litmus_rules.engine.distributed import evaluate_batch_dask

            return evaluate_batch_dask(self, episodes, explain=explain, validate=validate, engine=engine,
                                       scheduler=scheduler)
        episodes = list(episodes)
        batch = {"canary_owners": canary_owners(episodes)}
        return [self.evaluate(e, batch=batch, explain=explain, validate=validate) for e in episodes]

    def _recording_env(self, fast: Env, lets_shown: bool = True) -> Env:
        env = Env(fast.facts, fast.batch, self._rec_compiler.nslots, len(self._lets), self.budget)
        env.derived = fast.derived  # derived facts are pure: share them, recompute nothing
        if not lets_shown:
            # a trace that will show no let's definition (a compact one) needs no let's inner values
            # recorded: the fast run's values serve (lets are pure), as derived facts do
            env.lets = list(fast.lets)
        env.rec = {}
        env.hint = fast.slots
        return env

    def _trace(
        self, compiled: Compiled, fast: Env, outcome: str, lets_shown: bool = True
    ) -> tuple[RuleTrace, Env, str | None]:
        """The recording run of one rule or cell, as its trace. `lets_shown` False: the trace is only
        ever shown compact (`RuleTrace.to_json(compact=True)`: no let's definition), so the lets the
        fast run computed are not computed again, recording."""
        env = self._recording_env(fast, lets_shown)
        failure = None
        try:
            compiled.recording(env)
        except EvalFailure as exc:
            failure = exc.message
        except Exception as exc:  # as in `evaluate`: the trace shows what was recorded before it
            failure = _internal(exc)
        node = compiled.node
        assert node.condition is not None and env.rec is not None
        trace = RuleTrace(compiled.name, compiled.clause, outcome, node.span, node.condition, env.rec, self._lets)
        return trace, env, failure

    def _reason(self, compiled: Compiled, fast: Env, outcome: str, failure: str | None) -> Reason:
        rule = compiled.node
        assert isinstance(rule, ast.Rule)
        trace, env, replay_failure = self._trace(compiled, fast, outcome)
        location = compiled.location
        missing: tuple[str, ...] = ()
        if outcome == "violated":
            message = self._message(compiled, env) if compiled.message else f"rule `{rule.name}` rejects this episode"
            kind = "violation"
        elif outcome == "error":
            message = f"could not evaluate: {failure or replay_failure}"
            kind = "evaluation_error"
        else:
            blamed, unknown_lets = trace.blame()
            missing = tuple(blamed)
            # a derived fact that a limit left unknown (the surface walk) says which limit, and where
            notes = [(m, note) for m in missing if (note := self._why_unknown(m, fast)) is not None]
            # a missing fact the producer declared unknown: its note says what to supply
            declared = unknowns.notes(fast.facts, missing)
            if notes:
                message = "insufficient evidence: " + "; ".join(f"`{m}` is unknown: {note}" for m, note in notes)
            elif declared:
                message = "insufficient evidence: " + "; ".join(
                    f"`{m}` is missing" + (
                        " (" + "; ".join(unknowns.quote(d) for d in declared[m]) + ")" if m in declared else "")
                    for m in missing)
            elif missing:
                what = ", ".join(f"`{m}`" for m in missing)
                message = f"insufficient evidence: {what} {'is' if len(missing) == 1 else 'are'} missing"
            else:
                lets = unknown_lets
                what = ", ".join(f"`{name}`" for name in lets)
                message = (f"insufficient evidence: {what} {'is' if len(lets) == 1 else 'are'} unknown"
                           if lets else "insufficient evidence: the condition is unknown")
            kind = "insufficient_evidence"
        witnesses = _witnesses(compiled, env) if outcome == "violated" else ()
        left_out = self._left_out_lines(fast) if rule.name in self._surface_rules else ()
        # (positional, as Verdict in _evaluate: attrs' __init__ is slow with keywords; None: `code`)
        return Reason(rule.name, message, kind, location, missing, trace, None, witnesses, left_out)

    def _left_out_lines(self, fast: Env) -> tuple[str, ...]:
        """The context messages the surfaces left out, one line each (none for episode/1: only
        episode/1.1 messages carry a `step`)."""
        if self._left_out is None:
            return ()
        try:
            late = fast.derive("left_out", self._left_out.compute)
        except Exception:  # what was left out is an explanation: it never changes a verdict
            return ()
        if not late:
            return ()
        decision = steps.decision_step(unknowns.original(fast.facts))
        return tuple(f"{m['origin']} (step {m['step']}): after decision_step {decision}" for m in late)

    def _why_unknown(self, path: str, env: Env) -> str | None:
        derived = self._derived.get(path)
        if derived is None or derived.why_unknown is None:
            return None
        return derived.why_unknown(env.facts, env.batch)

    def _message(self, compiled: Compiled, env: Env) -> str:
        out = []
        for part in compiled.message:
            if isinstance(part, str):
                out.append(part)
                continue
            fn, as_repr = part
            try:
                value = fn(env)
            except Exception:  # a placeholder that cannot be computed shows as unknown
                value = UNKNOWN
            if value is UNBOUND:
                out.append("?")
            elif isinstance(value, str) and not as_repr:
                out.append(value)
            else:
                out.append(short_repr(value, 200))
        return "".join(out)

    def _classify(
        self, classifier: ast.Classify, cells: list[Compiled], otherwise: ast.Cell, fast: Env, shown: int = 2
    ) -> tuple[str | None, list[RuleTrace]]:
        """The label of the first cell that matches, and the traces of the cells tried: all of them
        (`shown` 2), all but the ones that did not match (1), none (0)."""
        if shown == 0:
            return _label(classifier, cells, otherwise, fast), []
        traces: list[RuleTrace] = []
        for compiled in cells:
            cell = compiled.node
            assert isinstance(cell, ast.Cell) and cell.condition is not None
            try:
                value = truth(compiled.fast(fast), cell.condition)
            except Exception:  # an evaluation failure or fault: fail closed, no label
                value = UNKNOWN
            if value is False:
                if shown == 2:
                    traces.append(self._trace(compiled, fast, "not matched")[0])
                continue
            if value is True:  # with `shown` 1 the JSON shows it compact (Verdict.classification_json)
                traces.append(self._trace(compiled, fast, "matched", lets_shown=shown != 1)[0])
                return cell.label, traces
            traces.append(self._trace(compiled, fast, "undecided")[0])  # fail closed: no label
            return None, traces
        traces.append(RuleTrace(otherwise.label, "otherwise", "matched", otherwise.span))
        return otherwise.label, traces


def _witnesses(compiled: Compiled, env: Env) -> tuple[dict[str, Any], ...]:
    """The ranked witnesses of a violation: the list the recording run's value of the first
    witness-listing call carries (its message's, which names the strongest, else its condition's)."""
    rec = env.rec or {}
    for key in compiled.witness_calls:
        value = rec.get(key)
        if isinstance(value, Found) and isinstance(value.get("witnesses"), list):
            return tuple(dict(w) for w in value["witnesses"])
    return ()


def _label(classifier: ast.Classify, cells: list[Compiled], otherwise: ast.Cell, fast: Env) -> str | None:
    """A classifier's label as `RuleSet._classify` decides it, without recording traces."""
    for compiled in cells:
        try:
            value = truth(compiled.fast(fast), compiled.node.condition)  # type: ignore[arg-type]
        except Exception:  # fail closed, as _classify does
            return None
        if value is True:
            return compiled.node.label  # type: ignore[union-attr]
        if value is not False:
            return None
    return otherwise.label


def _internal(exc: BaseException) -> str:
    """The message of an unexpected fault inside an evaluation: what limit or failure, not a traceback."""
    return LitmusFault.of(exc).inline()


def canary_owners(episodes: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Canary value -> ids of the episodes that plant it (the batch fact behind `shared_canaries`)."""
    owners: dict[str, list[str]] = {}
    for episode in episodes:
        if not isinstance(episode, Mapping):
            continue
        ident = episode.get("id")
        for canary in episode.get("canaries") or ():
            value = canary.get("value") if isinstance(canary, Mapping) else None
            if isinstance(value, str) and isinstance(ident, str):
                ids = owners.setdefault(value, [])
                if ident not in ids:
                    ids.append(ident)
    return owners


def load_rules_text(
    text: str, name: str = "<rules>", params: Mapping[str, Any] | None = None, *, budget: int = DEFAULT_BUDGET
) -> RuleSet:
    """Load a ruleset from one string (tests, embedding)."""
    return build([(name, text)], params, budget=budget)


def load_rules(
    path: str | Path | None = None, params: Mapping[str, Any] | None = None, *, budget: int = DEFAULT_BUDGET
) -> RuleSet:
    """Load every `*.litmus` file under `path` (a file or folder; None: the shipped rules) as one ruleset.

    Raises LitmusSyntaxError or RuleCheckError (with every diagnostic) when the rules are wrong, and
    LitmusConfigError for a bad path or param.
    """
    base = Path(path) if path is not None else default_rules_dir()
    return build(stages.find_and_read(base).texts, params, budget=budget)


def build(
    sources: Iterable[tuple[str, str]], params: Mapping[str, Any] | None = None, *, budget: int = DEFAULT_BUDGET
) -> RuleSet:
    """parse -> merge -> check -> compile, from (name, text) sources."""
    texts = tuple(sources)
    checked = stages.parse_and_check(texts)
    if not checked.ok:
        raise RuleCheckError(list(checked.diagnostics))
    program = compile_program(checked.tree, checked.environment, params or {})
    ruleset = RuleSet(checked, program, stages.digest(texts), budget=budget)
    ruleset.sources, ruleset.source_params = texts, dict(params or {})
    return ruleset


__all__ = ["RuleSet", "build", "load_rules", "load_rules_text", "canary_owners", "PARAM_TYPES"]
