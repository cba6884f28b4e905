"""Properties of the parser and evaluator over generated input."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import LitmusError, LitmusSyntaxError, load_rules, load_rules_text
from litmus_rules.lang.syntax import parse
from litmus_rules.lang.values import UNKNOWN

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEAD = 'ruleset p version "1"\n'

TOKENS = [
    "ruleset", "version", "rule", "reject", "when", "unless", "because", "let", "param", "classify",
    "otherwise", "any", "all", "count", "in", "not", "and", "or", "x", "xs", "canaries", ".", ",", ":",
    "(", ")", "[", "]", "==", "!=", "<", "=", '"s"', '"{x}"', "1", "-", "+", "\n", " ", "#c\n", "f(", "'",
]


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join) | st.text(max_size=80))
def test_parse_returns_an_ast_or_a_syntax_error_inside_the_text(text: str) -> None:
    for candidate in (text, HEAD + text):
        try:
            parse(candidate, "gen.litmus")
        except LitmusSyntaxError as exc:
            assert 0 <= exc.span.start <= exc.span.end <= len(candidate)
            assert exc.render().startswith("gen.litmus:")


# ---- Kleene logic against a reference implementation ------------------------------------------------

TRUTH = st.sampled_from([True, False, None])  # None: the fact is absent (unknown)


def k_not(a: Any) -> Any:
    return None if a is None else not a


def k_and(a: Any, b: Any) -> Any:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def k_or(a: Any, b: Any) -> Any:
    return k_not(k_and(k_not(a), k_not(b)))


EXPRS = st.recursive(
    st.sampled_from(["a", "b", "c"]).map(lambda n: (f"extra.{n}", n)),
    lambda inner: st.one_of(
        inner.map(lambda e: (f"not ({e[0]})", ("not", e[1]))),
        st.tuples(inner, inner).map(lambda p: (f"({p[0][0]}) and ({p[1][0]})", ("and", p[0][1], p[1][1]))),
        st.tuples(inner, inner).map(lambda p: (f"({p[0][0]}) or ({p[1][0]})", ("or", p[0][1], p[1][1]))),
    ),
    max_leaves=6,
)


def reference(tree: Any, env: dict[str, Any]) -> Any:
    if isinstance(tree, str):
        return env[tree]
    if tree[0] == "not":
        return k_not(reference(tree[1], env))
    left, right = reference(tree[1], env), reference(tree[2], env)
    return k_and(left, right) if tree[0] == "and" else k_or(left, right)


@SETTINGS
@given(EXPRS, TRUTH, TRUTH, TRUTH)
def test_conditions_follow_kleene_logic(expr: Any, a: Any, b: Any, c: Any) -> None:
    text, tree = expr
    env = {"a": a, "b": b, "c": c}
    rules = load_rules_text(HEAD + f"rule r reject when {text}")
    facts = {"id": "e", "extra": {k: v for k, v in env.items() if v is not None}}
    verdict = rules.evaluate(facts, validate=False)
    expected = reference(tree, env)
    got: Any = False  # the rule passed: its condition was definitely false
    if verdict.reasons:
        got = {"violation": True, "insufficient_evidence": None}[verdict.reasons[0].kind]
    assert got == expected, (text, env)
    if expected is None:  # an unknown verdict always names the fact it lacked
        assert set(verdict.reasons[0].missing) <= {"extra.a", "extra.b", "extra.c"}
        assert verdict.reasons[0].missing


# ---- nothing escapes but LitmusError -----------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, width=16) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=15,
)
KEYS = ["litmus", "id", "context", "detector", "canaries", "controls", "episode", "provenance", "extra", "benchmark"]
EPISODES = st.fixed_dictionaries({}, optional={k: JSON for k in KEYS})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EPISODES)
def test_random_facts_give_a_verdict_never_an_exception(facts: dict[str, Any]) -> None:
    rules = _shipped()
    for validate in (True, False):
        try:
            verdict = rules.evaluate(facts, validate=validate)
        except LitmusError:
            continue
        assert verdict.verdict in ("SCORED", "REJECTED", "ERROR")
        verdict.to_json()  # traces render for any facts


_CACHE: dict[str, Any] = {}


def _shipped() -> Any:
    if "rules" not in _CACHE:
        _CACHE["rules"] = load_rules()
    return _CACHE["rules"]


def test_unknown_has_no_truth_value() -> None:
    import pytest

    with pytest.raises(TypeError):
        bool(UNKNOWN)
