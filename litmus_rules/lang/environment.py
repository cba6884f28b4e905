"""The environment a ruleset is checked, compiled and evaluated in (cel-go's `Env`).

The language knows nothing of any domain: what names a rule can read and which functions it can
call come from here. An environment holds
- the built-in table (name -> `Builtin`, builtins.py),
- the root fact types (`RootTypes`: the names a rule can read at top level, and their types),
- the derived facts (`Derived`): names whose value is computed from the episode on first use.
The domain builds the one the engine uses (domain/environment.py).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

from litmus_rules.lang import types as t
from litmus_rules.lang.builtins import Builtin


class RootTypes(Protocol):
    """Types of the names a rule can read at top level (facts, derived facts included)."""

    def root_names(self) -> list[str]: ...

    def root_type(self, name: str) -> t.T | None: ...


class Derived:
    """A fact computed from the episode (and its batch) once per evaluation, on first use.

    This module's classes are plain slotted ones, never changed once made: attrs would generate
    their methods on every start of the command line."""

    __slots__ = ("name", "type", "compute", "doc", "why_unknown")

    def __init__(
        self,
        name: str,
        type: t.T,
        compute: Callable[[Mapping[str, Any], Mapping[str, Any]], Any],  # (episode, batch context) -> value
        doc: str,
        # Why `compute` gave unknown on this episode (a limit, with where it stopped), for the
        # insufficient-evidence message; None when it did not, or when there is nothing to add.
        why_unknown: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.compute = compute
        self.doc = doc
        self.why_unknown = why_unknown


class Environment:
    __slots__ = ("builtins", "roots", "derived")

    def __init__(self, builtins: Mapping[str, Builtin], roots: RootTypes,
                 derived: Mapping[str, Derived] | None = None) -> None:
        self.builtins = builtins
        self.roots = roots
        self.derived: Mapping[str, Derived] = {} if derived is None else derived
