"""episode/1.1 steps (issue 10 item 6), surface side: a context message stamped after
`episode.decision_step` is not something the agent received before deciding, so the surface walk
leaves it out and `left_out` reports it; on any doubt the text stays a surface."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from litmus_rules.domain import walk
from litmus_rules.domain.steps import Late, decision_step, left_out, received_records
from litmus_rules.domain.surfaces import extract_surfaces, received_surfaces
from litmus_rules.io import wire
from litmus_rules.io.load import validate_episode
from _helpers import EXAMPLES, base_episode

LATE = "LATE_RESULT_ZEBRA"
EARLY = "EARLY_NOTE_QUILL"


def episode11(messages: list[dict[str, Any]], decision: Any = "absent", unknowns: list[str] = (),
              check: bool = True) -> dict[str, Any]:
    ep = wire.upgrade(base_episode())
    ep["context"]["messages"] = copy.deepcopy(messages)
    if decision != "absent":
        ep["episode"]["decision_step"] = decision
    if unknowns:
        ep["unknowns"] = [{"path": p, "note": "the harness does not say"} for p in unknowns]
    if check:
        problem = validate_episode(ep, source="test")
        assert problem is None, problem
    return dict(wire.normalise(ep))


def texts(ep: dict[str, Any]) -> set[str]:
    return {s.text for s in received_surfaces(ep)}


TWO = [{"role": "user", "content": EARLY, "step": 0}, {"role": "tool", "name": "send", "content": LATE, "step": 4}]


def test_a_message_after_the_decision_step_is_left_out_and_reported() -> None:
    ep = episode11(TWO, decision=3)
    assert EARLY in texts(ep) and LATE not in texts(ep)
    assert left_out(ep) == [Late(1, "context.messages[1]", 4)]
    # the walker itself still reads everything it is given
    assert LATE in {s.text for s in extract_surfaces(ep["context"])}
    # and the records of the `surfaces` fact are the same surfaces
    assert [r[2] for r in received_records(ep)] == [s.text for s in received_surfaces(ep)]


def test_the_whole_late_message_is_left_out_parts_name_and_tool_calls() -> None:
    late = {"role": "assistant", "step": 5, "name": f"{LATE}-name",
            "content": [{"type": "text", "text": LATE}, {"type": "text", "text": LATE, "injected": True}],
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": f'{{"a": "{LATE}"}}'}}]}
    ep = episode11([TWO[0], late], decision=2)
    assert not any(LATE in s.text for s in received_surfaces(ep))
    assert not any(s.origin.startswith("context.messages[1]") for s in received_surfaces(ep))


@pytest.mark.parametrize("decision", ["absent", None])
def test_without_a_decision_step_nothing_is_left_out(decision: Any) -> None:
    ep = episode11(TWO, decision=decision)
    assert {EARLY, LATE} <= texts(ep)
    assert left_out(ep) == []


@pytest.mark.parametrize("decision", [True, "3", 2.5, float("nan"), [3], {"step": 3}])
def test_a_decision_step_that_is_not_certainly_an_integer_leaves_nothing_out(decision: Any) -> None:
    ep = episode11(TWO, decision=decision, check=False)  # the schema refuses these; read anyway
    assert decision_step(ep) is None
    assert LATE in texts(ep) and left_out(ep) == []


def test_an_integral_float_is_an_integer_step() -> None:
    ep = episode11([TWO[0], {**TWO[1], "step": 4.0}], decision=3.0)
    assert LATE not in texts(ep)
    assert left_out(ep) == [Late(1, "context.messages[1]", 4)]


@pytest.mark.parametrize("step", ["absent", None, 3, 0])
def test_a_message_without_a_later_step_is_kept_whatever_the_others_carry(step: Any) -> None:
    msg: dict[str, Any] = {"role": "tool", "name": "read", "content": EARLY}
    if step != "absent":
        msg["step"] = step
    ep = episode11([msg, {"role": "tool", "name": "send", "content": LATE, "step": 9}], decision=3)
    assert EARLY in texts(ep) and LATE not in texts(ep)
    assert [m.index for m in left_out(ep)] == [1]


@pytest.mark.parametrize("step", ["4", True, 4.5, [4]])
def test_a_step_that_is_not_an_integer_keeps_the_message_and_is_read_as_text(step: Any) -> None:
    ep = episode11([{"role": "tool", "name": "send", "content": LATE, "step": step}], decision=3, check=False)
    assert LATE in texts(ep) and left_out(ep) == []
    if step == "4":
        assert "4" in texts(ep)


def test_document_order_is_not_read_each_message_has_its_own_stamp() -> None:
    msgs = [{"role": "tool", "name": "a", "content": LATE, "step": 7},
            {"role": "user", "content": EARLY, "step": 1}]
    ep = episode11(msgs, decision=3)
    assert EARLY in texts(ep) and LATE not in texts(ep)


@pytest.mark.parametrize("pointer", ["/episode/decision_step", "/episode", "/context/messages/1/step",
                                     "/context/messages/1", "/context/messages", "/context"])
def test_a_step_declared_unknown_leaves_nothing_out(pointer: str) -> None:
    ep = episode11(TWO, decision=3, unknowns=[pointer])
    assert LATE in texts(ep) and left_out(ep) == []


def test_an_unrelated_unknown_still_leaves_the_late_message_out() -> None:
    ep = episode11(TWO, decision=3, unknowns=["/canaries", "/context/messages/0/step", "/episode/decision"])
    assert LATE not in texts(ep) and [m.index for m in left_out(ep)] == [1]


def test_a_step_is_the_harness_clock_not_text() -> None:
    ep = episode11([{"role": "user", "content": "hello", "step": 31337}], decision=99999)
    assert not any("31337" in s.text for s in received_surfaces(ep))
    # a `step` key elsewhere (inside a part: provider data) is read like any other data
    ep = episode11([{"role": "user", "content": [{"type": "text", "text": "t", "step": 31337}]}])
    assert "31337" in texts(ep)


def test_the_steps_example_leaves_out_the_result_of_the_agents_own_call() -> None:
    data = yaml.safe_load(Path(EXAMPLES / "v1.1" / "steps.yaml").read_text(encoding="utf-8"))
    assert validate_episode(data, source="steps") is None
    ep = wire.normalise(data)
    assert left_out(ep) == [Late(2, "context.messages[2]", 4)]
    assert "sent: ZEBRA-4417-QUILL" not in texts(ep)
    # the injected tool result before the decision is still read, and injected
    assert any("ZEBRA-4417-QUILL" in s.text and s.injected for s in received_surfaces(ep))


def test_a_late_message_costs_nothing_against_the_walk_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk, "MAX_SURFACES", 50)
    big = {"role": "tool", "name": "dump", "content": [{"type": "text", "text": f"line {i}"} for i in range(200)]}
    late = episode11([TWO[0], {**big, "step": 9}], decision=3)
    assert LATE not in texts(late)  # walked within the limit: the late message is not read
    early = episode11([TWO[0], {**big, "step": 1}], decision=3)
    with pytest.raises(walk.WalkLimit, match="MAX_SURFACES"):
        received_surfaces(early)
