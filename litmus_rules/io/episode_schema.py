"""The episode schema: its validator, built once, and each schema error as one readable message
with the path it points at (for the JSON pointer and the line). `load` decides when to validate."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from litmus_rules._resources import episode_schema_path
from litmus_rules.episode_format import json_pointer
from litmus_rules.io import wire
from litmus_rules.io.jsontext import short as _short
from litmus_rules.io.suggest import suggest

__all__ = ["DocPath", "kind_of", "pointer", "schema_problem"]

DocPath = tuple[Any, ...]  # keys and indices into a document


def schema_problem(data: Any) -> tuple[str, DocPath] | None:
    """The most telling schema error of `data` as (message, path), or None when it is valid."""
    found = best_match(_validator(wire.schema_version(data)).iter_errors(data), key=_rank)
    return None if found is None else _describe(found)


@functools.cache
def _validator(version: str = wire.VERSION_1) -> jsonschema.Draft202012Validator:
    """One per format version, built once; no format checker (`format` stays an annotation). Local
    `$ref`s are inlined first: resolving them again for every document cost a third of the
    validation time."""
    with open(episode_schema_path(version), encoding="utf-8") as fh:
        schema = json.load(fh)
    defs = schema.get("$defs", {})

    def inline(node: Any, chain: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(v, chain) for v in node]
        if not isinstance(node, dict):
            return node
        name = str(node.get("$ref", "")).removeprefix("#/$defs/")
        if name in defs and name not in chain:  # a recursive definition would stay a $ref
            rest = {k: inline(v, chain) for k, v in node.items() if k != "$ref"}
            return {**inline(defs[name], chain + (name,)), **rest}
        return {k: v if k == "$defs" else inline(v, chain) for k, v in node.items()}

    return jsonschema.Draft202012Validator(inline(schema, ()))


def _rank(err: ValidationError) -> tuple[int, bool, bool]:
    # As jsonschema's relevance, the shallowest error says the most; paths are not compared (mixed
    # key types would raise), and at equal depth an unknown key (a typo, with a suggestion) beats
    # the "missing required key" it usually causes.
    return (-len(err.path), err.validator == "additionalProperties", err.validator != "required")


def _describe(err: ValidationError) -> tuple[str, DocPath]:
    """One readable message for a schema error, and the path it points at."""
    path, inst, expected = tuple(err.absolute_path), err.instance, err.validator_value
    kind = ""
    if "then" in err.absolute_schema_path and isinstance(inst, dict) and "kind" in inst:  # a signal's per-kind rules
        kind = f" for a `{_short(inst.get('kind'))}` signal"
    if err.validator == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        key = next(k for k in inst if k not in allowed)
        where = f"in {pointer(path)}" if path else "at top level"
        message = f"unknown key `{_short(key)}` {where}{kind} (expected one of {', '.join(allowed)})"
        close = suggest(str(key), allowed)
        return message + (f"; did you mean `{close}`?" if close else ""), path + (key,)
    if err.validator == "required":
        missing = next(k for k in expected if k not in inst)
        return f"{_dotted(path)}missing required key `{missing}`{kind}", path
    subject = "the episode" if not path else _dotted(path[:-1]) + (
        f"`{path[-1]}`" if isinstance(path[-1], str) else f"item {path[-1]}")
    if err.validator == "enum":
        return f"{subject} must be one of {', '.join(map(str, expected))} (got {_got(inst)})", path
    if err.validator == "const":
        return f"{subject} must be `{expected}` (got {_got(inst)})", path
    if err.validator == "type":
        words = [_TYPE_WORDS[t] for t in ([expected] if isinstance(expected, str) else expected)]
        return f"{subject} must be {' or '.join(words)} (got {kind_of(inst)})", path
    if err.validator in ("minLength", "minItems") and expected == 1:
        return f"{subject} must not be empty", path
    return f"{subject}: {err.message}", path


_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}
_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
          float: "a number", type(None): "null"}


def _dotted(path: DocPath) -> str:
    """`detector.signals[1]: ` -- the container of a member, as a prefix for messages."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + (
            p if str(p).isidentifier() else json.dumps(str(p)))
    return f"{out}: " if out else ""


def pointer(path: DocPath) -> str:
    return json_pointer(path)


def kind_of(value: Any) -> str:
    return _KINDS.get(type(value), f"a value of type {type(value).__name__}")


def _got(value: Any) -> str:
    return f"`{_short(value)}`" if value is None or isinstance(value, (str, int, float)) else kind_of(value)
