"""From an accepted `litmus: episode/1.1` document to the canonical episode the engine reads.

episode/1.1 (docs/format.md) accepts some facts in more than one spelling, because real harnesses
write them so (MCP, OpenAI, Anthropic). The engine should see one spelling. `normalise` maps the
wire spellings onto the canonical ones, and does nothing else:

- a tool's `inputSchema` (MCP) becomes `input_schema`; both present and equal: one is kept; both
  present and different: a `WireError` located at `inputSchema` (which one the agent saw is unknown);
- a message's `content: null` (OpenAI, beside `tool_calls`) becomes an absent `content`: the
  message has no text; it is not given an empty one. `tool_calls: null` (AgentDojo, OpenAI SDK
  dumps) becomes absent too;
- a dispatch record's `arguments` written as a JSON text (OpenAI) is parsed when it is exactly one
  JSON object (strict: no repeated key, no NaN/Infinity, at most `ARGUMENTS_MAX_DEPTH` levels). Any
  other text is kept as written and an entry is added to `unknowns` with the reason: the call's
  arguments are unknown to the rules, never guessed;
- a label listed in both `detector.invalid_labels` and `detector.positive_labels` is a `WireError`
  (the schema cannot say "disjoint"): one label cannot mean both "attacked" and "not scored".

What it does not do, on purpose (each would invent or drop a fact, or is the rules' business):
no defaults are filled in (`positive_labels`, `decision_source`, `scope`, `source` stay absent when
absent); booleans are not mapped to labels; content parts are not flattened to text nor reordered
(the surface walker reads every shape, `injected` parts included); messages and records are not
filtered by `step` (that is the walk's and the rules' job, which then say so in the trace); the
`arguments` of OpenAI `tool_calls` inside messages stay text (they are what the agent read); plain
signal arguments are not rewritten as `{equals: ...}` predicates; JMESPath `query` syntax is not
checked here (an unparseable query is an evaluation error of a rule, i.e. a REJECTED verdict, not
an input ERROR); `unknowns` paths are not resolved.

It is pure and idempotent (an entry already in `unknowns` for the same path is not added twice,
so the engine may normalise again what the loader normalised): the input is never modified; containers on a changed path are copied, everything else
is shared, and a document with nothing to normalise (every episode/1 document, most 1.1 ones) is
returned as the same object, so the hot path pays one walk over the places above and no copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from litmus_rules.episode_format import PREDICATES, VERSION_1, VERSION_1_1, as_predicate, json_pointer
from litmus_rules.io.jsontext import short

__all__ = [
    "ARGUMENTS_MAX_DEPTH", "PREDICATES", "VERSION_1", "VERSION_1_1", "WireError", "as_predicate",
    "normalise", "pointer", "schema_version", "upgrade",
]

# Depth of a parsed `arguments` text, counted from the arguments object itself. Records sit at most
# 5 levels down (/controls/null/dispatch/0/arguments): with this, a parsed document stays under the
# loader's MAX_DEPTH (200), which the engine's recursive readers rely on.
ARGUMENTS_MAX_DEPTH = 100

Path = tuple[Any, ...]


class WireError(ValueError):
    """A 1.1 document the schema accepts but that says two different things; `path` locates it."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(f"{message} (at {pointer(path)})")
        self.message, self.path = message, path


def pointer(path: Path) -> str:
    """JSON Pointer (RFC 6901) of a path of keys and indices."""
    return json_pointer(path)


def schema_version(data: Any) -> str:
    """The format version whose schema a parsed document is checked against: 1.1 when it says so;
    episode/1 for everything else, so that a wrong or missing tag gets episode/1's message."""
    tag = data.get("litmus") if isinstance(data, Mapping) else None
    return VERSION_1_1 if tag == VERSION_1_1 else VERSION_1


def upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    """An episode/1 document as the episode/1.1 document that means the same: the tag changes,
    and the one episode/1 shape whose meaning 1.1 changes (a literal object argument that looks
    like a predicate, e.g. `{contains: x}`) is wrapped as `{equals: ...}`. Nothing else changes."""
    if data.get("litmus") != VERSION_1:
        raise ValueError(f"not an episode/1 document (litmus: {short(data.get('litmus'))})")
    out = {**data, "litmus": VERSION_1_1}
    detector = data.get("detector")
    signals = detector.get("signals") if isinstance(detector, Mapping) else None
    if isinstance(signals, list):
        new = [_literal_arguments(s) for s in signals]
        if any(a is not b for a, b in zip(new, signals)):
            out["detector"] = {**detector, "signals": new}  # type: ignore[dict-item]
    return out


def _literal_arguments(signal: Any) -> Any:
    args = signal.get("arguments") if isinstance(signal, Mapping) else None
    if not isinstance(args, Mapping) or not any(as_predicate(v) for v in args.values()):
        return signal
    return {**signal, "arguments": {k: {"equals": v} if as_predicate(v) else v for k, v in args.items()}}


