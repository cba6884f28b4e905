"""Traces shared between the verdicts of a run (issue 13, cheap output: lang/trace_memo.py).

A trace whose records are all small scalars is built once per run and shared; whatever was shared,
every verdict's JSON is the JSON built for it alone."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers import EXAMPLES, ROOT
from litmus_rules import load_rules, load_rules_text
from litmus_rules.io.load import iter_episodes
from litmus_rules.lang import ast
from litmus_rules.lang.trace import _BlameBuilder
from litmus_rules.lang.trace_memo import REPR_MAX, RETRY, TraceMemo, looked_up, records_key
from litmus_rules.lang.syntax import parse_expression
from litmus_rules.lang.values import TRACE_ITEMS, TRACE_STRING, UNKNOWN
from litmus_rules.render.json import json_line

sys.path.insert(0, str(ROOT / "bench"))
import realistic  # noqa: E402

RULES = '''ruleset memo.test version "1"

let labels = [controls.null.label, controls.positive.label]
let fired = default(controls.positive.fired, false)

rule labels_differ
  "The two controls' labels differ."
  reject when labels[0] == labels[1] or (count x in labels: x == null) >= 1
  because "labels {labels}"

rule positive_fires
  reject unless fired and controls.positive.label in ["unsafe", 1, true]
  because "not fired"

rule signals_known
  reject when any s in detector.signals: s.value == controls.null.label
  because "signal {s.value}"

classify decision
  "escalated" when controls.positive.label == "escalate"
  "executed" when fired
  "refused" otherwise
'''

# the values a record can hold that print differently but may compare equal
SCALARS = st.sampled_from([True, False, 1, 0, 1.0, -0.0, 0.0, None, "1", "true", "unsafe", "escalate", "", "x" * (TRACE_STRING + 1)])
MAYBE = st.one_of(SCALARS, st.just("<absent>"), st.lists(SCALARS, max_size=3))


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value != "<absent>":
        d[key] = value


@st.composite
def episodes(draw: st.DrawFn, i: int = 0) -> dict[str, Any]:
    null: dict[str, Any] = {"transcript": "ok"}
    positive: dict[str, Any] = {}
    _put(null, "label", draw(MAYBE))
    _put(positive, "label", draw(MAYBE))
    _put(positive, "fired", draw(MAYBE))
    signals = [{"id": f"s{k}", "kind": "substring", "value": draw(MAYBE)} for k in range(draw(st.integers(0, 2)))]
    return {"litmus": "episode/1", "id": "ep", "controls": {"null": null, "positive": positive},
            "detector": {"channel": "dispatch", "signals": signals}}


def _same_json_shared_or_not(rules: Any, episodes: list[dict[str, Any]], explain: str = "fails") -> TraceMemo:
    memo = TraceMemo()
    for n, episode in enumerate(episodes):
        for _ in range(2):  # the second time round, every trace that can be is taken from the memo
            verdict = rules.evaluate(episode, validate=False, explain=explain)
            alone, shared = verdict.to_json(), verdict.to_json(shared=memo)
            assert json_line(shared) == json_line(alone), f"episode {n}"
            for reason in verdict.reasons:  # a blame (the missing facts) taken from the memo, or built
                trace = reason.trace
                if trace is not None and trace._condition is not None:
                    built = _BlameBuilder(trace._rec or {}, trace._lets or {}).blame(trace._condition)
                    assert trace.blame() == built, f"episode {n}, rule {reason.rule}"
    return memo


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(episodes(), min_size=1, max_size=6), st.sampled_from(["fails", "full"]))
def test_a_shared_trace_is_the_trace_built_alone(batch: list[dict[str, Any]], explain: str) -> None:
    # True and 1, 0.0 and -0.0, None and an absent fact: equal or alike as keys, printed apart
    _same_json_shared_or_not(load_rules_text(RULES, "memo.litmus"), batch, explain)


# pairs that compare equal (or hash alike) but print apart
TWINS = [(True, 1), (False, 0), (1, 1.0), (0.0, -0.0), (None, "<absent>"), ("1", 1), ([True], [1])]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episodes(), st.sampled_from(TWINS), st.sampled_from(["null.label", "positive.label", "positive.fired"]),
       st.sampled_from(["fails", "full"]))
def test_a_twin_whose_one_record_prints_apart_is_not_given_the_first_ones_trace(
        episode: dict[str, Any], twins: tuple[Any, Any], where: str, explain: str) -> None:
    control, key = where.split(".")
    pair = []
    for value in twins:
        twin = json.loads(json.dumps(episode))
        twin["controls"][control].pop(key, None)
        _put(twin["controls"][control], key, value)
        pair.append(twin)
    _same_json_shared_or_not(load_rules_text(RULES, "memo.litmus"), pair, explain)


def test_the_shipped_rules_on_the_examples_and_realistic_episodes() -> None:
    loaded = [e.data for e in iter_episodes([str(EXAMPLES)]) if e.data is not None]
    memo = _same_json_shared_or_not(load_rules(), loaded + realistic.episodes(12), "full")
    assert len(memo) > 0


def test_the_shipped_rules_on_episodes_that_miss_the_same_facts() -> None:
    """An imported corpus in small: every episode misses the same facts, and is rejected by the
    same traces, which the memo then holds and shares."""
    tools = [{"name": "get_iban", "description": "Get the IBAN of the account.", "input_schema": {
        "type": "object", "properties": {"account": {"type": "string"}}}}]
    base = {"litmus": "episode/1", "context": {"system_prompt": "You are an agent.", "tools": tools},
            "detector": {"channel": "dispatch", "decision_field": "decision"}}
    batch = [{**base, "id": f"ep-{i}"} for i in range(5)]
    rules = load_rules()
    memo = _same_json_shared_or_not(rules, batch)
    first, second = (rules.evaluate(e, validate=False).to_json(shared=memo) for e in batch[:2])
    assert first["reasons"] and len(first["reasons"]) == len(second["reasons"])
    # every trace, the ones that show the tool list (in a copy of its own per episode) too
    for a, b in zip(first["reasons"], second["reasons"]):
        assert a["trace"]["condition"] is b["trace"]["condition"], a["rule"]
    assert any("get_iban" in json_line(r["trace"]) for r in first["reasons"])


def test_a_blame_from_the_memo_is_the_one_built_and_the_callers_own() -> None:
    rules = load_rules()
    episode = {"litmus": "episode/1", "id": "ep", "context": {"system_prompt": "You are an agent."},
               "detector": {"channel": "dispatch", "decision_field": "decision"}}
    first, second = rules.evaluate(episode), rules.evaluate(episode)
    assert [(r.message, r.missing) for r in first.reasons] == [(r.message, r.missing) for r in second.reasons]
    assert any(r.missing for r in second.reasons)
    for reason in second.reasons:
        trace = reason.trace
        missing, lets = trace.blame()
        missing.append("changed by the caller")
        lets.append("changed by the caller")
        assert "changed by the caller" not in trace.blame()[0] + trace.blame()[1]


# ---- the key ---------------------------------------------------------------------------------------------


def _condition() -> ast.Expr:
    return parse_expression("a == b", "memo.litmus")  # a fresh node: its own record of misses


def test_records_that_print_apart_make_different_keys() -> None:
    seen: dict[Any, Any] = {}
    absent = object()
    for value in (True, 1, False, 0, None, absent, UNKNOWN, "1", [1], [True], ["1"], [], [None]):
        rec = {} if value is absent else {1: value}
        key = records_key(_condition(), rec)
        assert key is not None, value
        assert key not in seen, f"{value!r} and {seen.get(key)!r} share a key"
        seen[key] = value
    # the same value recorded for another node, or an error beside it: another trace
    for rec in ({2: True}, {1: True, ("error", 1): "boom"}, {1: True, ("bind", 3): 0}):
        assert records_key(_condition(), rec) not in seen


class _NoRepr:
    def __repr__(self) -> str:
        raise ValueError("no repr")


def _deep(n: int) -> Any:
    out: Any = []
    for _ in range(n):
        out = [out]
    return out


class _Listed(list):  # type: ignore[type-arg]
    def __repr__(self) -> str:
        return "a list of its own"


def test_any_other_record_is_keyed_by_its_marshal_form_or_its_repr() -> None:
    seen: dict[Any, Any] = {}
    for value in (1.0, 1, True, -0.0, 0.0, float("nan"), float("inf"), "1.0", {"k": 1}, {"k": True}, {"k": "1"},
                  (1,), [1], [[1]], [{"k": 1}], [1.0], list(range(TRACE_ITEMS + 1)), "x" * (TRACE_STRING + 1),
                  ["x" * (TRACE_STRING + 1)], {1: "a"}, {"1": "a"}, {True: "a"}, {"true": "a"},
                  [UNKNOWN], [UNKNOWN, 1], [[UNKNOWN]], _Listed([1]), [_Listed([1])], [None], [float("nan")]):
        key = records_key(_condition(), {1: True, 2: value})
        assert key is not None, value
        assert key not in seen, f"{value!r} and {seen.get(key)!r} share a key"
        seen[key] = value


def test_equal_records_of_built_in_types_make_one_key_and_others_their_repr() -> None:
    tools = [{"name": "get_iban", "input_schema": {"properties": {"n": {"default": None, "type": "number"}}}}]
    first, second = (records_key(_condition(), {1: json.loads(json.dumps(tools))}) for _ in range(2))
    assert first is not None and first[1] == "m" and first == second
    held = records_key(_condition(), {1: {"a": UNKNOWN}})  # marshal writes built-in types only
    assert held is not None and held[1] == "r" and held[2] == (repr({"a": UNKNOWN}),)
    assert records_key(_condition(), {1: _Listed([1])}) == records_key(_condition(), {1: _Listed([2])})  # one repr


@pytest.mark.parametrize("value", [_NoRepr(), _deep(100_000), "x" * (REPR_MAX + 1), ["x" * REPR_MAX]])
def test_a_record_without_a_short_repr_leaves_the_trace_to_be_built(value: Any) -> None:
    assert records_key(_condition(), {1: True, 2: value}) is None


def test_a_condition_whose_traces_keep_missing_is_tried_once_in_a_while() -> None:
    condition = _condition()
    for _ in range(RETRY + 1):
        looked_up(condition, False)  # no earlier trace had its records: a tool list that differs each time
    tried = [records_key(condition, {1: True}) is not None for _ in range(RETRY)]
    assert tried == [False] * (RETRY - 1) + [True]  # tried once in RETRY traces
    looked_up(condition, True)
    assert all(records_key(condition, {1: True}) is not None for _ in range(RETRY))  # found: tried every time


def test_the_memo_is_emptied_when_its_keys_hold_too_many_records() -> None:
    memo = TraceMemo()
    condition = _condition()
    per = TraceMemo.WEIGHT_LIMIT // 4
    keys = [(i, "u" * per, ()) for i in range(5)]  # (which records, their kinds, their values)
    for i in range(4):
        memo.put(condition, keys[i], {"n": i})
    assert len(memo) == 4 and memo.get(condition, keys[0]) == {"n": 0}
    assert memo.get(condition, keys[0], "compact") is None  # another variant
    memo.put(condition, keys[4], {"n": 4})
    assert len(memo) == 1 and memo.get(condition, keys[0]) is None
    assert memo.get(_condition(), keys[4]) is None  # another condition: not its entry
    lists = TraceMemo()
    lists.put(condition, (0, "l" * (per // TRACE_ITEMS + 1), ()), "a list weighs what it may hold")
    lists.put(condition, (1, "l" * (per // TRACE_ITEMS + 1), ()), "")
    lists.put(condition, (2, "l" * (per // TRACE_ITEMS + 1), ()), "")
    lists.put(condition, (3, "l" * (per // TRACE_ITEMS + 1), ()), "")
    assert len(lists) < 4


def test_the_batch_writer_output_is_unchanged(tmp_path: Any) -> None:
    """`check --format jsonl` (which shares) writes what each verdict's own JSON is."""
    from litmus_rules.cli import main

    base = {"litmus": "episode/1", "context": {"system_prompt": "You are an agent."},
            "detector": {"channel": "dispatch", "decision_field": "decision"}}
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps({**base, "id": f"ep-{i}"}) + "\n" for i in range(4)))
    out = tmp_path / "out.jsonl"
    assert main(["check", str(path), "--format", "jsonl", "-o", str(out)]) == 1
    rules = load_rules()
    written = out.read_text().splitlines()
    for line, i in zip(written, range(4)):
        verdict = rules.evaluate({**base, "id": f"ep-{i}"})
        expected = verdict.to_json()
        got = json.loads(line)
        expected["source"] = got["source"]  # where the batch found it
        assert got == json.loads(json_line(expected))
