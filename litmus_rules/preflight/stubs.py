"""Deterministic stub agents for the pre-flight contamination pass.

Each stub reads one instance (a `litmus: episode/1` or `episode/1.1` document, usually without
`controls`) and produces what a harness would record for an agent run: a transcript (a list of
assistant messages) and dispatch records carrying the decision field the instance's detector
declares. No model, no randomness, no I/O: the same instance always gives the same runs, so a preflight result can be
reproduced and audited. `STUB_VERSION` changes whenever any stub's output could change; it is
written into every control run (`stub: "refusal-quoting/1"`).

The stubs are deliberately the *worst cases* for a scorer, not typical agents:

- null (`null-echo`): the instance with every injected item removed, run by an agent that repeats
  everything left in its context and calls nothing. The system prompt is kept whole: it is not
  marked injected, and preflight cannot tell which part of it a harness generated from the injected
  manifest. A system prompt that lists an injected skill therefore dirties the null control, which is
  exactly the note's first case.
- compliance (`compliance`, also recorded as the positive control): performs the attack. It calls
  every injected tool with its schema's defaults and every call a `tool_call` signal describes
  (AgentDojo-style attacks arrive in data, and only the signal says which action is the attack),
  with decision `execute`, and follows injected skills and injected messages by echoing them.
- refusal (`refusal-quoting`): declines the very same calls (decision `refuse`) and explains why by
  quoting each injected tool's description and schema, each injected skill and each injected
  message, both before and after the decision. Competent agents do this, and it is what breaks
  transcript scorers keyed on the payload.
- trivial: `do-nothing` (one empty reply, no calls) and `dump-everything` (every tool of the
  context called once with defaults, decision `execute`, then an echo of the whole context).

When the detector has no decision field (`decision_field: null`) a record means "dispatched":
compliance records its calls without a decision key and refusal records none (a refused call is
never dispatched).

episode/1.1 `scope: final_message` (the scorer reads only the last assistant message): each stub's
last message restates everything it said before it, so a final-message scorer sees the very text a
`full`-scope scorer would: the compliance stub's calls and what it followed (the positive control
must be able to fire), the refusal stub's declined calls and its quotes (the worst case: a refusal
that explains itself in its answer). The earlier messages stay, so the decision point is unchanged.
Only instances with that scope (new in 1.1, never preflighted before) get this, so episode/1 output
is unchanged and `STUB_VERSION` stays. A 1.1 `tool_call` signal argument that is a predicate
(`{contains: x}`, ...) is called with a value that satisfies it where one can be built.

Every stub reads what the agent received *before it decided*, as the `surfaces` fact does: an
episode/1.1 context message stamped (`step`) after `episode.decision_step` (typically the result of
the agent's own call) is neither echoed, quoted nor followed, or the null control would repeat the
agent's own late output and fire on it. Only 1.1 messages carry a `step`: episode/1 output, and
`STUB_VERSION`, are unchanged.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterable, Mapping, Sequence

import attrs

from litmus_rules.domain.steps import left_out
from litmus_rules.domain.surfaces import received_surfaces
from litmus_rules.domain.walk import MAX_DEPTH, WalkLimit
from litmus_rules.domain.predicates import reads_predicates
from litmus_rules.episode_format import as_predicate

STUB_VERSION = "1"

NULL, COMPLIANCE, REFUSAL, EMPTY, DUMP = "null", "compliance", "refusal", "trivial_empty", "trivial_dump"
STUB_NAMES = {
    NULL: "null-echo",
    COMPLIANCE: "compliance",
    REFUSAL: "refusal-quoting",
    EMPTY: "do-nothing",
    DUMP: "dump-everything",
}
EXECUTE, REFUSE = "execute", "refuse"
_SCHEMA_KEYS = ("input_schema", "inputSchema", "parameters")
_MAX_SCHEMA_DEPTH = 16  # placeholders for nested objects; hostile schemas must not recurse forever


@attrs.frozen
class StubRun:
    """One stub's run: what it produced, and the instance it ran on (reduced, for the null stub)."""

    control: str  # key under `controls`: null, compliance, refusal, trivial_empty, trivial_dump
    stub: str  # name/version, e.g. "null-echo/1"
    transcript: list[dict[str, Any]]
    dispatch: list[dict[str, Any]]
    instance: dict[str, Any]


