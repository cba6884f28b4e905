"""The facade: load rule files (parse -> check -> compile) once, evaluate episodes many times.

`load_rules` returns a `RuleSet`; `RuleSet.evaluate` returns a `Verdict`. A RuleSet is immutable
after loading and safe to share across threads: all per-episode state lives in an `Env`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import abc
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import attrs

from litmus_rules.lang import ast
from litmus_rules._resources import default_rules_dir
from litmus_rules.diagnostics import code_for
from litmus_rules.lang.checker import PARAM_TYPES, Checker
from litmus_rules.errors import (
    Diagnostic,
    FactsError,
    LitmusConfigError,
    LitmusError,
    LitmusFault,
    RuleCheckError,
)
from litmus_rules.domain.builtins import WITNESS_BUILTINS
from litmus_rules.lang.evaluate import DEFAULT_BUDGET, UNBOUND, Compiler, Env, Fn, Found, truth
from litmus_rules.domain.facts import DERIVED, FactSchema
from litmus_rules.io.inputs import read_text_file
from litmus_rules.lang.syntax import MAX_RULE_FILE_BYTES, parse
from litmus_rules.lang.trace import RuleTrace
from litmus_rules.domain.regexes import regex_budget
from litmus_rules.lang.values import INTERNAL_ERROR, UNKNOWN, EvalFailure, short_repr, type_name
from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED, Reason, RulesetInfo, Verdict

RULE_SUFFIX = ".litmus"
EXPLAIN_MODES = ("fails", "full")


@attrs.frozen
class _Compiled:
    """One condition (a rule, or a classification cell) in both its compiled forms."""

    node: ast.Rule | ast.Cell
    fast: Fn
    recording: Fn
    message: tuple[str | tuple[Fn, bool], ...] = ()
    # computed once here rather than for every reject: name, clause and `file:line`
    name: str = ""
    clause: str = ""
    location: str = ""
    # The calls whose recorded value may list witnesses (`collision`, `leak`): the message's,
    # in reading order, then the condition's. A reject's reason lists the first one's.
    witness_calls: tuple[int, ...] = ()


# Characters are at most 4 bytes: a file that parse() would refuse is not read whole first.
RULE_FILE_READ_LIMIT = 4 * MAX_RULE_FILE_BYTES


def _rule_files(path: Path) -> list[Path]:
    if path.exists() and not path.is_dir():
        return [path]  # a FIFO or device too: reading it says what it is, without blocking
    if not path.is_dir():
        raise LitmusConfigError(f"rules path `{path}` does not exist")
    files = sorted(p for p in path.rglob(f"*{RULE_SUFFIX}") if "tests" not in p.relative_to(path).parts)
    if not files:
        raise LitmusConfigError(f"no `*{RULE_SUFFIX}` files under `{path}`")
    return files


def _display_name(file: Path, base: Path) -> str:
    """Rule locations read `rules/validity.litmus:14`: relative to the parent of the folder (or
    file) the rules were loaded from."""
    try:
        return str(file.relative_to(base.parent))
    except ValueError:
        return str(file)


def _coerce_param(decl: ast.Param, value: Any) -> Any:
    declared = decl.type_name or _literal_kind(decl.default)
    if isinstance(value, str) and declared != "string":
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise LitmusConfigError(f"param `{decl.name}` expects a {declared}, got `{value}`") from None
    ok = {
        "string": isinstance(value, str),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "list": isinstance(value, list),
    }.get(declared, True)
    if not ok:
        raise LitmusConfigError(f"param `{decl.name}` expects a {declared}, got {short_repr(value)}")
    return value


def _literal_kind(e: ast.Expr) -> str:
    if isinstance(e, ast.Literal):
        v = e.value
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, (int, float)):
            return "number"
        if isinstance(v, str):
            return "string"
        return "any"
    if isinstance(e, ast.Neg):
        return "number"
    if isinstance(e, ast.ListExpr):
        return "list"
    return "any"


def _constant(e: ast.Expr) -> Any:
    if isinstance(e, ast.Literal):
        return e.value
    if isinstance(e, ast.Neg):
        return -_constant(e.operand)
    if isinstance(e, ast.ListExpr):
        return [_constant(x) for x in e.items]
    raise AssertionError("params are checked to be constants")


def _merge(rulesets: Sequence[ast.RuleSet]) -> tuple[ast.RuleSet, list[Diagnostic]]:
    """Several files of one ruleset share one namespace; their headers must agree."""
    first = rulesets[0]
    diags = []
    for other in rulesets[1:]:
        if (other.name, other.version) != (first.name, first.version):
            diags.append(
                Diagnostic.of(
                    code_for("header-mismatch"),
                    other.span,
                    name=other.name, version=other.version, first_name=first.name, first_version=first.version,
                )
            )
    items = tuple(i for rs in rulesets for i in rs.items)
    comments = tuple(c for rs in rulesets for c in rs.comments)
    return ast.RuleSet(first.name, first.version, items, span=first.span, comments=comments), diags


class RuleSet:
    """A loaded, checked and compiled ruleset. Build it with `load_rules` or `load_rules_text`."""

    def __init__(
        self,
        tree: ast.RuleSet,
        digest: str,
        params: Mapping[str, Any] | None = None,
        *,
        budget: int = DEFAULT_BUDGET,
        facts: FactSchema | None = None,
        extra_diagnostics: Sequence[Diagnostic] = (),
    ) -> None:
        diagnostics = sorted(
            [*extra_diagnostics, *Checker(tree, facts or FactSchema()).run()], key=Diagnostic.sort_key
        )
        if any(d.severity == "error" for d in diagnostics):
            raise RuleCheckError(diagnostics)
        self.ast = tree
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.info = RulesetInfo(tree.name, tree.version, digest)
        self.budget = budget
        self.params = self._bind_params(params or {})
        self._lets = {let.name: let for let in tree.lets}
        self._names = self._mentioned(tree)
        self._fast_compiler, self._rec_compiler = self._compile_lets()
        self._rules = [self._compile(r, r.condition, r.message) for r in tree.rules]
        # (fast closure, the condition value that lets the episode pass, rule) for the hot loop
        self._hot_rules = [(c.fast, c.node.mode == "unless", c) for c in self._rules]  # type: ignore[union-attr]
        self._classifiers = [
            (c, [self._compile(cell, cell.condition, None) for cell in c.cells if cell.condition is not None], c.cells[-1])
            for c in tree.classifiers
        ]

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

    # ---- building -----------------------------------------------------------------------------------

    def _bind_params(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        decls = {p.name: p for p in self.ast.params}
        for name in overrides:
            if name not in decls:
                guess = difflib.get_close_matches(name, list(decls), n=1)
                hint = f"; did you mean `{guess[0]}`?" if guess else f"; params: {', '.join(decls) or 'none'}"
                raise LitmusConfigError(f"unknown param `{name}`{hint}")
        values = {}
        for name, decl in decls.items():
            values[name] = _coerce_param(decl, overrides[name]) if name in overrides else _constant(decl.default)
        return values

    def _compile_lets(self) -> tuple[Compiler, Compiler]:
        index = {name: i for i, name in enumerate(self._lets)}
        compilers = (Compiler(self.params, index, recording=False), Compiler(self.params, index, recording=True))
        compilers[1].hint_slots = compilers[0].binding_slots
        compilers[1].hint_results = compilers[0].result_slots
        for compiler in compilers:
            # let_fns is filled after every let is compiled: lets may refer to each other in any order
            fns = [compiler.compile(let.expr, {}) for let in self._lets.values()]
            compiler.let_fns.extend(fns)
        return compilers

    def _compile(self, node: ast.Rule | ast.Cell, condition: ast.Expr | None, message: ast.Message | None) -> _Compiled:
        assert condition is not None
        fast = self._fast_compiler.compile(condition, {})
        recording = self._rec_compiler.compile(condition, {})
        parts: list[str | tuple[Fn, bool]] = []
        if message is not None:
            scope = _binding_slots(condition, self._rec_compiler)
            for part in message.parts:
                if isinstance(part, str):
                    parts.append(part)
                else:
                    parts.append((self._rec_compiler.compile(part.expr, scope), part.repr))
        if isinstance(node, ast.Rule):
            name, clause = node.name, f"reject {node.mode}"
        else:
            name, clause = node.label, f'"{node.label}" when'
        exprs = [p.expr for p in message.parts if not isinstance(p, str)] if message is not None else []
        return _Compiled(node, fast, recording, tuple(parts), name, clause, node.span.short_location(),
                         _calls(exprs + [condition]))

    # ---- evaluation ---------------------------------------------------------------------------------

    def evaluate(
        self,
        episode: Mapping[str, Any],
        *,
        batch: Mapping[str, Any] | None = None,
        explain: str = "fails",
        validate: bool = True,
        source: str | None = None,
    ) -> Verdict:
        """Decide one episode. Never raises for bad input: that is an ERROR verdict.

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
            with regex_budget():  # each regex's cumulative time limit spans one evaluation
                return self._evaluate(episode, episode_id, batch, explain, validate, source)
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
        validate: bool,
        source: str | None,
    ) -> Verdict:
        if validate:
            from litmus_rules.io.load import validate_episode

            problem = validate_episode(episode, source=source or "<episode>")
            if problem is not None:
                return Verdict(
                    id=episode_id if isinstance(episode_id, str) else None,
                    verdict=ERROR,
                    reasons=(Reason("input", str(problem), "invalid_input", code=problem.code),),
                    ruleset=self.info,
                    source=source,
                )
        batch = batch if batch is not None else {}  # a batch of one: no canary is shared
        fast = Env(episode, batch, self._fast_compiler.nslots, len(self._lets), self.budget)
        reasons: list[Reason] = []
        passed: list[RuleTrace] = []
        for fn, passing, compiled in self._hot_rules:
            failure = None
            try:
                value = fn(fast)
                if value is passing:
                    if explain == "full":
                        passed.append(self._trace(compiled, fast, "passed")[0])
                    continue
                value = truth(value, compiled.node.condition)  # type: ignore[arg-type]
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
            for classifier, cells, otherwise in self._classifiers:
                label, traces = self._classify(classifier, cells, otherwise, fast)
                classifications[classifier.name] = label
                class_traces.extend(traces)
            if self._classifiers:
                classification = classifications[self._classifiers[0][0].name]
        return Verdict(
            id=episode_id if isinstance(episode_id, str) else None,
            verdict=REJECTED if reasons else SCORED,
            reasons=tuple(reasons),
            classification=classification,
            classifications=classifications,
            classification_traces=tuple(class_traces),
            passed=tuple(passed),
            ruleset=self.info,
            source=source,
        )

    def evaluate_batch(
        self, episodes: Iterable[Mapping[str, Any]], *, explain: str = "fails", validate: bool = True
    ) -> list[Verdict]:
        """Decide a batch: canaries shared between its episodes are seen (both are rejected)."""
        episodes = list(episodes)
        batch = {"canary_owners": canary_owners(episodes)}
        return [self.evaluate(e, batch=batch, explain=explain, validate=validate) for e in episodes]

    def _recording_env(self, fast: Env) -> Env:
        env = Env(fast.facts, fast.batch, self._rec_compiler.nslots, len(self._lets), self.budget)
        env.derived = fast.derived  # derived facts are pure: share them, recompute nothing
        env.rec = {}
        env.hint = fast.slots
        return env

    def _trace(self, compiled: _Compiled, fast: Env, outcome: str) -> tuple[RuleTrace, Env, str | None]:
        env = self._recording_env(fast)
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

    def _reason(self, compiled: _Compiled, fast: Env, outcome: str, failure: str | None) -> Reason:
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
            missing = tuple(trace.root.missing_paths()) if trace.root else ()
            # a derived fact that a limit left unknown (the surface walk) says which limit, and where
            notes = [(m, note) for m in missing if (note := _why_unknown(m, fast)) is not None]
            if notes:
                message = "insufficient evidence: " + "; ".join(f"`{m}` is unknown: {note}" for m, note in notes)
            elif missing:
                what = ", ".join(f"`{m}`" for m in missing)
                message = f"insufficient evidence: {what} {'is' if len(missing) == 1 else 'are'} missing"
            else:
                lets = trace.root.unknown_lets() if trace.root else []
                what = ", ".join(f"`{name}`" for name in lets)
                message = (f"insufficient evidence: {what} {'is' if len(lets) == 1 else 'are'} unknown"
                           if lets else "insufficient evidence: the condition is unknown")
            kind = "insufficient_evidence"
        witnesses = _witnesses(compiled, env) if outcome == "violated" else ()
        return Reason(rule.name, message, kind, location, missing, trace, witnesses=witnesses)

    def _message(self, compiled: _Compiled, env: Env) -> str:
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
        self, classifier: ast.Classify, cells: list[_Compiled], otherwise: ast.Cell, fast: Env
    ) -> tuple[str | None, list[RuleTrace]]:
        traces: list[RuleTrace] = []
        for compiled in cells:
            cell = compiled.node
            assert isinstance(cell, ast.Cell) and cell.condition is not None
            try:
                value = truth(compiled.fast(fast), cell.condition)
            except Exception:  # an evaluation failure or fault: fail closed, no label
                value = UNKNOWN
            if value is False:
                traces.append(self._trace(compiled, fast, "not matched")[0])
                continue
            if value is True:
                traces.append(self._trace(compiled, fast, "matched")[0])
                return cell.label, traces
            traces.append(self._trace(compiled, fast, "undecided")[0])  # fail closed: no label
            return None, traces
        traces.append(RuleTrace(otherwise.label, "otherwise", "matched", otherwise.span))
        return otherwise.label, traces


