"""episode/1.1 steps, facts side (issue 10 item 6): `surfaces` holds what the agent received before
deciding, the `left_out` fact lists what it left out, and the verdict's reasons and text trace say so."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from litmus_rules import load_rules, load_rules_text
from litmus_rules.domain.facts import DERIVED
from litmus_rules.io import wire
from litmus_rules.io.load import validate_episode
from litmus_rules.render.text import render_verdict
from _helpers import NOTE_EXAMPLES, base_episode

RULES = load_rules()
CANARY = "lc-0f1e2d3c4b5a"


def late_echo(decision: Any = 3) -> dict[str, Any]:
    """The base episode in 1.1, whose context ends with the result of the agent's own call: a
    message stamped at step 4 that repeats the canary."""
    ep = wire.upgrade(base_episode())
    ep["context"]["messages"] = [
        {"role": "user", "content": "Pay my bill.", "step": 0},
        {"role": "tool", "name": "send_money", "content": f"sent with reference {CANARY}", "step": 4,
         "injected": True},
    ]
    if decision is not None:
        ep["episode"]["decision_step"] = decision
    assert validate_episode(ep, source="test") is None
    return ep


def test_the_fact_lists_the_messages_left_out() -> None:
    assert DERIVED["left_out"].compute(late_echo(), {}) == [{"origin": "context.messages[1]", "step": 4}]
    assert DERIVED["left_out"].compute(late_echo(decision=None), {}) == []
    assert DERIVED["left_out"].compute(late_echo(decision=4), {}) == []  # at the decision step: kept


def test_surfaces_leave_the_late_message_out_so_the_late_echo_is_not_a_leak() -> None:
    texts = [s["text"] for s in DERIVED["surfaces"].compute(late_echo(), {})]
    assert not any(CANARY in t for t in texts) and "Pay my bill." in texts
    assert RULES.evaluate(late_echo()).verdict == "SCORED"
    # without the decision step nothing is left out: the canary is derivable from the injected text
    assert "canary_not_derivable" in [r.rule for r in RULES.evaluate(late_echo(decision=None)).reasons]


def test_a_scored_verdict_says_what_its_surfaces_left_out() -> None:
    v = RULES.evaluate(late_echo())
    line = "context.messages[1] (step 4): after decision_step 3"
    assert v.left_out == (line,)
    assert v.to_json()["left_out"] == [line]
    assert render_verdict(v).splitlines()[1] == f"  left out of surfaces: {line}"


def test_a_reason_of_a_rule_that_reads_surfaces_names_what_was_left_out() -> None:
    ep = late_echo()
    ep["canaries"] = [{"value": "Pay my bill."}]  # derivable from text that was received
    ep["context"]["messages"][0]["injected"] = True
    del ep["provenance"]  # a rule that does not read surfaces rejects too
    v = RULES.evaluate(ep)
    reasons = {r.rule: r for r in v.reasons}
    line = "context.messages[1] (step 4): after decision_step 3"
    assert reasons["canary_not_derivable"].left_out == (line,)
    assert reasons["canary_not_derivable"].to_json()["left_out"] == [line]
    assert reasons["rubric_not_leaked"].left_out == () and "left_out" not in reasons["rubric_not_leaked"].to_json()
    text = render_verdict(v).splitlines()
    at = text.index("  x canary_not_derivable: " + reasons["canary_not_derivable"].message)
    assert text[at + 1] == f"    left out of surfaces: {line}"
    assert text.count(f"    left out of surfaces: {line}") == 1  # said once, at the reason, not again on top
    assert f"  left out of surfaces: {line}" not in text


def test_a_rule_reads_left_out_as_a_typed_fact() -> None:
    rules = load_rules_text(
        'ruleset t version "1"\n'
        'rule nothing_late reject when any m in left_out: m.step > 3\n'
        '  because "{m.origin} arrived at step {m.step}"\n')
    v = rules.evaluate(late_echo())
    assert [r.message for r in v.reasons] == ["context.messages[1] arrived at step 4"]
    assert rules.evaluate(late_echo(decision=None)).verdict == "SCORED"


def test_episode1_verdicts_carry_no_left_out() -> None:
    import yaml

    from litmus_rules.io.yamltext import Loader as _Loader

    docs = [d for path in NOTE_EXAMPLES for d in yaml.load_all(Path(path).read_text(), Loader=_Loader)]
    assert docs and all(d["litmus"] == "episode/1" for d in docs)
    for doc in docs:
        v = RULES.evaluate(doc)
        assert v.verdict != "ERROR" and v.left_out == ()
        assert all(r.left_out == () for r in v.reasons) and "left out" not in render_verdict(v)


def test_a_copy_is_not_changed() -> None:
    ep = late_echo()
    before = copy.deepcopy(ep)
    RULES.evaluate(ep, explain="full")
    assert ep == before