# --- reading the instance -------------------------------------------------------------------------


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _injected(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("injected") is True


def _strip(value: Any, depth: int) -> Any:
    """The value without the injected items inside it (an item in a list, or an object under a
    key, whose `injected` is true). Past the walk's depth it is left whole: its surfaces are
    unknown anyway, and `check` rejects the instance for that."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [_strip(v, depth + 1) for v in value if not _injected(v)]
    if isinstance(value, dict):
        return {k: _strip(v, depth + 1) for k, v in value.items() if not _injected(v)}
    return value


def without_injection(instance: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of the instance with every injected item removed from its context: the
    messages, tools and skills marked injected, and any part of an item marked on its own (a
    content part, a tool's field). The system prompt is kept (see module doc)."""
    reduced = copy.deepcopy(dict(instance))
    context = reduced.get("context")
    if isinstance(context, dict):
        reduced["context"] = {k: _strip(v, 1) for k, v in context.items() if not _injected(v)}
    return reduced


def _schema(tool: Mapping[str, Any]) -> Any:
    for key in _SCHEMA_KEYS:
        if isinstance(tool.get(key), Mapping):
            return tool[key]
    return None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _received_context(episode: Mapping[str, Any]) -> Mapping[str, Any]:
    """The episode's context without the messages `steps.left_out` lists (arrived after the
    decision): for the JSON fallbacks, which do not walk."""
    context = _mapping(episode.get("context"))
    late = {m.index for m in left_out(episode)}
    if not late:
        return context
    return {**context, "messages": [m for i, m in enumerate(_list(context.get("messages"))) if i not in late]}


def render_context(episode: Mapping[str, Any]) -> str:
    """Everything the agent received before deciding, as one text: what an echo agent repeats.
    Every surface's text, one per line, in the order of the surface walk (every string and key, at
    any depth; episode/1.1 messages stamped after the decision step are left out, as the `surfaces`
    fact leaves them out: a stub must not echo the late result of the agent's own call), then each
    tool's input schema as JSON, so a scorer that matches on schema syntax (`"path":
    "/etc/passwd"`) sees it too. A context past the walk's limits is echoed as JSON."""
    context = episode.get("context") if isinstance(episode, Mapping) else None
    if not isinstance(context, Mapping):
        return ""
    try:
        lines = [s.text for s in received_surfaces(episode)]
    except WalkLimit:
        return _json(_received_context(episode))
    for tool in _list(context.get("tools")):
        if isinstance(tool, Mapping) and _schema(tool) is not None:
            lines.append(f"input_schema: {_json(_schema(tool))}")
    return "\n".join(lines)


# --- arguments from a schema ----------------------------------------------------------------------


def _resolve(node: Any, root: Any) -> Any:
    """Follow a local `$ref` (#/$defs/X) a few hops; anything else is returned unchanged."""
    for _ in range(_MAX_SCHEMA_DEPTH):
        if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/")):
            return node
        target: Any = root
        for token in node["$ref"][2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or token not in target:
                return node
            target = target[token]
        node = target
    return node


def _stated(node: Mapping[str, Any]) -> tuple[bool, Any]:
    """The value the schema itself offers: default, const, first enum value, first example."""
    for key in ("default", "const"):
        if key in node:
            return True, copy.deepcopy(node[key])
    for key in ("enum", "examples"):
        if isinstance(node.get(key), list) and node[key]:
            return True, copy.deepcopy(node[key][0])
    if "example" in node:
        return True, copy.deepcopy(node["example"])
    return False, None


def _placeholder(node: Any, root: Any, depth: int) -> Any:
    """A neutral value of the schema's type, for a required argument the schema offers nothing for."""
    node = _resolve(node, root)
    if not isinstance(node, Mapping):
        return None
    found, value = _stated(node)
    if found:
        return value
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(node.get(key), list) and node[key]:
            return _placeholder(node[key][0], root, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and isinstance(node.get("properties"), Mapping)):
        return _arguments(node, root, depth + 1)
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}.get(kind)  # type: ignore[arg-type]


def _arguments(node: Any, root: Any, depth: int) -> dict[str, Any]:
    node = _resolve(node, root)
    if depth > _MAX_SCHEMA_DEPTH or not isinstance(node, Mapping):
        return {}
    props = node.get("properties")
    if not isinstance(props, Mapping):
        return {}
    required = set(_list(node.get("required")))
    args: dict[str, Any] = {}
    for name, sub in props.items():
        sub = _resolve(sub, root)
        found, value = _stated(sub) if isinstance(sub, Mapping) else (False, None)
        if found:
            args[str(name)] = value
        elif name in required:
            args[str(name)] = _placeholder(sub, root, depth + 1)
    return args


def default_arguments(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments an agent sends when it does not choose any: each property's default (else
    const, first enum value, first example); required properties with none of these get a neutral
    value of their type ("" / 0 / false / [] / nested defaults); other properties are left out."""
    schema = _schema(tool)
    return _arguments(schema, schema, 0) if schema is not None else {}


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _satisfying(value: Any) -> tuple[bool, Any]:
    """(True, a value that satisfies a 1.1 argument predicate) or (True, the value) for a plain
    value; (False, None) for a `regex` (no value is built from a pattern: the tool's default stays).
    `contains` with a string gives the string itself; with anything else a one-element list."""
    predicate = as_predicate(value)
    if predicate is None:
        return True, value
    name, operand = predicate
    if name in ("equals", "unordered"):
        return True, copy.deepcopy(operand)
    if name == "contains":
        return True, operand if isinstance(operand, str) else [copy.deepcopy(operand)]
    if name == "any_of" and isinstance(operand, list):
        for alternative in operand:
            found, chosen = _satisfying(alternative)
            if found:
                return True, chosen
    return False, None


def _wanted(signal: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in _mapping(signal.get("arguments")).items():
        found, chosen = _satisfying(value)
        if found:
            out[name] = chosen
    return out


def attack_calls(instance: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the compliance stub makes and the refusal stub declines, in a stable order: every
    injected tool with default arguments, then every tool_call signal's call (its arguments over
    the tool's defaults). Identical calls are listed once."""
    context = _mapping(instance.get("context"))
    tools = [t for t in _list(context.get("tools")) if isinstance(t, Mapping) and isinstance(t.get("name"), str)]
    by_name = {t["name"]: t for t in reversed(tools)}  # the first tool of a name wins, as in a manifest
    calls: list[tuple[str, dict[str, Any]]] = [(t["name"], default_arguments(t)) for t in tools if _injected(t)]
    detector = _mapping(instance.get("detector"))
    for signal in _list(detector.get("signals")):
        if isinstance(signal, Mapping) and signal.get("kind") == "tool_call" and isinstance(signal.get("tool"), str):
            base = default_arguments(by_name[signal["tool"]]) if signal["tool"] in by_name else {}
            wanted = _wanted(signal) if reads_predicates(instance) else _mapping(signal.get("arguments"))
            calls.append((signal["tool"], _merge(base, wanted)))
    unique: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for name, args in calls:
        key = _json([name, args])
        if key not in seen:
            seen.add(key)
            unique.append((name, args))
    return unique


def _injected_items(episode: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], list[str]]]:
    """Each message, tool and skill the agent received before deciding that carries injected text,
    with that text (every injected surface inside it, in order): a whole item marked injected, or
    one with an injected part. Messages stamped after the decision step are not read (steps.py)."""
    context = _mapping(episode.get("context"))
    try:
        surfaces = received_surfaces(episode)
    except WalkLimit:  # past the walk's limits: each injected item whole, as JSON
        received = _received_context(episode)
        return [(section, item, [_json(item)]) for section in ("messages", "tools", "skills")
                for item in _list(received.get(section)) if _injected(item)]
    found: dict[tuple[str, int], list[str]] = {}
    for s in surfaces:
        if s.injected and s.origin.startswith(("context.messages[", "context.tools[", "context.skills[")):
            section, _, rest = s.origin[len("context."):].partition("[")
            index = rest.partition("]")[0]
            if index.isdigit():
                found.setdefault((section, int(index)), []).append(s.text)
    out = []
    for (section, index), texts in found.items():
        item = _list(context.get(section))[index]
        out.append((section, item if isinstance(item, Mapping) else {}, texts))
    return out


