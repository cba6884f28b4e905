"""Generated conditions and episodes for the differential tests, and the three ways to run one.

Conditions are rule text over `extra.*` facts (free-form, so every path checks), built from the
constructs the compiled evaluator treats specially: fused loops (a field of the loop variable against
a loop-invariant value, two-binding disjointness loops, hoisted inner collections), comprehensions
with `if`, count, `in`, arithmetic, comparisons, `default()`, `len()`, indexes, lets and `where`
names. Episodes
hold nulls, wrong types, missing keys and empty lists.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from litmus_rules import load_rules_text
from litmus_rules.engine.ruleset import RuleSet
from litmus_rules.lang.evaluate import Env
from litmus_rules.domain.environment import Reference
from litmus_rules.lang.evaluate.reference import Outcome
from litmus_rules.lang.trace import RuleTrace
from litmus_rules.lang.evaluate import truth
from litmus_rules.lang.values import UNKNOWN, EvalFailure

HEAD = 'ruleset diff version "1"\n'
LETS = (
    "let kept = [x for x in extra.xs if x.j == 1]\n"
    "let keys = [x.k for x in extra.xs]\n"
    "let flag = extra.a\n"
)

# ---- conditions ------------------------------------------------------------------------------------

LITERALS = ['"a"', '"ab"', '""', "1", "0", "true", "false", "null", '["a", 1]', "[]"]
FACT_VALUES = ["extra.a", "extra.s", "extra.n", "extra.b", "extra.xs", "flag", "keys"]
COLLECTIONS = ["extra.xs", "extra.ys", "kept", "keys", "extra.s"]
FIELDS = ["k", "j"]
VARS = ["x", "y", "z"]


def value(r: random.Random, scope: tuple[str, ...], depth: int) -> str:
    roll = r.random()
    if depth <= 0 or roll < 0.5:
        if scope and r.random() < 0.5:
            v = r.choice(scope)
            return v if r.random() < 0.2 else f"{v}.{r.choice(FIELDS)}"
        return r.choice(LITERALS) if r.random() < 0.4 else r.choice(FACT_VALUES)
    sub = lambda: value(r, scope, depth - 1)  # noqa: E731
    pick = r.randrange(7)
    if pick == 0:
        return f"default({sub()}, {r.choice(LITERALS)})"
    if pick == 1:
        return f"len({sub()})"
    if pick == 2:
        return f"({sub()} {r.choice('+-')} {sub()})"
    if pick == 3:
        return f"-{value(r, scope, 0)}"
    if pick == 4:
        return f"{r.choice(['extra.xs', 'keys', 'extra.s'])}[{r.choice(['0', '1', '-1'])}]"
    if pick == 5:
        return f"{r.choice(['extra.xs', 'kept'])}[0].{r.choice(FIELDS)}"
    return comprehension(r, scope, depth - 1)


def comprehension(r: random.Random, scope: tuple[str, ...], depth: int) -> str:
    var = next(v for v in VARS if v not in scope)
    inner = scope + (var,)
    element = r.choice([var, f"{var}.k", f"{var}.j", value(r, inner, 0)])
    cond = f" if {condition(r, inner, max(depth, 0))}" if r.random() < 0.6 else ""
    return f"[{element} for {var} in {collection(r, scope)}{cond}]"


def collection(r: random.Random, scope: tuple[str, ...]) -> str:
    return r.choice(list(COLLECTIONS) + [f"{v}.j" for v in scope] + list(scope))


def loop_shape(r: random.Random, scope: tuple[str, ...]) -> str:
    """The shapes the compiler fuses or hoists, written out so they are drawn often."""
    free = [v for v in VARS if v not in scope]
    a, b = free[0], free[1]
    inv = r.choice(["extra.s", "extra.b", '"a"', "extra.xs", "keys", '["a", 1]', "extra.n", f"{scope[0]}.k" if scope else '"ab"'])
    q, c1, c2 = r.choice(["any", "all"]), collection(r, scope), collection(r, scope)
    k1, k2, op = r.choice(FIELDS), r.choice(FIELDS), r.choice(["in", "=="])
    pick = r.randrange(9)
    if pick >= 7:  # `where` names: computed at their first read, seen by the body
        local = "w" if "w" not in scope else "v"
        value_ = value(r, scope + (a,), 1)
        return f"{q} {a} in {c1} where {local} = {value_}: {condition(r, scope + (a, local), 1)}"
    if pick == 0:  # a field of the loop variable against a loop-invariant value, either side
        return f"{q} {a} in {c1}: {a}.{k1} {op} {inv}"
    if pick == 1:
        return f"{q} {a} in {c1}: {inv} {op} {a}.{k1}"
    if pick == 2:  # two fields of the loop variable
        return f"{q} {a} in {c1}: {a}.{k1} {op} {a}.{k2}"
    if pick == 3:  # two bindings, disjointness: either variable on either side
        body = f"{b}.{k1} {op} {a}.{k2}" if r.random() < 0.5 else f"{a}.{k2} {op} {b}.{k1}"
        return f"{q} {a} in {c1}, {b} in {c2}: {body}"
    if pick == 4:  # two bindings, hoisted inner collection, a general body
        return f"{q} {a} in {c1}, {b} in {c2}: {condition(r, scope + (a, b), 0)}"
    if pick == 5:  # a dependent inner collection
        return f"{q} {a} in {c1}, {b} in {a}.j: {condition(r, scope + (a, b), 0)}"
    return f"(count {a} in {c1}: {condition(r, scope + (a,), 0)}) {r.choice(['>', '=='])} {r.choice('01')}"


def condition(r: random.Random, scope: tuple[str, ...], depth: int) -> str:
    if depth <= 0 or r.random() < 0.25:
        pick = r.randrange(3)
        if pick == 0:
            ops = ["==", "!=", "<", ">=", "in", "not in"]
            return f"{value(r, scope, min(depth, 1))} {r.choice(ops)} {value(r, scope, min(depth, 1))}"
        if pick == 1:
            return r.choice(["extra.a", "extra.b", "flag", "true", "false", "known(extra.s)", "extra.n"])
        return f"starts_with({value(r, scope, 0)}, {value(r, scope, 0)})"
    sub = lambda: condition(r, scope, depth - 1)  # noqa: E731
    free = [v for v in VARS if v not in scope]
    pick = r.randrange(7)
    if pick == 0:
        return f"not ({sub()})"
    if pick == 1:
        return f"({sub()}) {r.choice(['and', 'or'])} ({sub()})"
    if pick == 2:
        return f"({sub()}) and ({sub()}) or ({sub()})"
    if pick in (3, 4) and len(free) >= 2:
        return loop_shape(r, scope)
    if pick == 5:
        return f"default({sub()}, {r.choice(['true', 'false'])})"
    if free:
        v = free[0]
        return f"{r.choice(['any', 'all'])} {v} in {collection(r, scope)}: ({condition(r, scope + (v,), depth - 1)})"
    return sub()


conditions = st.integers(0, 2**64).map(lambda seed: condition(random.Random(seed), (), 2))


# ---- episodes --------------------------------------------------------------------------------------

_SCALARS: list[Any] = [None, True, False, 0, 1, 2, -1, 1.0, "", "a", "ab", "b", "xaby"]
_STRINGS = ["a", "ab", "b", "xaby", ""]


def _scalar(r: random.Random) -> Any:
    return r.choice(_SCALARS)


def _small(r: random.Random) -> Any:
    roll = r.random()
    if roll < 0.6:
        return _scalar(r)
    if roll < 0.85:
        return [r.choice(_STRINGS + [1, None]) for _ in range(r.randrange(4))]
    return {k: _scalar(r) for k in ("k", "j") if r.random() < 0.6}


def _element(r: random.Random) -> Any:
    roll = r.random()
    if roll < 0.55:  # well-formed: string fields, the common case of real episodes
        return {k: r.choice(_STRINGS) for k in ("k", "j") if r.random() < 0.9}
    if roll < 0.9:
        return {k: _small(r) for k in ("k", "j") if r.random() < 0.7}
    return _scalar(r)


def _list(r: random.Random) -> Any:
    roll = r.random()
    if roll < 0.8:
        return [_element(r) for _ in range(r.randrange(5))]
    return _scalar(r) if roll < 0.95 else []


def episode(r: random.Random) -> dict[str, Any]:
    """One episode: `extra` mostly present and mostly well-formed, with every kind of gap."""
    facts: dict[str, Any] = {"id": "e"}
    roll = r.random()
    if roll < 0.05:
        return facts
    if roll < 0.08:
        facts["extra"] = _scalar(r)
        return facts
    extra: dict[str, Any] = {}
    for key, make in (("a", _small), ("b", _small), ("s", _small), ("n", _small), ("xs", _list), ("ys", _list)):
        if r.random() < 0.85:
            extra[key] = make(r)
    if r.random() < 0.5:  # a well-typed flag and text often, so that conditions decide
        extra["a"] = r.random() < 0.5
        extra["s"] = r.choice(_STRINGS)
    facts["extra"] = extra
    return facts


episodes = st.integers(0, 2**64).map(lambda seed: episode(random.Random(seed)))


def episode_batches(n: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.integers(0, 2**64).map(lambda seed: [episode(r) for r in [random.Random(seed)] for _ in range(n)])


# ---- the three evaluators --------------------------------------------------------------------------


def load(condition: str) -> RuleSet | None:
    from litmus_rules.errors import RuleCheckError

    try:
        return load_rules_text(HEAD + LETS + f"rule r reject when {condition}\n", "diff.litmus")
    except RuleCheckError:
        return None


def fast(rules: RuleSet, facts: dict[str, Any]) -> tuple[Outcome, Env]:
    compiled = rules._rules[0]
    env = Env(facts, {}, rules._fast_compiler.nslots, len(rules._lets), rules.budget)
    return _outcome(lambda: compiled.fast(env), compiled.node.condition), env


def recording(rules: RuleSet, facts: dict[str, Any], hint: Env | None = None) -> Outcome:
    """The recording run, standalone (`hint` None) or as a verdict runs it after the fast run."""
    compiled = rules._rules[0]
    if hint is not None:
        env = rules._recording_env(hint)
    else:
        env = Env(facts, {}, rules._rec_compiler.nslots, len(rules._lets), rules.budget)
        env.rec = {}
    out = _outcome(lambda: compiled.recording(env), compiled.node.condition)
    if out.kind != "insufficient_evidence":
        return out
    node = compiled.node
    trace = RuleTrace("r", "reject when", "insufficient evidence", node.span, node.condition, env.rec, rules._lets)
    assert trace.root is not None
    return Outcome(UNKNOWN, out.kind, tuple(trace.root.missing_paths()))


def reference(rules: RuleSet, facts: dict[str, Any]) -> Outcome:
    return Reference(rules._lets, rules.params, facts).condition(rules._rules[0].node.condition)


def _outcome(run: Any, node: Any) -> Outcome:
    try:
        value = truth(run(), node)
    except EvalFailure as exc:
        return Outcome(UNKNOWN, "evaluation_error", (), exc.message)
    if value is UNKNOWN:
        return Outcome(UNKNOWN, "insufficient_evidence")
    return Outcome(value, "true" if value else "false")


# ---- whole rule files, for the fuzz of load + evaluate ------------------------------------------------

_DOMAIN_CALLS = [
    "leaks({t}, transcript_text(controls.null.transcript))",
    "collides({s}, {t})",
    "leak({t}, surfaces)",
    "collision({s}, surfaces, min_len: 4)",
    "matches({t}, {t})",
    "fillable_call({s}, context.tools)",
    "call_matches({s}, {s})",
    "overlap({t}, {t}, min_len: 3)",
    "ends_with({t}, {t})",
    "lower({t}) == {t}",
    "len(unique({l})) > 0",
]
_TEXTS = ['"a"', "extra.s", "c.value", "x.k", "detector.rubric", "t.text"]
_OBJECTS = ["s", "extra.o", "x"]
_LISTS = ["detector.signals", "canaries", "surfaces", "extra.xs", "context.tools", "shared_canaries"]


def domain_condition(r: random.Random) -> str:
    call = r.choice(_DOMAIN_CALLS).format(t=r.choice(_TEXTS), s=r.choice(_OBJECTS), l=r.choice(_LISTS))
    return f"any s in detector.signals, c in canaries, t in surfaces, x in extra.xs: {call}"


def rule_file(r: random.Random) -> str:
    """A rule file from every construct of the grammar: params, lets, rules with docs, cites, tags and
    messages, and classifiers. Most load; some do not (the checker's errors are LitmusErrors)."""
    out = ['ruleset fuzz.rules version "1"', 'param limit = 3', 'param kinds: list = ["substring"]', LETS.strip()]
    for i in range(r.randrange(1, 4)):
        cond = domain_condition(r) if r.random() < 0.4 else condition(r, (), 2)
        mode = r.choice(["when", "unless"])
        msg = r.choice(['', ' because "x is {x.k!r}, limit {limit}"', ' because "{s.id} {t.origin}"', ' because "plain"'])
        out.append(f'rule r{i} "doc" cite "c" tags ["t"] reject {mode} {cond}{msg}')
    if r.random() < 0.5:
        out.append(f'classify decision\n  "a" when {condition(r, (), 1)}\n  "b" when len(kinds) > limit\n  "c" otherwise')
    return "\n".join(out) + "\n"


rule_files = st.integers(0, 2**64).map(lambda seed: rule_file(random.Random(seed)))