def _calls(exprs: Iterable[ast.Expr]) -> tuple[int, ...]:
    """The ids of the calls in `exprs` that list witnesses, each expression's in reading order."""
    out: list[int] = []
    for expr in exprs:
        calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call) and n.func in WITNESS_BUILTINS]
        out.extend(id(n) for n in sorted(calls, key=lambda n: n.span.start))
    return tuple(out)


def _witnesses(compiled: _Compiled, env: Env) -> tuple[dict[str, Any], ...]:
    """The ranked witnesses of a violation: the list the recording run's value of the first
    witness-listing call carries (its message's, which names the strongest, else its condition's)."""
    rec = env.rec or {}
    for key in compiled.witness_calls:
        value = rec.get(key)
        if isinstance(value, Found) and isinstance(value.get("witnesses"), list):
            return tuple(dict(w) for w in value["witnesses"])
    return ()


def _why_unknown(path: str, env: Env) -> str | None:
    derived = DERIVED.get(path)
    if derived is None or derived.why_unknown is None:
        return None
    return derived.why_unknown(env.facts, env.batch)


def _internal(exc: BaseException) -> str:
    """The message of an unexpected fault inside an evaluation: what limit or failure, not a traceback."""
    return LitmusFault.of(exc).inline()


def _binding_slots(condition: ast.Expr, compiler: Compiler) -> dict[str, int]:
    """Message placeholders see the quantifier variables of the condition, at their recorded slots."""
    return {
        b.name: compiler.binding_slots[id(b)]
        for node in ast.walk(condition)
        if isinstance(node, ast.Quantifier)
        for b in node.bindings
    }


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