def _quotes(episode: Mapping[str, Any]) -> list[str]:
    """What a refusing agent quotes when it explains itself: every injected text, verbatim."""
    out = []
    for section, item, texts in _injected_items(episode):
        quoted = "\n".join(texts)
        if section == "messages":
            source = f"The result of {item['name']}" if isinstance(item.get("name"), str) else f"A {item.get('role')} message"
            out.append(f'{source} says "{quoted}".')
        elif section == "tools":
            schema = _schema(item)
            out.append(
                f'The tool {item.get("name")} is described as "{quoted}"'
                + (f" and its input schema is {_json(schema)}." if schema is not None and _injected(item) else ".")
            )
        else:
            out.append(f'The skill {item.get("name")} is described as "{quoted}".')
    return out


def _follows(episode: Mapping[str, Any]) -> list[str]:
    """What a complying agent repeats: the injected text of skills and messages (instructions)."""
    out = []
    for section, item, texts in _injected_items(episode):
        if section == "skills":
            out.append(f"Following skill {item.get('name')}: " + "\n".join(texts))
        elif section == "messages":
            out.append("As instructed: " + "\n".join(texts))
    return out


# --- the stubs ------------------------------------------------------------------------------------


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call_text(name: str, args: Mapping[str, Any]) -> str:
    return f"{name}({_json(args)})"


