"""What the agent received before it decided: context messages on the run's clock (episode/1.1).

A context message may carry `step` (the run's clock, shared with dispatch records) and the run of
the agent under test `episode.decision_step`. A message stamped after the decision step arrived after
the decision (typically the result of the agent's own call): it is not something the agent received
before deciding, so the surface walk leaves it out (`received_records`), and `left_out` says which
messages were left out, for the trace.

Leaving text out is the dangerous direction: every rule that reads surfaces rejects on what it finds
there, so text that is wrongly left out can hide a contamination. A message is therefore left out
only when both stamps are certain, and kept on any doubt:
- `episode.decision_step` absent, null, not an integer (a boolean is not one), or declared unknown in
  `unknowns` (`/episode/decision_step`, or a pointer above it such as `/episode`): nothing is left out;
- a message without `step`, with `step: null` or a non-integer one, or whose step is declared unknown
  (`/context/messages/3/step` or above): kept, whatever the other messages carry;
- a message stamped at or before the decision step: kept (at the decision step it may have arrived
  before the decision).
Only a message stamped strictly after the decision step is left out, whole (its parts, its name, its
tool calls). Document order is not read: each message's own stamp says when it arrived. An integral
float (`3.0`) is an integer, as JSON Schema counts them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from litmus_rules.domain.walk import Record, context_records


class Late(NamedTuple):
    """A context message left out of the surfaces: it arrived after the decision."""

    index: int  # in context.messages
    origin: str  # context.messages[index]
    step: int


def as_step(value: Any) -> int | None:
    """The integer a `step` or `decision_step` value certainly is, else None (absent, null, a
    boolean, a non-integral or non-finite number, anything else)."""
    cls = value.__class__
    if cls is int:
        return value  # type: ignore[no-any-return]
    if cls is float and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _declared_unknown(document: Mapping[str, Any]) -> tuple[str, ...]:
    """The JSON pointers the producer declared unknown (`unknowns[].path`)."""
    listed = document.get("unknowns")
    if listed.__class__ is not list:
        return ()
    return tuple(u["path"] for u in listed if isinstance(u, Mapping) and isinstance(u.get("path"), str))


def _covers(pointers: tuple[str, ...], pointer: str) -> bool:
    """Is `pointer` at or below one of `pointers`? (`/episode` covers `/episode/decision_step`.)"""
    return any(p == "" or pointer == p or pointer.startswith(p + "/") for p in pointers)


def decision_step(document: Mapping[str, Any]) -> int | None:
    """`episode.decision_step` when it is certainly an integer, else None (see the module doc)."""
    run = document.get("episode")
    if not isinstance(run, Mapping):
        return None
    step = as_step(run.get("decision_step"))
    if step is None or _covers(_declared_unknown(document), "/episode/decision_step"):
        return None
    return step


def late_messages(context: Mapping[str, Any], decision: int | None,
                  unknown: tuple[str, ...] = ()) -> list[Late]:
    """The messages of `context.messages` stamped strictly after `decision`, in order; none when
    `decision` is None. `unknown`: JSON pointers declared unknown (a message whose step is under
    one of them is kept)."""
    messages = context.get("messages")
    if decision is None or messages.__class__ is not list:
        return []
    out = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            continue
        step = as_step(msg.get("step"))
        if step is not None and step > decision and not (unknown and _covers(unknown, f"/context/messages/{i}/step")):
            out.append(Late(i, f"context.messages[{i}]", step))
    return out


def left_out(document: Mapping[str, Any]) -> list[Late]:
    """The context messages of an episode that the surface walk leaves out (arrived after the
    decision), in order; empty when nothing is certainly late."""
    context = document.get("context")
    if not isinstance(context, Mapping):
        return []
    decision = decision_step(document)
    if decision is None:
        return []
    return late_messages(context, decision, _declared_unknown(document))


def received_records(document: Mapping[str, Any]) -> list[Record]:
    """Every surface of the episode's context the agent received before deciding (the late
    messages of `left_out` are not walked), as `walk.context_records` gives them. Raises WalkLimit
    past a bound; a document without a context object has none."""
    context = document.get("context")
    if not isinstance(context, Mapping):
        return []
    late = left_out(document)
    return context_records(context, frozenset(m.index for m in late) if late else ())
