"""YAML as episodes are read from it: safe, JSON-shaped loading, errors as located messages, and a
path's line in a composed document. Its own module so that reading JSON never imports yaml (about
30 ms of every cold start); `load` imports it on the first YAML input."""

from __future__ import annotations

import functools
from typing import IO, Any, Callable

import yaml

from litmus_rules.io.inputs import LIMIT, UNPARSEABLE
from litmus_rules.io.jsontext import short as _short

DocPath = tuple[Any, ...]
ERRORS = (yaml.YAMLError, ValueError, RecursionError)  # what loading a document can raise


def node_line(node: yaml.Node, path: DocPath) -> int:
    """Line of `path` in a composed YAML document: a member's key line, an item's own line."""
    line = node.start_mark.line
    for part in path:
        if isinstance(node, yaml.MappingNode):
            pairs = [(k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part]
            if not pairs:
                break
            key, node = pairs[-1]  # the last one wins, as in the constructed dict
            line = key.start_mark.line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line
        else:
            break
    return line + 1


def locator(text: str, doc_index: int) -> Callable[[DocPath], int] | None:
    """path -> line in document `doc_index` of a YAML text, or None when it cannot be composed."""
    try:
        for i, node in enumerate(yaml.compose_all(text, Loader=Loader)):
            if i == doc_index and node is not None:
                return functools.partial(node_line, node)
    except ERRORS:
        pass
    return None


class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loading (libyaml's parser when the wheel has it) that keeps documents JSON-shaped: a
    mapping key is its source text (`null:` under controls is "null", `on:` is "on"), a repeated
    key is an error, timestamps stay strings, and tags JSON cannot hold are rejected."""

    def __init__(self, stream: IO[Any] | str) -> None:
        super().__init__(stream)
        self.checked: set[yaml.Node] = set()  # mappings whose keys were checked; per document

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        if node not in self.checked:  # the keys as written, once, before `<<` merges add more
            self.checked.add(node)
            seen: set[str] = set()
            for key, _ in node.value:
                if key.tag == "tag:yaml.org,2002:merge":
                    continue
                problem = "mapping keys must be strings" if not isinstance(key, yaml.ScalarNode) else (
                    f"duplicate key `{_short(key.value)}`" if key.value in seen else None)
                if problem:
                    raise yaml.constructor.ConstructorError(None, None, problem, key.start_mark)
                seen.add(key.value)
        super().flatten_mapping(node)

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[str, Any]:
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep)  # raises
        self.flatten_mapping(node)
        return {k.value: self.construct_object(v, deep=deep) for k, v in node.value}

    def reject_tag(self, node: yaml.Node) -> None:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        raise yaml.constructor.ConstructorError(
            None, None, f"unsupported YAML tag `{tag}` (episodes hold JSON data)", node.start_mark)


Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_scalar)
for _tag in ("binary", "set", "omap", "pairs"):
    Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", Loader.reject_tag)


def problem(e: BaseException, max_depth: int) -> tuple[str, str, int | None]:
    """Message, code and line of a YAML error."""
    deep = f"document nests deeper than {max_depth} levels"
    if isinstance(e, RecursionError):  # only the pure-Python fallback parser recurses
        return deep, LIMIT, None
    if isinstance(e, yaml.reader.ReaderError):  # bad encoding or a control character
        return f"invalid YAML: {e.reason} (character {e.character!r} at offset {e.position})", UNPARSEABLE, None
    if not isinstance(e, yaml.MarkedYAMLError):
        return f"invalid YAML: {e}", UNPARSEABLE, None
    mark, ctx = e.problem_mark or e.context_mark, e.context_mark
    if "maximum nesting depth" in str(e.problem):  # libyaml's own guard, at 1000 levels
        return deep, LIMIT, mark.line + 1 if mark else None
    detail = (e.problem or e.context or "syntax error") + (f" at column {mark.column + 1}" if mark else "")
    if e.problem and e.context:
        detail += f" ({e.context} started at line {ctx.line + 1}, column {ctx.column + 1})" if ctx else f" ({e.context})"
    return f"invalid YAML: {detail}", UNPARSEABLE, mark.line + 1 if mark else None
