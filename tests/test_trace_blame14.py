"""`RuleTrace.blame()` names what the trace tree's `missing_paths()` and `unknown_lets()` name.

An insufficient-evidence reject needs both for its message; `blame()` finds them without building the
tree (a JSON verdict never needs it), so the two must agree on every generated condition and episode,
in order, the lets and `where` names included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings

from litmus_rules.lang.evaluate import Env
from litmus_rules.lang.trace import RuleTrace
from reference_gen import conditions, episode_batches, load

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _traces(rules: Any, facts: dict[str, Any]) -> tuple[RuleTrace, RuleTrace]:
    compiled = rules._rules[0]
    env = Env(facts, {}, rules._rec_compiler.nslots, len(rules._lets), rules.budget)
    env.rec = {}
    try:
        compiled.recording(env)
    except Exception:  # an evaluation error: the trace holds what was recorded before it
        pass
    node = compiled.node
    make = lambda: RuleTrace("r", "reject when", "insufficient evidence", node.span, node.condition,  # noqa: E731
                             env.rec, rules._lets)
    return make(), make()


@SETTINGS
@given(conditions, episode_batches(12))
def test_blame_names_what_the_tree_names(condition: str, batch: list[dict[str, Any]]) -> None:
    rules = load(condition)
    assume(rules is not None)
    blamed_any = False
    for facts in batch:
        lazy, built = _traces(rules, facts)
        root = built.root
        assert root is not None
        want = (root.missing_paths(), root.unknown_lets())
        assert lazy.blame() == want, (condition, facts)
        assert lazy._root is None  # found without the tree
        assert built.blame() == want  # and from the tree, once it is built
        blamed_any = blamed_any or bool(want[0] or want[1])
    assume(blamed_any)  # only examples where something was blamed count


def test_a_known_condition_blames_nothing_and_a_missing_fact_is_named() -> None:
    rules = load("extra.a == 1 and extra.s == \"x\"")
    assert rules is not None
    lazy, _ = _traces(rules, {"extra": {"a": 1}})
    assert lazy.blame() == (["extra.s"], [])
    lazy, _ = _traces(rules, {"extra": {"a": 2}})
    assert lazy.blame() == ([], [])
    lazy, _ = _traces(rules, {"extra": {"a": 1, "s": "x"}})
    assert lazy.blame() == ([], [])


def test_an_unknown_let_is_blamed_through_its_definition() -> None:
    rules = load("flag == 1")
    assert rules is not None
    lazy, built = _traces(rules, {"extra": {}})
    assert lazy.blame() == (built.root.missing_paths(), built.root.unknown_lets())
    assert lazy.blame() == (["extra.a"], ["flag"])
