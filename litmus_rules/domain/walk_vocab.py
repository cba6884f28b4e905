"""What the surface walk knows: the formats' fixed words, and how each known key is read.

The words here are the same in every instance (keys of the episode format, of JSON Schema and of the
providers' message shapes; the `type`/`role` values those formats define). walk.py does not emit
them as surfaces: a canary or a payload is per-instance text, so it is never one of them, and reading
them would only add thousands of identical surfaces to every episode. Anything else is read.
"""

from __future__ import annotations

from typing import Any

FORMAT_KEYS = frozenset({
    # the episode format
    "system_prompt", "messages", "tools", "skills", "role", "content", "name", "tool_call_id",
    "title", "description", "input_schema", "inputSchema", "parameters", "annotations", "body", "path",
    "step",
    # provider message and content-part shapes (Anthropic, OpenAI Chat and Responses, MCP, AgentDojo)
    "type", "text", "source", "data", "media_type", "url", "image_url", "input", "output", "id",
    "tool_use_id", "is_error", "isError", "cache_control", "citations", "call_id", "arguments",
    "function", "tool_calls", "function_call", "status", "detail", "file_id", "filename", "file_data",
    "mimeType", "uri", "resource", "structuredContent", "outputSchema", "strict", "refusal",
    "signature", "thinking", "audio", "format", "context",
    # MCP tool annotations
    "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
    # JSON Schema keywords
    "$schema", "$id", "$ref", "$defs", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor",
    "$vocabulary", "definitions", "properties", "patternProperties", "additionalProperties",
    "unevaluatedProperties", "propertyNames", "required", "dependentRequired", "dependentSchemas",
    "dependencies", "items", "prefixItems", "additionalItems", "unevaluatedItems", "contains",
    "minContains", "maxContains", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "enum",
    "const", "default", "examples", "example", "pattern", "minLength", "maxLength", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
    "uniqueItems", "minProperties", "maxProperties", "contentEncoding", "contentMediaType",
    "contentSchema", "readOnly", "writeOnly", "deprecated", "nullable",
})
# Values of `type` and `role` keys that are words of the formats.
FORMAT_WORDS = frozenset({
    "object", "string", "number", "integer", "boolean", "array", "null",
    "system", "user", "assistant", "tool", "developer", "function", "model",
    "text", "image", "document", "file", "audio", "tool_use", "tool_result", "server_tool_use",
    "function_call", "function_call_output", "message", "input_text", "output_text", "input_image",
    "input_file", "image_url", "thinking", "redacted_thinking", "refusal", "base64", "url",
    "resource", "resource_link",
})
WORD_KEYS = frozenset({"type", "role"})
# The harness's flag on an item: `injected: true` marks it (and all inside it) as the payload.
INJECTED = "injected"


def is_word(value: Any) -> bool:
    """Is the value one of the formats' own `type`/`role` words (see the module doc)?"""
    return value.__class__ is str and value in FORMAT_WORDS
# Content parts whose text is a tool's result, whatever the role of the message carrying them.
RESULT_PARTS = frozenset({"tool_result", "function_call_output"})


# How a schema keyword is read (the `_Walker.schema` dispatch).
TEXT, WHOLE, EACH, PROPS, PATTERNS, NAMED, DEFS, SUB, ARGSUB, SUBLIST, REF, TYPE = range(12)
SCHEMA_KEYS: dict[str, tuple[int, str]] = {
    "description": (TEXT, "schema_description"),
    "title": (TEXT, "schema_title"),
    "pattern": (TEXT, "schema_pattern"),
    "$comment": (TEXT, "schema_comment"),
    "default": (WHOLE, "schema_default"),
    "const": (WHOLE, "schema_const"),
    "example": (WHOLE, "schema_example"),  # OpenAPI's singular form
    "enum": (EACH, "schema_enum"),
    "examples": (EACH, "schema_example"),
    "properties": (PROPS, "schema_property_name"),
    "patternProperties": (PATTERNS, "schema_pattern"),
    "dependentSchemas": (NAMED, "schema_property_name"),
    "$defs": (DEFS, "key"),
    "definitions": (DEFS, "key"),
    "items": (ARGSUB, ""),
    "prefixItems": (SUBLIST, ""),
    "anyOf": (SUBLIST, ""),
    "oneOf": (SUBLIST, ""),
    "allOf": (SUBLIST, ""),
    "$ref": (REF, "schema_ref"),
    "type": (TYPE, "schema_type"),
    **{k: (SUB, "") for k in (
        "additionalProperties", "unevaluatedProperties", "propertyNames", "contains", "not", "if",
        "then", "else", "additionalItems", "unevaluatedItems", "contentSchema")},
}
TOOL_KINDS = {"name": "tool_name", "title": "tool_title", "description": "tool_description",
               "annotations": "tool_annotation",
               # MCP (tools/list) fields, free-form: every key and value inside them is read
               "execution": "tool_execution", "icons": "tool_icon", "_meta": "tool_meta"}
TOOL_SCHEMAS = ("input_schema", "inputSchema", "parameters")  # their properties are the arguments
OUTPUT_SCHEMAS = ("outputSchema", "output_schema")  # read as schemas; they name no arguments
SKILL_KINDS = {"name": "skill_name", "description": "skill_description", "body": "skill_body",
                "path": "skill_path"}
