"""Surfaces: every piece of text the agent receives, with where it came from.

`extract_surfaces(context)` yields every string value and every object key under an episode's
`context`, at any depth and under any key, known or not (DESIGN, "Reading the note" 1). The walk
itself is in `walk.py`, and every consumer reads text through it: the `surfaces` fact, the
`transcript_text` of records, the stub agents. `received_surfaces(episode)` is the same walk over
what the agent received *before it decided*: episode/1.1 context messages stamped with a `step`
after `episode.decision_step` are left out, only on certain grounds (steps.py; `steps.left_out`
lists them, for the trace).

Every content part of a message is read, whatever its provider shape (OpenAI `text`, `image_url`,
`input_text`; Anthropic `text`, `image`, `tool_use`, `tool_result` with nested parts, `document`
with its `source.data`; AgentDojo `{type: text, content}`; Gemini `{text}`; a bare string), with
origins such as `context.messages[2].content[1].text`; a part's own `injected: true` marks that
part, and only it. A message's `tool_calls` (the agent's own earlier calls) are read too, an
`arguments` JSON text both as written and decoded. MCP tool fields (`title`, `annotations`,
`outputSchema`/`output_schema`, `execution`, `icons`, `_meta`) are read with the tool's `injected`
flag. Two harness fields are not text: a boolean `injected` and an integer `step` of a message.

Each surface has an *origin* (a dotted path from the episode root:
`context.tools[2].input_schema.properties.path.default`; a key that is not identifier-like is written
JSON-quoted in brackets: `properties["file name"]`), the `injected` flag of the nearest enclosing
item that carries one, the tool or skill it belongs to, the argument (for a tool's input schema) and
a *kind*:

- `system_prompt`, `message` (message text, any content-part shape), `tool_result` (a `tool`
  message or a tool_result / function_call_output part), `message_name`, `tool_call` (a message's
  `tool_calls`, with the called tool's name);
- `tool_name`, `tool_title`, `tool_description`, `tool_annotation`, and MCP's `tool_execution`,
  `tool_icon`, `tool_meta`;
- in a tool's JSON Schema: `schema_description`, `schema_title`, `schema_default`, `schema_const`,
  `schema_enum` (one per value), `schema_example`, `schema_pattern` (`pattern` and the keys of
  `patternProperties`), `schema_comment`, `schema_ref` (a `$ref` that does not resolve
  locally: one that does is read where it points), `schema_type` (a type that is not one of
  JSON Schema's own), `schema_property_name`;
- `skill_name`, `skill_description`, `skill_body`, `skill_path`;
- `key` (an object key nobody planned for, e.g. a vendor `x-` key) and `other` (text under such
  a key, or anywhere outside the places above).

A schema's `default`, `const`, `enum` values and `examples` are each one surface holding the whole
value as compact JSON (`{"a":[1,2]}`): `fillable_call` compares them with a signal's arguments.

Input is untrusted: wrong types are read as data, never trusted, and the walk is bounded (walk.py:
nesting depth, objects visited, surfaces, characters); past a bound it raises `WalkLimit` (an
`EvaluationError` naming the limit and the origin), which the `surfaces` fact turns into unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litmus_rules.domain.walk import (  # noqa: F401 - re-exported: part of this module's API
    MAX_DEPTH,
    MAX_NODES,
    MAX_SURFACES,
    MAX_TEXT,
    Surface,
    WalkLimit,
    _as_surface,
    walk_context,
    walk_tool,
)
from litmus_rules.domain.steps import received_records
from litmus_rules.domain.walk_text import render_value  # noqa: F401 - re-exported: part of this module's API


def extract_surfaces(context: Mapping[str, Any] | None) -> tuple[Surface, ...]:
    """All surfaces of an episode's `context`, in document order (system prompt, messages, tools,
    skills, then any other key).

    Raises WalkLimit (an EvaluationError) when the context exceeds the walk's bounds.
    """
    if not isinstance(context, Mapping):
        return ()
    return tuple(walk_context(context))


def received_surfaces(episode: Mapping[str, Any]) -> tuple[Surface, ...]:
    """The surfaces of an episode's context that the agent received before deciding: as
    `extract_surfaces(episode["context"])`, without the messages `steps.left_out(episode)` lists.

    Raises WalkLimit (an EvaluationError) when the context exceeds the walk's bounds.
    """
    if not isinstance(episode, Mapping):
        return ()
    return tuple(map(_as_surface, received_records(episode)))


def tool_surfaces(tool: Mapping[str, Any], index: int) -> tuple[Surface, ...]:
    """The surfaces of one tool, with origins as if it were `context.tools[index]`."""
    return tuple(walk_tool(tool, index))
