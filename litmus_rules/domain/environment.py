"""THE environment the engine checks, compiles and evaluates rules in: the domain's built-ins, the
episode's fact schema and the derived facts, with the caches their work keeps (lang/environment.py
says what an environment is).

Each call of `build_environment` makes fresh caches: a RuleSet builds one and so owns its state.

`Reference` (the reference evaluator in this environment, an oracle for the tests) is made on first
use: a check does not import the reference evaluator.
"""

from __future__ import annotations

from typing import Any, Mapping

from litmus_rules.cache import BoundedCache
from litmus_rules.domain import builtins, facts, joined, surface_texts
from litmus_rules.errors import Diagnostic
from litmus_rules.lang import ast
from litmus_rules.lang.checker import Checker
from litmus_rules.lang.environment import Environment


def build_environment(schema: Mapping[str, Any] | None = None) -> Environment:
    """The domain environment, with caches of its own (read from the built-in table now, so a
    built-in replaced in `builtins.REGISTRY` is the one the next ruleset uses)."""
    recent: surface_texts.Recent = BoundedCache(surface_texts.RECENT_SURFACE_LISTS)
    stopped: BoundedCache[tuple[Any, str]] = BoundedCache(facts.STOPPED_ENTRIES)
    stopped_tools: BoundedCache[tuple[Any, Exception]] = BoundedCache(builtins.STOPPED_TOOLS)
    return Environment(
        builtins.with_caches(builtins.REGISTRY, recent, joined._HaystackCache(), stopped_tools),
        facts.FactSchema(schema),  # None: the newest format's schema (facts.FACT_SCHEMA_VERSION)
        facts.derived_facts(stopped),
    )


def check(tree: ast.RuleSet) -> list[Diagnostic]:
    """Every checker diagnostic of a ruleset in the domain environment, sorted by location."""
    return Checker(tree, build_environment()).run()


def _reference_class() -> type:
    from litmus_rules.lang.evaluate.reference import Reference as _Reference

    class Reference(_Reference):
        """The reference evaluator (lang/evaluate/reference.py) in the domain environment."""

        def __init__(
            self,
            lets: Mapping[str, ast.Let],
            params: Mapping[str, Any],
            facts: Mapping[str, Any],
            batch: Mapping[str, Any] | None = None,
        ) -> None:
            super().__init__(lets, params, facts, batch, environment=build_environment())

    Reference.__module__, Reference.__qualname__ = __name__, "Reference"
    return Reference


def __getattr__(name: str) -> Any:
    if name == "Reference":
        globals()["Reference"] = cls = _reference_class()  # once: later reads are plain attribute reads
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
