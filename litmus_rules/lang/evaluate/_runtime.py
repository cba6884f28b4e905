"""Runtime values and operators of compiled rules: the per-episode Env and Kleene-aware helpers."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from litmus_rules.lang import ast
from litmus_rules.lang import values
from litmus_rules.lang.values import UNKNOWN, BudgetExceeded, EvalFailure, Found, ValueTooLarge, type_name

Fn = Callable[["Env"], Any]

DEFAULT_BUDGET = 20_000_000
_UNSET: Any = object()
UNBOUND: Any = object()


class Env:
    """Per-evaluation state: the episode's facts, quantifier slots, let cache, budget, recordings."""

    __slots__ = ("facts", "batch", "slots", "lets", "derived", "budget", "rec", "hint", "assume")

    def __init__(self, facts: Mapping[str, Any], batch: Mapping[str, Any], nslots: int, nlets: int, budget: int):
        self.facts = facts
        self.batch = batch
        self.slots: list[Any] = [UNBOUND] * nslots
        self.lets: list[Any] = [_UNSET] * nlets
        self.derived: dict[str, Any] = {}
        self.budget = budget
        self.rec: dict[Any, Any] | None = None
        self.hint: list[Any] | None = None  # a recording run: the fast run's slots, where witnesses are
        self.assume: Any = None  # a recording run: the result an inner loop level is known to have
        # a list's set of strings is kept for one evaluation at most (a caller may change its
        # facts between two)
        _last_strings[0] = _NO_STRINGS

    def charge(self, units: int) -> None:
        self.budget -= units
        if self.budget < 0:
            raise BudgetExceeded("evaluation budget exceeded: the rules did more work than allowed on this episode")

    def derive(self, name: str, compute: Callable[[Mapping[str, Any], Mapping[str, Any]], Any]) -> Any:
        """A derived fact (the environment's `Derived.compute`), computed once per evaluation."""
        value = self.derived.get(name, _UNSET)
        if value is _UNSET:
            try:
                value = compute(self.facts, self.batch)
            except EvalFailure:
                raise
            except Exception as exc:  # a derived fact must never crash the engine: fail closed
                raise EvalFailure(f"could not derive `{name}`: {exc}") from None
            self.derived[name] = value
        return value


def truth(value: Any, node: ast.Expr) -> Any:
    """True / False / UNKNOWN for a condition value; anything else is a type error."""
    if value is True or value is False or value is UNKNOWN:
        return value
    if value.__class__ is Found:
        return True
    raise EvalFailure(f"`{node.span.text}` must be true or false, but it is {type_name(value)}", node)


def _strict_eq(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, and 1 equals 1.0
    return bool(a == b) and (a.__class__ is bool) == (b.__class__ is bool)


# Lists from this long are searched through the set of their strings (`_member`). Values are never
# changed during an evaluation, and the list is held with its set, so `is` tells it again.
SET_MIN = 32
_NO_STRINGS: tuple[Any, frozenset[str]] = (None, frozenset())
_last_strings: list[tuple[Any, frozenset[str]]] = [_NO_STRINGS]  # (one pair, read and written whole)


def _member(item: Any, container: Any, node: ast.Expr) -> Any:
    if item is UNKNOWN or container is UNKNOWN:
        return UNKNOWN
    if isinstance(container, str):
        if not isinstance(item, str):
            raise EvalFailure(f"`in` on a string needs a string on its left, got {type_name(item)}", node)
        return item in container
    if isinstance(container, list):
        if item.__class__ is str:
            # a string equals only an equal string, so `_strict_eq` is `==`: list's own `in`, in C,
            # or for a long list the set of its strings, kept for the last list asked about
            # (`token in null_canaries`, asked once per token, is quadratic otherwise)
            if len(container) < SET_MIN:
                return item in container
            last = _last_strings[0]
            if last[0] is not container:
                last = _last_strings[0] = (container, frozenset(x for x in container if x.__class__ is str))
            return item in last[1]
        return any(_strict_eq(item, x) for x in container)
    if isinstance(container, dict):
        return item in container if isinstance(item, str) else False
    raise EvalFailure(f"`in` needs a list, string or object on its right, got {type_name(container)}", node)


def _field_of(value: Any, name: str, node: ast.Expr) -> Any:
    if value.__class__ is dict or isinstance(value, dict):
        return value.get(name, UNKNOWN)
    if value is UNKNOWN or value is None:
        return UNKNOWN  # an absent or null parent: the field is missing evidence, not an error
    raise EvalFailure(f"`{node.span.text}`: a {type_name(value)} has no field `{name}`", node)


def _order(op: str, a: Any, b: Any, node: ast.Expr) -> Any:
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float)) and a.__class__ is not bool and b.__class__ is not bool
    if not numbers and not (isinstance(a, str) and isinstance(b, str)):
        raise EvalFailure(f"`{op}` compares numbers or strings, got {type_name(a)} and {type_name(b)}", node)
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def grown(size: int, what: str, node: ast.Expr) -> None:
    """Refuse to build a list or text past its size limit (read from `values` at each call, so that
    tests and embedders can lower it)."""
    limit = values.MAX_LIST_ITEMS if what == "list" else values.MAX_TEXT_CHARS
    if size > limit:
        unit = "items" if what == "list" else "characters"
        raise ValueTooLarge(
            f"value size limit [{values.VALUE_LIMIT}]: `{node.span.text}` would build a {what} of "
            f"{size} {unit}; the limit is {limit}",
            node,
        )