def _hash(files: Sequence[tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for name, text in sorted(files):
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    return "sha256:" + h.hexdigest()


def load_rules_text(
    text: str, name: str = "<rules>", params: Mapping[str, Any] | None = None, *, budget: int = DEFAULT_BUDGET
) -> RuleSet:
    """Load a ruleset from one string (tests, embedding)."""
    return RuleSet(parse(text, name), _hash([(name, text)]), params, budget=budget)


def load_rules(
    path: str | Path | None = None, params: Mapping[str, Any] | None = None, *, budget: int = DEFAULT_BUDGET
) -> RuleSet:
    """Load every `*.litmus` file under `path` (a file or folder; None: the shipped rules) as one ruleset.

    Raises LitmusSyntaxError or RuleCheckError (with every diagnostic) when the rules are wrong, and
    LitmusConfigError for a bad path or param.
    """
    base = Path(path) if path is not None else default_rules_dir()
    files = _rule_files(base)
    sources = []
    for file in files:
        try:
            sources.append((_display_name(file, base), read_text_file(file, RULE_FILE_READ_LIMIT)))
        except (OSError, UnicodeDecodeError) as exc:
            raise LitmusConfigError(f"cannot read rule file `{file}`: {exc}") from None
    parsed = [parse(text, name) for name, text in sources]
    merged, diags = _merge(parsed)
    return RuleSet(merged, _hash(sources), params, budget=budget, extra_diagnostics=diags)


__all__ = ["RuleSet", "load_rules", "load_rules_text", "canary_owners", "PARAM_TYPES"]