def normalise(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The canonical form of a schema-valid episode (see the module docstring). episode/1 and
    anything not tagged 1.1 are returned as they are. Raises WireError for a contradiction."""
    if data.get("litmus") != VERSION_1_1:
        return data
    found: list[dict[str, str]] = []
    out = dict(data)
    context = data.get("context")
    if isinstance(context, Mapping):
        ctx = dict(context)
        ctx["tools"] = _each(context.get("tools"), ("context", "tools"), _tool)
        ctx["messages"] = _each(context.get("messages"), ("context", "messages"), _message)
        out["context"] = _same_or(context, ctx)
    episode = data.get("episode")
    if isinstance(episode, Mapping):
        out["episode"] = _run(episode, ("episode",), found)
    controls = data.get("controls")
    if isinstance(controls, Mapping):
        runs = {name: _run(run, ("controls", name), found) if isinstance(run, Mapping) else run
                for name, run in controls.items()}
        out["controls"] = _same_or(controls, runs)
    _check_labels(data.get("detector"))
    listed = data.get("unknowns") or []
    known = {u.get("path") for u in listed if isinstance(u, Mapping)}
    found = [u for u in found if u["path"] not in known]  # idempotent: normalising twice adds nothing
    if found:
        out["unknowns"] = [*listed, *found]
    return _same_or(data, out)


def _same_or(old: Mapping[str, Any], new: dict[str, Any]) -> Mapping[str, Any]:
    """`old` itself when `new` changed nothing (absent keys were only probed, never added)."""
    new = {k: v for k, v in new.items() if k in old or v is not None}
    if new.keys() == old.keys() and all(new[k] is old[k] for k in old):
        return old
    return new


def _each(items: Any, path: Path, fix: Any, *extra: Any) -> Any:
    """A list with `fix` applied to each object in it; the same list when nothing changed."""
    if not isinstance(items, list):
        return items
    new = [fix(item, path + (i,), *extra) if isinstance(item, Mapping) else item for i, item in enumerate(items)]
    return items if all(a is b for a, b in zip(new, items)) else new


def _tool(tool: Mapping[str, Any], path: Path) -> Mapping[str, Any]:
    if "inputSchema" not in tool:
        return tool
    out = dict(tool)
    mcp = out.pop("inputSchema")
    if "input_schema" in tool and tool["input_schema"] != mcp:
        raise WireError(
            "`inputSchema` and `input_schema` are both given and differ: give one (`inputSchema` is "
            "MCP's name for `input_schema`), since which one the agent saw is unknown", path + ("inputSchema",))
    out["input_schema"] = tool.get("input_schema", mcp)
    return out


def _message(message: Mapping[str, Any], path: Path) -> Mapping[str, Any]:
    if message.get("content", 0) is None or message.get("tool_calls", 0) is None:
        return {k: v for k, v in message.items() if not (k in _NULL_MEANS_NONE and v is None)}
    return message


_NULL_MEANS_NONE = ("content", "tool_calls")


def _run(run: Mapping[str, Any], path: Path, found: list[dict[str, str]]) -> Mapping[str, Any]:
    """A control run or the episode's run: its transcript's messages and its dispatch records."""
    out = dict(run)
    out["transcript"] = _each(run.get("transcript"), path + ("transcript",), _message)
    out["dispatch"] = _each(run.get("dispatch"), path + ("dispatch",), _record, found)
    return _same_or(run, out)


def _record(record: Mapping[str, Any], path: Path, found: list[dict[str, str]]) -> Mapping[str, Any]:
    text = record.get("arguments")
    if not isinstance(text, str):
        return record
    value, why = _parse_object(text)
    if why is not None:
        found.append({"path": pointer(path + ("arguments",)),
                      "note": f"`arguments` is a text that is not one JSON object ({why}); kept as written, "
                              "so this call's arguments are unknown (write them as an object)"})
        return record
    return {**record, "arguments": value}


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"repeated key `{short(key)}`")
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"`{name}` is not JSON")


_STRICT = json.JSONDecoder(object_pairs_hook=_no_repeats, parse_constant=_no_constant)


def _parse_object(text: str) -> tuple[Any, str | None]:
    """(object, None) or (None, why not)."""
    try:
        value = _STRICT.decode(text)
    except json.JSONDecodeError as e:
        return None, f"invalid JSON: {e.msg.lower()} at column {e.colno}"
    except RecursionError:
        return None, f"nested deeper than {ARGUMENTS_MAX_DEPTH} levels"
    except ValueError as e:  # a repeated key, NaN, an integer past Python's digit limit
        return None, str(e)
    if not isinstance(value, dict):
        return None, f"JSON {_KINDS.get(type(value), 'value')}, not an object"
    if _deeper_than(value, ARGUMENTS_MAX_DEPTH):
        return None, f"nested deeper than {ARGUMENTS_MAX_DEPTH} levels"
    return value, None


_KINDS = {list: "list", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _check_labels(detector: Any) -> None:
    if not isinstance(detector, Mapping):
        return
    positive = detector.get("positive_labels")
    invalid = detector.get("invalid_labels")
    if not isinstance(positive, list) or not isinstance(invalid, list):
        return
    for i, label in enumerate(invalid):
        if label in positive:
            raise WireError(f"label `{short(label)}` is in both `invalid_labels` and `positive_labels`: "
                            "a label cannot mean both \"not scored\" and \"attacked\"", ("detector", "invalid_labels", i))