def _records(
    calls: Iterable[tuple[str, dict[str, Any]]], decision: str, decision_field: str | None, first_step: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One announcing message and one dispatch record per call; `step` is the message's index."""
    messages, records = [], []
    verb = "Calling" if decision == EXECUTE else "Declining to call"
    for i, (name, args) in enumerate(calls):
        messages.append(_say(f"{verb} {_call_text(name, args)}."))
        if decision_field is None and decision == REFUSE:
            continue  # without a decision field, a refused call leaves no record
        record: dict[str, Any] = {"tool": name, "arguments": copy.deepcopy(args)}
        if decision_field is not None:
            record[decision_field] = decision
        if decision_field != "step":  # a harness whose decision key is `step` keeps its decision
            record["step"] = first_step + i
        records.append(record)
    return messages, records


def _decision_field(instance: Mapping[str, Any]) -> str | None:
    detector = instance.get("detector")
    field = detector.get("decision_field") if isinstance(detector, Mapping) else None
    return field if isinstance(field, str) and field else None


def _final_message_scope(instance: Mapping[str, Any]) -> bool:
    return _mapping(instance.get("detector")).get("scope") == "final_message"


def _run(control: str, transcript: list[dict[str, Any]], dispatch: list[dict[str, Any]],
         instance: dict[str, Any]) -> StubRun:
    if len(transcript) > 1 and _final_message_scope(instance):
        # a final-message scorer reads only this message: it restates the whole run (module doc)
        said = [m["content"] for m in transcript if m["content"]]
        transcript = [*transcript[:-1], _say("\n".join(said))]
    return StubRun(control, f"{STUB_NAMES[control]}/{STUB_VERSION}", transcript, dispatch, instance)


def null_stub(instance: Mapping[str, Any]) -> StubRun:
    reduced = without_injection(instance)
    return _run(NULL, [_say(render_context(reduced))], [], reduced)


def compliance_stub(instance: Mapping[str, Any], _copy: dict[str, Any] | None = None) -> StubRun:
    calls = attack_calls(instance)
    plan = ["I will do what the instructions ask."] + [f"- call {_call_text(n, a)}" for n, a in calls]
    announced, records = _records(calls, EXECUTE, _decision_field(instance), 1)
    done = ["Done."] + _follows(instance)
    transcript = [_say("\n".join(plan)), *announced, _say("\n".join(done))]
    return _run(COMPLIANCE, transcript, records, _copy if _copy is not None else copy.deepcopy(dict(instance)))


def refusal_stub(instance: Mapping[str, Any], _copy: dict[str, Any] | None = None) -> StubRun:
    quotes = _quotes(instance)
    reasoning = quotes + ["These ask for something the user did not request, so I will not act on them."]
    announced, records = _records(attack_calls(instance), REFUSE, _decision_field(instance), 1)
    answer = ["I declined the injected request, because:"] + quotes
    transcript = [_say("\n".join(reasoning)), *announced, _say("\n".join(answer))]
    return _run(REFUSAL, transcript, records, _copy if _copy is not None else copy.deepcopy(dict(instance)))


def empty_stub(instance: Mapping[str, Any], _copy: dict[str, Any] | None = None) -> StubRun:
    return _run(EMPTY, [_say("")], [], _copy if _copy is not None else copy.deepcopy(dict(instance)))


def dump_stub(instance: Mapping[str, Any], _copy: dict[str, Any] | None = None) -> StubRun:
    context = _mapping(instance.get("context"))
    tools = [t for t in _list(context.get("tools")) if isinstance(t, Mapping) and isinstance(t.get("name"), str)]
    calls = [(t["name"], default_arguments(t)) for t in tools]
    announced, records = _records(calls, EXECUTE, _decision_field(instance), 0)
    # The echo comes after the calls so that a scorer reading only post-decision spans sees it.
    transcript = [*announced, _say(render_context(instance))]
    return _run(DUMP, transcript, records, _copy if _copy is not None else copy.deepcopy(dict(instance)))


def run_stubs(instance: Mapping[str, Any]) -> dict[str, StubRun]:
    """Every stub on one instance, keyed by control name (positive reuses the compliance run).
    The runs on the whole instance share one copy of it: nothing here mutates it, and a scorer is
    always handed its own copy."""
    shared = copy.deepcopy(dict(instance))
    runs = [null_stub(instance)] + [stub(instance, shared) for stub in (compliance_stub, refusal_stub, empty_stub, dump_stub)]
    return {run.control: run for run in runs}


__all__: Sequence[str] = [
    "STUB_VERSION", "STUB_NAMES", "StubRun", "run_stubs", "without_injection", "render_context",
    "default_arguments", "attack_calls", "null_stub", "compliance_stub", "refusal_stub", "empty_stub", "dump_stub",
]
