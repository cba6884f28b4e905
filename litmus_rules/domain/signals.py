"""Detector signals: their fields, and when a tool_call signal's argument is filled in by the harness.

- `Signal.from_fact(d)`: one entry of `detector.signals`, tolerant of loosely typed values.
- `tool_call_collisions(signal, tools)`: a tool_call signal's argument value is one the harness
  fills in itself: a default, const or one-value enum (DESIGN, "Reading the note" 3).
"""

from __future__ import annotations

import collections
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from litmus_rules.cache import BoundedCache
from litmus_rules.errors import EvaluationError
from litmus_rules.domain.decoding import percent_decode
from litmus_rules.domain.transforms import full_normalise, path_casefold_key, path_key
from litmus_rules.domain.regexes import name_signal
from litmus_rules.domain.predicates import predicate_of, satisfies
from litmus_rules.domain.surfaces import render_value, tool_surfaces
from litmus_rules.lang.records import record

# --- signals -----------------------------------------------------------------------------------


@record
class Signal:
    """One entry of `detector.signals`."""

    id: str
    kind: str  # substring | regex | tool_call
    value: str | None = None
    flags: tuple[str, ...] = ()
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def from_fact(cls, d: Mapping[str, Any] | Signal) -> Signal:
        if isinstance(d, Signal):
            return d
        if not isinstance(d, Mapping):
            raise EvaluationError(f"a signal must be a mapping, got {type(d).__name__}")
        value = d.get("value")
        flags = d.get("flags") or ()
        arguments = d.get("arguments")
        tool = d.get("tool")
        return cls(
            id=str(d.get("id", "")),
            kind=str(d.get("kind", "")),
            value=value if value is None or isinstance(value, str) else render_value(value),
            flags=tuple(str(f) for f in flags) if isinstance(flags, (list, tuple)) else (str(flags),),
            tool=tool if tool is None or isinstance(tool, str) else str(tool),
            arguments=arguments if isinstance(arguments, Mapping) else None,
        )

    @property
    def ignorecase(self) -> bool:
        return _is_ignorecase(self.flags)


@functools.lru_cache(maxsize=256)
def _is_ignorecase(flags: tuple[str, ...]) -> bool:
    return any(f.lower() in ("ignorecase", "i") for f in flags)


def _text_signal(signal: Mapping[str, Any] | Signal) -> tuple[str, str, tuple[str, ...]]:
    """(kind, value, flags) of a signal; cheaper than Signal.from_fact on the hot path. Reading a
    regex signal names its account in the current regex budget (regexes.name_signal)."""
    sig_id: Any
    kind: Any
    value: Any
    if isinstance(signal, Signal):
        sig_id, kind, value, flags = signal.id, signal.kind, signal.value, signal.flags
    elif type(signal) is dict or isinstance(signal, Mapping):
        sig_id, kind, value = signal.get("id"), signal.get("kind"), signal.get("value")
        raw_flags = signal.get("flags") or ()
        if isinstance(raw_flags, (list, tuple)):
            flags = tuple(raw_flags if all(type(f) is str for f in raw_flags) else map(str, raw_flags))
        else:
            flags = (str(raw_flags),)
    else:
        raise EvaluationError(f"a signal must be a mapping, got {type(signal).__name__}")
    if kind == "tool_call":
        return kind, "", flags
    if kind not in ("substring", "regex"):
        raise EvaluationError(f"signal {sig_id!r} has unknown kind {kind!r}")
    if value is None:
        raise EvaluationError(f"{kind} signal {sig_id!r} has no value")
    text = value if isinstance(value, str) else render_value(value)
    if kind == "regex":
        name_signal(sig_id, text, flags)  # a spent budget's message names the signal
    return kind, text, flags


# --- tool_call signals ---------------------------------------------------------------------------

_VALUE_KEYS = (
    ("raw", lambda s: s),
    ("normalised", full_normalise),
    ("path canonicalised", path_key),
    ("normalised > path canonicalised", path_casefold_key),
    ("percent-decoded > path canonicalised", lambda s: path_casefold_key(percent_decode(s))),
)
_FILLABLE = ("schema_default", "schema_const", "schema_enum")


