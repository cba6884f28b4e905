"""The episode schema: its validators, built once per process, and each schema error as one readable
message with the path it points at (for the JSON pointer and the line). `load` decides when to
validate.

Two validators, one meaning. A compiled validator (fastjsonschema: the schema turned into Python code
once) decides whether a document is valid: it costs a fraction of jsonschema's walk. jsonschema only
explains a rejection: the best error, its path and message are exactly what they were before the
compiled validator existed. When the two disagree on a document the compiled one rejects, the
document is refused with an internal-disagreement message: never scored. The other direction (the
compiled validator accepts what jsonschema would reject) cannot be seen without running both, so it
is kept out by construction: the compiled validator is only built from schemas whose every keyword
is one both implement alike (`_vetted`; anything else and jsonschema decides alone), it only sees
documents made of JSON's own types (`json_typed`; fastjsonschema takes a tuple for an array,
jsonschema does not), and tests/test_compiled_validation*.py checks both on a corpus of valid and
mutated invalid episodes. Both libraries are imported on first use: most commands never validate.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any, Callable

from litmus_rules._resources import episode_schema_path
from litmus_rules.episode_format import json_pointer
from litmus_rules.io import wire
from litmus_rules.io.jsontext import short as _short
from litmus_rules.io.suggest import suggest

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

__all__ = ["DocPath", "kind_of", "pointer", "schema_problem"]

DocPath = tuple[Any, ...]  # keys and indices into a document

DISAGREEMENT = ("internal error: the compiled schema validator rejects this episode ({detail}) but jsonschema "
                "accepts it; it is refused, not scored (please report this)")


def schema_problem(data: Any, *, json_typed: bool = False) -> tuple[str, DocPath] | None:
    """The most telling schema error of `data` as (message, path), or None when it is valid.

    `json_typed`: the caller vouches that `data` holds JSON's types only (dict with str keys, list,
    str, int, float, bool, None; as the decoders make them), so the compiled validator may decide.
    Anything else is decided by jsonschema alone, as before."""
    version = wire.schema_version(data)
    fast = _compiled(version) if json_typed else None
    if fast is not None:
        try:
            fast(data)
            return None
        except Exception as exc:  # noqa: BLE001 -- a rejection, or a failure of the generated code: both explain below
            rejected = exc
    from jsonschema.exceptions import best_match

    found = best_match(_validator(version).iter_errors(data), key=_rank)
    if found is not None:
        return _describe(found)
    if fast is not None:  # the compiled validator rejected what jsonschema accepts: fail closed
        return DISAGREEMENT.format(detail=_short(str(rejected), 200)), ()
    return None


def _load(version: str) -> dict[str, Any]:
    # Only ever one of the schema files shipped in the package (`EPISODE_SCHEMAS`): the version is
    # `wire.schema_version`'s answer, one of two constants, never a path or schema from the user.
    with open(episode_schema_path(version), encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


@functools.cache
def _validator(version: str = wire.VERSION_1) -> jsonschema.Draft202012Validator:
    """One per format version, built once; no format checker (`format` stays an annotation). Local
    `$ref`s are inlined first: resolving them again for every document cost a third of the
    validation time."""
    import jsonschema

    schema = _load(version)
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


@functools.cache
def _compiled(version: str) -> Callable[[Any], Any] | None:
    """The compiled validator of one format version (raises on an invalid document), or None when
    its schema uses anything `_vetted` does not know (then jsonschema decides alone).

    Security: fastjsonschema generates Python source from the schema and exec's it. That is
    acceptable here only because the schema is one of our own shipped files (`_load`): no command,
    option or API lets a user supply a schema. Never pass it anything else."""
    prepared = _vetted(_load(version))
    if prepared is None:
        return None
    pregenerated = _pregenerated(version, prepared)
    if pregenerated is not None:
        return pregenerated
    import fastjsonschema

    # No formats (jsonschema runs without a format checker), no defaults written into documents,
    # no remote `$ref` handlers (`_vetted` admits local ones only); short exceptions: the generated
    # code is a third of the size, and jsonschema writes the messages anyway.
    return fastjsonschema.compile(prepared, handlers={}, formats={}, use_default=False, use_formats=False,
                                  detailed_exceptions=False)


def _pregenerated(version: str, prepared: dict[str, Any]) -> Callable[[Any], Any] | None:
    """The committed module of `io/validators/` for this version (the same code `_compiled` would
    generate, `io/validator_codegen.py`), or None when it is absent or was made from another schema."""
    import importlib

    from litmus_rules.io.validator_codegen import MODULES, schema_digest

    name = MODULES.get(version)
    if name is None:
        return None
    module = importlib.import_module(f"litmus_rules.io.validators.{name}")
    if getattr(module, "SCHEMA_SHA256", None) != schema_digest(prepared):
        return None
    validate: Callable[[Any], Any] = module.VALIDATE
    return validate


# Keywords both validators implement alike on JSON values, by where their value sits.
_SUBSCHEMA = frozenset({"items", "additionalProperties", "propertyNames", "if", "then"})
_SCHEMA_MAPS = frozenset({"properties", "$defs"})
_SCHEMA_LISTS = frozenset({"allOf"})
_COUNTS = frozenset({"minItems", "minLength", "minProperties", "maxProperties"})
_ANNOTATIONS = frozenset({"description", "title", "$comment", "examples", "default"})
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_TOP_ONLY = frozenset({"$schema", "$id"})
_DOLLAR = re.compile(r"(?<!\\)\$")


def _vetted(schema: Any) -> dict[str, Any] | None:
    """The schema as the compiled validator gets it, or None when a keyword or value is outside what
    both validators are known to treat alike. Annotations are dropped (they validate nothing and
    made the generated code three times larger); `const` becomes a one-value `enum` (the same
    meaning; fastjsonschema's short exceptions cannot render `const`); a pattern's final `$`
    becomes what Python's `$` means, because fastjsonschema would otherwise read it as `\\Z`."""
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}

    def node(n: Any, top: bool = False) -> Any:
        if isinstance(n, bool):
            return n
        if not isinstance(n, dict):
            raise _Unvetted
        if "$ref" in n and (set(n) - _ANNOTATIONS - {"$ref"} or not _local(n["$ref"])):
            raise _Unvetted  # 2020-12 applies a $ref's siblings; fastjsonschema's drafts ignore them
        out: dict[str, Any] = {}
        for key, value in n.items():
            if key in _ANNOTATIONS:
                continue
            if key in _TOP_ONLY and top or key == "$ref":
                out[key] = value
            elif key in _SUBSCHEMA:
                out[key] = node(value)
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: node(v) for k, v in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list) and value:
                out[key] = [node(v) for v in value]
            elif key == "type" and _strings(value if isinstance(value, list) else [value]) and (
                    {value} if isinstance(value, str) else set(value)) <= _TYPES and value:
                out[key] = value
            elif key in ("enum", "const") and _strings(value if key == "enum" else [value]):
                out["enum"] = value if key == "enum" else [value]
            elif key == "required" and _strings(value):
                out[key] = value
            elif key in _COUNTS and type(value) is int and value >= 0:
                out[key] = value
            elif key == "pattern" and isinstance(value, str) and (fixed := _pattern(value)) is not None:
                out[key] = fixed
            else:
                raise _Unvetted
        if "enum" in n and "const" in n:
            raise _Unvetted
        return out

    def _local(ref: Any) -> bool:
        return isinstance(ref, str) and ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs

    try:
        return node(schema, top=True)  # type: ignore[no-any-return]
    except _Unvetted:
        return None


class _Unvetted(Exception):
    pass


def _strings(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


def _pattern(pattern: str) -> str | None:
    """The pattern with one meaning under both: jsonschema runs `re.search(pattern)`, fastjsonschema
    first rewrites every unescaped `$` as `\\Z`. A final `$` is spelled out as Python reads it (end,
    or before a final newline); any other `$` is not vetted."""
    dollars = [m.start() for m in _DOLLAR.finditer(pattern)]
    if not dollars:
        return pattern
    if dollars == [len(pattern) - 1]:  # (a `$` after a backslash is left alone by both)
        return pattern[:-1] + r"(?=\n?\Z)"
    return None


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
