"""The built-in mechanism of the rule language, and its general built-ins.

A built-in is declared once (name, parameters, result type, doc, cost) and read by the checker and
both evaluators through an `Environment` (environment.py). A built-in receives known values only:
when an argument is unknown the evaluator returns unknown without calling it (unless
`sees_unknown` is set). Implementations raise EvalFailure for values of the wrong shape; the
evaluator turns that into a fail-closed reject. The domain's built-ins (transcripts, leaks,
collisions) register into a table of their own built on this one (domain/builtins.py).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, MutableMapping, Sequence

from litmus_rules.lang import types as t
from litmus_rules.lang.records import record
from litmus_rules.lang.values import UNKNOWN, EvalFailure, type_name

_REQUIRED: Any = type("_Required", (), {"__repr__": lambda self: "<required>"})()


@record
class Param:
    name: str
    type: t.T
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@record
class Builtin:
    name: str
    params: tuple[Param, ...]
    returns: t.T
    impl: Callable[..., Any]
    doc: str
    sees_unknown: bool = False
    # Work units charged to the evaluation budget for one call, from its arguments.
    cost: Callable[[Sequence[Any]], int] | None = None


Registrar = Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]]


def registrar(table: MutableMapping[str, Builtin]) -> Registrar:
    """A decorator that declares a built-in into `table`."""

    def builtin(
        name: str,
        params: Sequence[Param],
        returns: t.T,
        doc: str,
        *,
        sees_unknown: bool = False,
        cost: Callable[[Sequence[Any]], int] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            table[name] = Builtin(name, tuple(params), returns, fn, doc, sees_unknown, cost)
            return fn

        return register

    return builtin


# The language's own built-ins: general, about values only.
REGISTRY: dict[str, Builtin] = {}
builtin = registrar(REGISTRY)


def text_cost(args: Sequence[Any]) -> int:
    """Built-ins that scan text pay one unit per 64 characters they read."""
    return 1 + sum(len(a) // 64 for a in args if isinstance(a, str))


def need(value: Any, kind: type | tuple[type, ...], what: str, fn: str) -> None:
    """Refuse an argument of the wrong shape: `fn` expects `what`."""
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise EvalFailure(f"`{fn}` expects {what}, got {type_name(value)}")


def signature(b: Builtin) -> str:
    def one(p: Param) -> str:
        return f"{p.name}: {p.type.describe()}" + ("" if p.required else f" = {p.default!r}")

    return f"{b.name}({', '.join(one(p) for p in b.params)}) -> {b.returns.describe()}"


def bind_arguments(
    b: Builtin, positional: Sequence[Any], keywords: Mapping[str, Any]
) -> list[Any] | str:
    """Arguments in declaration order, or a message saying what is wrong with the call."""
    if len(positional) > len(b.params):
        return f"`{b.name}` takes at most {len(b.params)} argument(s), got {len(positional)}"
    bound: dict[str, Any] = {p.name: a for p, a in zip(b.params, positional)}
    names = [p.name for p in b.params]
    for key, value in keywords.items():
        if key not in names:
            return f"`{b.name}` has no parameter `{key}` (parameters: {', '.join(names)})"
        if key in bound:
            return f"`{b.name}` got `{key}` twice"
        bound[key] = value
    out = []
    for p in b.params:
        if p.name in bound:
            out.append(bound[p.name])
        elif p.required:
            return f"`{b.name}` is missing its argument `{p.name}`"
        else:
            out.append(p.default)
    return out


# ---- general ---------------------------------------------------------------------------------------


@builtin("len", [Param("value", t.ANY)], t.NUM, "Length of a string, list or object.")
def _len(value: Any) -> int:
    need(value, (str, list, dict), "a string, list or object", "len")
    return len(value)


@builtin("lower", [Param("text", t.STR)], t.STR, "Lower-cased text (Unicode case folding is `normalize`).")
def _lower(text: Any) -> str:
    need(text, str, "a string", "lower")
    return str(text).lower()


@builtin("starts_with", [Param("text", t.STR), Param("prefix", t.STR)], t.BOOL, "Does the text start with the prefix?")
def _starts_with(text: Any, prefix: Any) -> bool:
    need(text, str, "a string", "starts_with")
    need(prefix, str, "a string", "starts_with")
    return bool(text.startswith(prefix))


@builtin("ends_with", [Param("text", t.STR), Param("suffix", t.STR)], t.BOOL, "Does the text end with the suffix?")
def _ends_with(text: Any, suffix: Any) -> bool:
    need(text, str, "a string", "ends_with")
    need(suffix, str, "a string", "ends_with")
    return bool(text.endswith(suffix))


@builtin(
    "default",
    [Param("value", t.ANY), Param("fallback", t.ANY)],
    t.ANY,
    "The value, or the fallback when the value is unknown (a missing fact). Use only where the "
    "episode format defines a default: it turns missing evidence into a chosen value.",
    sees_unknown=True,
)
def _default(value: Any, fallback: Any) -> Any:
    return fallback if value is UNKNOWN else value


@builtin(
    "known",
    [Param("value", t.ANY)],
    t.BOOL,
    "True when the value is known (the fact is present), false when it is missing. Never unknown.",
    sees_unknown=True,
)
def _known(value: Any) -> bool:
    return value is not UNKNOWN


@builtin("unique", [Param("values", t.list_of(t.ANY))], t.list_of(t.ANY), "The distinct values, in first-seen order.")
def _unique(values: Any) -> list[Any]:
    need(values, list, "a list", "unique")
    out: list[Any] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out