def _flatten(arguments: Mapping[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """{"opts": {"path": x}} -> [("opts", {...}), ("opts.path", x)]. A predicate (1.1, first level
    only) is a leaf: it is not an object of arguments."""
    out: list[tuple[str, Any]] = []
    for name, value in arguments.items():
        path = f"{prefix}{name}"
        out.append((path, value))
        if isinstance(value, Mapping) and depth < 16 and not (depth == 0 and predicate_of(value)):
            out.extend(_flatten(value, f"{path}.", depth + 1))
    return out


def _is_leaf(name: str, value: Any) -> bool:
    return not isinstance(value, Mapping) or ("." not in name and predicate_of(value) is not None)


def _same_value(expected: Any, schema_text: str) -> str | None:
    """The transform under which a signal's argument value equals a schema value, else None."""
    if not isinstance(expected, str):
        try:
            parsed = json.loads(schema_text)
        except ValueError:
            parsed = schema_text
        if parsed == expected and (type(parsed) is type(expected) or _numbers(parsed, expected)):
            return "raw"  # two numbers compare as numbers: 1 is 1.0 (JSON has one number type)
        expected = render_value(expected)
    if len(expected) + len(schema_text) <= SAME_TEXT_MEMO_CHARS:
        return _same_text_remembered(expected, schema_text)
    return _same_text(expected, schema_text)


def _same_text(expected: str, schema_text: str) -> str | None:
    for name, fn in _VALUE_KEYS:
        if fn(expected) == fn(schema_text):
            return name
    return None


# `_same_text` of short texts, remembered: an argument value and a schema's default recur across
# a benchmark's episodes (one tool manifest, one scorer), and each comparison derives five keys of
# each side (paths canonicalised by regex). A memo of a pure function of two strings, bounded by
# entries and by the size of the texts it keeps.
SAME_TEXT_MEMO_CHARS = 512
_same_text_remembered = functools.lru_cache(maxsize=4096)(_same_text)


def _numbers(a: Any, b: Any) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


def _schema_value(text: str) -> Any:
    """A schema value as a predicate reads it: its JSON value when its text is one that is not a
    string (a number, list, object, boolean), else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return text if isinstance(value, str) else value


def _filled(expected: Any, schema_text: str) -> str | None:
    """The transform under which a harness-filled value satisfies a signal's argument, else None:
    for a predicate, "predicate" when the value satisfies it."""
    if predicate_of(expected) is not None:
        return "satisfies the predicate" if satisfies(expected, _schema_value(schema_text)) else None
    return _same_value(expected, schema_text)


def _dig(schema_text: str, keys: Sequence[str]) -> tuple[bool, Any]:
    """The value at `keys` inside a JSON object default/const (found?, value)."""
    try:
        value: Any = json.loads(schema_text)
    except ValueError:
        return False, None
    for k in keys:
        if not isinstance(value, Mapping) or k not in value:
            return False, None
        value = value[k]
    return True, value


# The input schema's own `default`/`const` (no argument of its own) fills every argument it names.
_INPUT_SCHEMAS = ("input_schema", "inputSchema", "parameters", "function.parameters")


# Tools whose walk stopped at a limit, with the WalkLimit (a RuleSet's cache, keyed by the tool's
# id, builtins.STOPPED_TOOLS entries): a rule asks for a tool's fillable values once per signal
# and again for its reject's trace, and a hostile schema (`$ref`s that multiply) takes as long to
# reach the limit every time.
StoppedWalks = BoundedCache[tuple[Any, Exception]]


def _walked(tool: Mapping[str, Any], index: int, stopped: StoppedWalks | None) -> Sequence[Any]:
    """`tool_surfaces(tool, index)`; a WalkLimit it raised is remembered in `stopped` and raised
    again, without a second walk, for the same tool object at the same index."""
    if stopped is None:
        return tool_surfaces(tool, index)
    held = stopped.get((id(tool), index))
    if held is not None and held[0] is tool:
        raise held[1]
    from litmus_rules.domain.walk import WalkLimit

    try:
        return tool_surfaces(tool, index)
    except WalkLimit as exc:
        stopped.put((id(tool), index), (tool, exc))
        raise


def _root_fill(origin: str, index: int) -> bool:
    prefix = f"context.tools[{index}]."
    return any(origin in (f"{prefix}{schema}.default", f"{prefix}{schema}.const") for schema in _INPUT_SCHEMAS)


def tool_call_collisions(signal: Mapping[str, Any] | Signal, tools: Sequence[Mapping[str, Any]],
                         stopped: StoppedWalks | None = None) -> list[dict[str, Any]]:
    """Argument values of a tool_call signal that the harness fills in by itself.

    A value collides when it equals (raw, normalised, or as a canonical path) the `default`,
    `const` or one-value `enum` of the same argument in the named tool's input schema (nested
    arguments as dotted names; an object default is looked into). Values that only appear in
    descriptions, examples or injected text do not collide. Returns one dict per collision:
    {argument, value (the schema's, as text), origin, kind, transform}. `stopped`: see `_walked`.
    """
    sig = Signal.from_fact(signal)
    if sig.kind != "tool_call" or not sig.arguments or not isinstance(tools, Sequence):
        return []
    wanted = _flatten(sig.arguments)
    out: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        if sig.tool is not None and tool.get("name") != sig.tool:
            continue
        surfaces = [s for s in _walked(tool, index, stopped)
                    if s.kind in _FILLABLE and (s.argument or _root_fill(s.origin, index))]
        enum_sizes = collections.Counter(
            (s.origin.rpartition("[")[0], s.argument) for s in surfaces if s.kind == "schema_enum"
        )
        for s in surfaces:
            if s.kind == "schema_enum" and enum_sizes[(s.origin.rpartition("[")[0], s.argument)] != 1:
                continue
            for name, expected in wanted:
                if s.argument is None:  # the input schema's own default/const: an object of arguments
                    found, inner = _dig(s.text, name.split("."))
                    transform = _filled(expected, render_value(inner)) if found else None
                elif name == s.argument:
                    transform = _filled(expected, s.text)
                elif name.startswith(f"{s.argument}.") and s.kind != "schema_enum":
                    found, inner = _dig(s.text, name[len(s.argument) + 1 :].split("."))
                    transform = _filled(expected, render_value(inner)) if found else None
                else:
                    continue
                if transform is not None:
                    out.append({
                        "argument": name,
                        "value": s.text,
                        "origin": s.origin,
                        "kind": s.kind,
                        "transform": transform,
                    })
    return out


def fillable_call(signal: Mapping[str, Any] | Signal, tools: Sequence[Mapping[str, Any]],
                  stopped: StoppedWalks | None = None) -> dict[str, Any] | None:
    """A call the harness can make satisfy the signal by itself, or None.

    That is the case when *every* argument value the signal names is filled in by the tool's schema
    (a default, const or one-value enum of that argument, or of an enclosing object argument): an
    agent that calls the tool without choosing anything is then scored as compliant. One fillable
    argument among others the agent must still choose is not a collision: the agent has to act on
    the others. The witness is the first collision, with `expected` (the signal's value) and
    `arguments` (every argument that collided).
    """
    sig = Signal.from_fact(signal)
    found = tool_call_collisions(sig, tools, stopped)
    if not found or not sig.arguments:
        return None
    hit = {f["argument"] for f in found}
    leaves = [(name, value) for name, value in _flatten(sig.arguments) if _is_leaf(name, value)]

    def covered(name: str) -> bool:
        parts = name.split(".")
        return any(".".join(parts[:i]) in hit for i in range(1, len(parts) + 1))

    if not leaves or not all(covered(name) for name, _ in leaves):
        return None
    expected = dict(_flatten(sig.arguments))
    first = found[0]
    return {**first, "expected": render_value(expected.get(first["argument"])), "arguments": sorted(hit)}


def same_argument_value(expected: Any, actual: Any) -> bool:
    """Do a signal's argument value and a call's argument value name the same thing (raw, normalised,
    or as canonical, percent-decoded paths)? The reading `fillable_call` uses for schema values."""
    return _same_value(expected, render_value(actual)) is not None


# --- state signals (episode/1.1) -----------------------------------------------------------------


def _fillable_surfaces(tools: Sequence[Any], stopped: StoppedWalks | None = None) -> list[Any]:
    """Every value a tool's schema fills in by itself: the default, const or one-value enum of an
    argument (or the input schema's own default/const), over every tool of the manifest."""
    out = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        surfaces = [s for s in _walked(tool, index, stopped)
                    if s.kind in _FILLABLE and (s.argument or _root_fill(s.origin, index))]
        enum_sizes = collections.Counter(
            (s.origin.rpartition("[")[0], s.argument) for s in surfaces if s.kind == "schema_enum"
        )
        out += [s for s in surfaces
                if not (s.kind == "schema_enum" and enum_sizes[(s.origin.rpartition("[")[0], s.argument)] != 1)]
    return out


def fillable_values(values: Sequence[Any], tools: Sequence[Any],
                    stopped: StoppedWalks | None = None) -> dict[str, Any] | None:
    """A state signal's `values` that the harness fills in by itself, or None.

    DESIGN Reading 3 applied to the state channel: a constant the check compares against collides
    when it is a value the harness fills in (the default, const or one-value enum of an argument of
    any tool, or inside an object default), because an agent that calls the tool without choosing
    that value changes the state as the check expects. As for a tool_call signal, the signal
    collides only when *every* value is fillable so; a value only the injected payload names is
    not a collision. The witness is the first value's: {value (the signal's), origin, kind,
    argument, filled (the schema's, as text), transform, values (every value that collided)}.
    """
    wanted = [v for v in values if v is not None]
    if not wanted:
        return None
    surfaces = _fillable_surfaces(tools, stopped)
    hits: list[dict[str, Any]] = []
    for value in wanted:
        hit = None
        for s in surfaces:
            transform = _same_value(value, s.text)
            if transform is None and s.text[:1] in "{[":  # an object or list default: its leaves
                transform = _inner_same(value, s.text)
            if transform is not None:
                hit = {"value": render_value(value), "origin": s.origin, "kind": s.kind,
                       "argument": s.argument, "filled": s.text, "transform": transform}
                break
        if hit is None:
            return None
        hits.append(hit)
    return {**hits[0], "values": [h["value"] for h in hits]}


def _inner_same(value: Any, schema_text: str) -> str | None:
    try:
        stack = [json.loads(schema_text)]
    except ValueError:
        return None
    seen = 0
    while stack and seen < 10_000:
        v = stack.pop()
        seen += 1
        if isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        else:
            transform = _same_value(value, render_value(v))
            if transform is not None:
                return f"inside the default > {transform}"
    return None
