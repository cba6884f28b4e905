"""The fact schema: which names a rule can read, and their types; and the derived facts.

Facts are the episode's own fields (typed by the episode JSON Schema shipped in the package) plus
*derived facts* the engine computes once per episode on first use (surfaces, batch facts).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from litmus_rules._resources import episode_schema_path
from litmus_rules.cache import BoundedCache
from litmus_rules.domain import unknowns
from litmus_rules.lang import types as t
from litmus_rules.lang.environment import Derived


SURFACE = t.obj(
    {
        "origin": t.STR,
        "kind": t.STR,
        "text": t.STR,
        "injected": t.BOOL,
        "tool": t.union(t.STR, t.NULL),
        "argument": t.union(t.STR, t.NULL),
    }
)

SHARED_CANARY = t.obj({"value": t.STR, "other_ids": t.list_of(t.STR)})


LEFT_OUT = t.obj({"origin": t.STR, "step": t.NUM})

# The last few episodes whose walk stopped at a limit, with why (a RuleSet's cache, keyed by the
# episode's id): the message of a reject is built right after the fact was derived, and a hostile
# context is not walked twice for it.
STOPPED_ENTRIES = 2


def _surfaces(
    episode: Mapping[str, Any], batch: Mapping[str, Any], stopped: BoundedCache[tuple[Any, str]] | None = None
) -> Any:
    """The surfaces as facts; unknown when the walk stopped at a limit (text it did not read is
    never clean) or when there is no context."""
    from litmus_rules.lang.values import UNKNOWN
    from litmus_rules.domain.walk import WalkLimit
    from litmus_rules.domain.steps import received_records

    # the episode as given: a declared unknown inside `context` (an absent system prompt, an
    # `injected` flag the importer could not tell) leaves the text that is there received text, so
    # what a rule finds in it stays found; steps.py keeps a message whose `step` is declared unknown
    episode = unknowns.original(episode)
    if not isinstance(episode.get("context"), Mapping):
        return UNKNOWN
    try:
        found = received_records(episode)
    except WalkLimit as exc:
        if stopped is not None:
            stopped.put(id(episode), (episode, str(exc)))
        return UNKNOWN
    # a dict literal per surface: the rules read fields of plain dicts
    return [
        {"origin": o, "kind": k, "text": x, "injected": i, "tool": tl, "argument": a}
        for o, k, x, i, tl, a in found
    ]


def _surfaces_unknown(
    episode: Mapping[str, Any], batch: Mapping[str, Any], stopped: BoundedCache[tuple[Any, str]] | None = None
) -> str | None:
    from litmus_rules.domain.walk import WalkLimit
    from litmus_rules.domain.steps import received_records

    episode = unknowns.original(episode)
    if not isinstance(episode.get("context"), Mapping):
        return None  # a missing context is its own missing fact
    held = stopped.get(id(episode)) if stopped is not None else None
    if held is not None and held[0] is episode:
        return held[1]
    try:
        received_records(episode)
    except WalkLimit as exc:
        return str(exc)
    return None


def _left_out(episode: Mapping[str, Any], batch: Mapping[str, Any]) -> Any:
    from litmus_rules.domain.steps import left_out

    return [{"origin": m.origin, "step": m.step} for m in left_out(unknowns.original(episode))]


def _declared_canaries(episode: Mapping[str, Any]) -> unknowns.Declared | None:
    """The first declared unknown at, above or below `/canaries`."""
    episode = unknowns.original(episode)
    if not episode.get("unknowns"):
        return None
    return next((e for e in unknowns.declared(episode) if unknowns.related(e, ("canaries",))), None)


def _shared_canaries_unknown(episode: Mapping[str, Any], batch: Mapping[str, Any]) -> str | None:
    declared = _declared_canaries(episode)
    return None if declared is None else unknowns.quote(declared)


def _shared_canaries(episode: Mapping[str, Any], batch: Mapping[str, Any]) -> Any:
    from litmus_rules.lang.values import UNKNOWN

    if _declared_canaries(episode) is not None:
        return UNKNOWN  # declared canaries are not known canaries, nor are their owners
    episode = unknowns.original(episode)
    owners: Mapping[str, list[str]] = batch.get("canary_owners", {})
    me = episode.get("id")
    out = []
    seen = set()
    for canary in episode.get("canaries") or ():
        value = canary.get("value") if isinstance(canary, Mapping) else None
        if not isinstance(value, str) or value in seen:
            continue
        seen.add(value)
        others = sorted({i for i in owners.get(value, ()) if i != me})
        if others:
            out.append({"value": value, "other_ids": others})
    return out


def derived_facts(stopped: BoundedCache[tuple[Any, str]] | None = None) -> dict[str, Derived]:
    """The derived facts; `stopped` (owned by a RuleSet) remembers why recent walks stopped."""
    bind = functools.partial
    return {
        d.name: d
        for d in (
            Derived(
                "surfaces",
                t.list_of(SURFACE),
                bind(_surfaces, stopped=stopped) if stopped is not None else _surfaces,
                "every text the agent receives before deciding: each string value and object key under "
                "`context`, at any depth; messages stamped after `episode.decision_step` are left out (see "
                "`left_out`); unknown when a limit stops the walk",
                bind(_surfaces_unknown, stopped=stopped) if stopped is not None else _surfaces_unknown,
            ),
            Derived(
                "left_out",
                t.list_of(LEFT_OUT),
                _left_out,
                "context messages left out of `surfaces` because they are stamped (`step`) after "
                "`episode.decision_step`: what arrived after the agent decided",
            ),
            Derived(
                "shared_canaries",
                t.list_of(SHARED_CANARY),
                _shared_canaries,
                "this episode's canary values that other episodes of the same batch also use; unknown "
                "when `canaries` is declared unknown",
                _shared_canaries_unknown,
            ),
        )
    }


# The derived facts' names and types, and for calls outside any RuleSet (which builds its own,
# with a cache it owns: domain/environment.py).
DERIVED: dict[str, Derived] = derived_facts(BoundedCache(STOPPED_ENTRIES))


# The rules are checked against the newest format: episode/1.1 is a superset of episode/1, so every
# episode/1 path keeps its type and the 1.1 paths (`run`, `unknowns`, `detector.scorer`, `state`,
# ...) are known too, with did-you-mean.
FACT_SCHEMA_VERSION = "episode/1.1"


@functools.lru_cache(maxsize=1)
def episode_schema() -> Mapping[str, Any]:
    with open(episode_schema_path(FACT_SCHEMA_VERSION), encoding="utf-8") as fh:
        schema: Mapping[str, Any] = json.load(fh)
    return schema


class FactSchema:
    """Types of the names a rule can read at top level (the environment's `RootTypes`)."""

    def __init__(self, schema: Mapping[str, Any] | None = None) -> None:
        self.schema = schema if schema is not None else episode_schema()
        self._root = t.from_schema(self.schema, self.schema)

    def root_names(self) -> list[str]:
        return sorted(set(t.field_names(self._root) or ()) | set(DERIVED))

    def root_type(self, name: str) -> t.T | None:
        if name in DERIVED:
            return DERIVED[name].type
        return t.field_type(self._root, name)
