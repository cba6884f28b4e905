"""Read episode input (YAML, JSON, JSONL files, directories, stdin) and validate it, with locations.

Lazy throughout: documents are parsed and validated one at a time, so a large JSONL or YAML stream
never sits in memory whole. Bad input never raises: an unusable document (or an unreadable input)
comes out as a `LoadedEpisode` carrying a `FactsError` with file, line and JSON pointer, and the
batch goes on. Lines are found only on the error path.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import sys
from typing import IO, Any, Callable, Iterable, Iterator, Sequence

import attrs
import jsonschema
import yaml
from jsonschema.exceptions import ValidationError, best_match

from litmus_rules._resources import episode_schema_path
from litmus_rules.errors import FactsError

__all__ = ["LoadedEpisode", "Unit", "discover", "iter_episodes", "iter_unit", "plan_units", "validate_episode"]

MAX_DOCUMENT_SIZE = 16 * 2**20  # one JSONL line, one JSON object, one YAML document
MAX_FILE_SIZE = 64 * 2**20  # a YAML stream or JSON file, parsed from one buffer
MAX_DEPTH = 200  # the engine walks documents (JSON schemas in tools) recursively
MAX_VALUES = 2_000_000  # values after expansion: YAML aliases can make a small file huge
EXTENSIONS = (".yaml", ".yml", ".json", ".jsonl")
STDIN = "<stdin>"

# Stable error codes (tests assert codes, not wording).
UNPARSEABLE = "L301"  # not valid YAML/JSON/UTF-8, a duplicate key, an unsupported YAML tag
INVALID = "L302"  # parses, but does not match the episode schema
LIMIT = "L303"  # too large or too deep
NOT_AN_OBJECT = "L304"  # a document that is not a mapping
UNREADABLE = "L305"  # a missing path, an I/O error, an input without any document

DocPath = tuple[Any, ...]  # keys and indices into a document
Locate = Callable[[DocPath], "int | None"]  # path -> 1-based line


@attrs.frozen
class LoadedEpisode:
    """One document of the input: exactly one of `data` (a valid episode) and `error` is set."""

    source: str
    index: int
    line: int | None
    data: dict[str, Any] | None = None
    error: FactsError | None = None
    raw_id: str | None = attrs.field(default=None, repr=False)  # the id of an invalid document

    def __attrs_post_init__(self) -> None:
        if (self.data is None) == (self.error is None):
            raise ValueError("LoadedEpisode needs exactly one of data and error")

    @property
    def id(self) -> str | None:
        return self.data["id"] if self.data is not None else self.raw_id


# --- validation ------------------------------------------------------------------------------------


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """Built once; no format checker (`format` stays an annotation). Local `$ref`s are inlined
    first: resolving them again for every document cost a third of the validation time."""
    with open(episode_schema_path(), encoding="utf-8") as fh:
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


def validate_episode(
    data: Any, *, source: str, line: int | None = None, text: str | None = None, doc_index: int = 0
) -> FactsError | None:
    """Check one parsed document. With its source `text` (YAML or JSON; `doc_index` picks the
    document of a YAML stream or the element of a JSON array) the error names the exact line."""
    return _check(data, source, line, _text_locator(text, doc_index) if text is not None else None)


def _check(data: Any, source: str, line: int | None, locate: Locate | None) -> FactsError | None:
    def error(message: str, path: DocPath, code: str) -> FactsError:
        at = (locate(path) if locate else None) or line
        return FactsError(message, source=source, line=at, pointer=_pointer(path), code=code)

    if not isinstance(data, dict):
        return error(f"expected an episode object, got {_kind(data)}", (), NOT_AN_OBJECT)
    too_big = _size_problem(data)
    if too_big is not None:
        return error(*too_big, LIMIT)
    found = best_match(_validator().iter_errors(data), key=_rank)
    return None if found is None else error(*_describe(found), INVALID)


def _rank(err: ValidationError) -> tuple[int, bool, bool]:
    # As jsonschema's relevance, the shallowest error says the most; paths are not compared (mixed
    # key types would raise), and at equal depth an unknown key (a typo, with a suggestion) beats
    # the "missing required key" it usually causes.
    return (-len(err.path), err.validator == "additionalProperties", err.validator != "required")


def _describe(err: ValidationError) -> tuple[str, DocPath]:
    """One readable message for a schema error, and the path it points at."""
    path, inst, expected = tuple(err.absolute_path), err.instance, err.validator_value
    kind = ""
    if "then" in err.absolute_schema_path and isinstance(inst, dict):  # a signal's per-kind rules
        kind = f" for a `{_short(inst.get('kind'))}` signal"
    if err.validator == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        key = next(k for k in inst if k not in allowed)
        where = f"in {_pointer(path)}" if path else "at top level"
        message = f"unknown key `{_short(key)}` {where}{kind} (expected one of {', '.join(allowed)})"
        close = difflib.get_close_matches(str(key), allowed, n=1)
        return message + (f"; did you mean `{close[0]}`?" if close else ""), path + (key,)
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
        return f"{subject} must be {' or '.join(words)} (got {_kind(inst)})", path
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


def _pointer(path: DocPath) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), f"a value of type {type(value).__name__}")


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _got(value: Any) -> str:
    return f"`{_short(value)}`" if value is None or isinstance(value, (str, int, float)) else _kind(value)


def _size_problem(data: Any) -> tuple[str, DocPath] | None:
    """Depth and expanded size, checked without recursion: deep data must recurse nowhere."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    count = 0
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"document nests deeper than {MAX_DEPTH} levels", _path_at_depth(data, depth)
        children = value.values() if isinstance(value, dict) else value
        count += len(children)
        if count > MAX_VALUES:
            return f"document too large: it expands to more than {MAX_VALUES} values", ()
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return None


def _path_at_depth(data: Any, depth: int) -> DocPath:
    """Error path only: the first container nested `depth` levels deep, for pointer and line."""
    stack: list[tuple[Any, DocPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) + 1 >= depth:
            return path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((v, path + (k,)) for k, v in items if isinstance(v, (dict, list)))
    return ()


# --- locating a path in the source (error path only) ------------------------------------------------


def _node_line(node: yaml.Node, path: DocPath) -> int:
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


_WS = re.compile(r"[ \t\n\r]*")
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_skip = json.JSONDecoder().raw_decode


def _ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def _json_line(text: str, pos: int, path: DocPath) -> int | None:
    """Line of `path` in the JSON document at `pos`: a small scan that steps over siblings with the
    C decoder. None when the text is not the JSON expected."""
    mark = pos = _ws(text, pos)
    try:
        for part in path:
            if text[pos] == "{" and isinstance(part, str):
                found, pos = None, _ws(text, pos + 1)
                while text[pos] != "}":
                    key, after = _scanstring(text, pos + 1)
                    value_at = _ws(text, _ws(text, after) + 1)  # past the ':'
                    if key == part:
                        found = (pos, value_at)  # scan on: the last duplicate wins
                    pos = _ws(text, _skip(text, value_at)[1])
                    pos = _ws(text, pos + 1) if text[pos] == "," else pos
                if found is None:
                    return None
                mark, pos = found
            elif text[pos] == "[" and isinstance(part, int):
                pos = _ws(text, pos + 1)
                for _ in range(part):
                    pos = _ws(text, _ws(text, _skip(text, pos)[1]) + 1)
                mark = pos
            else:
                return None
    except (ValueError, IndexError, RecursionError):
        return None
    return text.count("\n", 0, mark) + 1


def _text_locator(text: str, doc_index: int) -> Locate:
    start = _ws(text, 1 if text.startswith("\ufeff") else 0)
    if text.startswith(("{", "["), start):
        prefix: DocPath = (doc_index,) if text[start] == "[" else ()
        return lambda path: _json_line(text, start, prefix + path)
    try:
        for i, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
            if i == doc_index and node is not None:
                return functools.partial(_node_line, node)
    except (yaml.YAMLError, ValueError, RecursionError):
        pass
    return lambda path: None


# --- parsing -----------------------------------------------------------------------------------------


class _BadInput(Exception):
    """A document that does not parse; `pos` is the offset it refers to (-1: where it starts)."""

    def __init__(self, message: str, code: str = UNPARSEABLE, pos: int = -1) -> None:
        super().__init__(message)
        self.message, self.code, self.pos = message, code, pos


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # plain json keeps the last of repeated keys, silently
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _BadInput(f"duplicate key `{_short(key)}`")
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def _decode(text: str, at: int) -> tuple[Any, int]:
    """One JSON value at `at`; every failure becomes a _BadInput."""
    try:
        return _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as e:
        raise _BadInput(f"invalid JSON: {e.msg.lower()} at column {e.colno}", pos=e.pos) from None
    except _BadInput as e:
        raise _BadInput(e.message, pos=at) from None
    except RecursionError:
        raise _BadInput(f"document nests deeper than {MAX_DEPTH} levels", LIMIT, at) from None
    except ValueError as e:  # e.g. an integer beyond Python's digit limit
        raise _BadInput(f"invalid JSON: {e}", pos=at) from None


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
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


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_scalar)
for _tag in ("binary", "set", "omap", "pairs"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _Loader.reject_tag)


def _episode(
    data: Any, source: str, index: int, line: int | None, locate: Locate | None, check: bool = True
) -> LoadedEpisode:
    if not check:  # a quick read (canaries of a first pass): parsed, not validated
        if isinstance(data, dict):
            return LoadedEpisode(source, index, line, data=data)
        return _failed(source, index, f"expected an episode object, got {_kind(data)}", NOT_AN_OBJECT, line)
    err = _check(data, source, line, locate)
    if err is None:
        return LoadedEpisode(source, index, line, data=data)
    raw_id = data.get("id") if isinstance(data, dict) else None
    return LoadedEpisode(source, index, line, error=err, raw_id=raw_id if isinstance(raw_id, str) else None)


def _failed(source: str, index: int, message: str, code: str, line: int | None = None,
            doc_line: int | None = None) -> LoadedEpisode:
    error = FactsError(message, source=source, line=line, code=code)
    return LoadedEpisode(source, index, doc_line or line, error=error)


def _too_large(source: str, index: int, line: int | None = None, limit: int | None = None) -> LoadedEpisode:
    return _failed(source, index, f"document too large (over {limit or MAX_DOCUMENT_SIZE} bytes)", LIMIT, line)


def _yaml_docs(source: str, stream: IO[Any] | str, check: bool = True) -> Iterator[LoadedEpisode]:
    """A YAML stream, one document at a time. The parser builds nodes (with marks) anyway, so the
    node is kept while its document is checked: an error's line costs no second parse."""
    loader = _Loader(stream)
    index = 0
    try:
        while True:
            try:
                if not loader.check_node():
                    return
                node = loader.get_node()
            except (yaml.YAMLError, ValueError, RecursionError) as e:
                # The parser cannot resynchronise after a syntax error: report it, end this input.
                yield _failed(source, index, *_yaml_problem(e))
                return
            line = node.start_mark.line + 1
            if node.end_mark.index - node.start_mark.index > MAX_DOCUMENT_SIZE:
                yield _too_large(source, index, line)
            else:
                try:
                    data = loader.construct_document(node)
                except (yaml.YAMLError, ValueError, RecursionError) as e:
                    # A bad value (duplicate key, unsupported tag) spoils this document only.
                    loader.constructed_objects, loader.recursive_objects, loader.state_generators = {}, {}, []
                    message, code, err_line = _yaml_problem(e)
                    yield _failed(source, index, message, code, err_line or line, doc_line=line)
                else:
                    yield _episode(data, source, index, line, functools.partial(_node_line, node), check)
            loader.checked.clear()
            index += 1
    finally:
        loader.dispose()


def _yaml_problem(e: BaseException) -> tuple[str, str, int | None]:
    """Message, code and line of a YAML error."""
    deep = f"document nests deeper than {MAX_DEPTH} levels"
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


def _json_docs(source: str, text: str, check: bool = True) -> Iterator[LoadedEpisode]:
    """A JSON text: one episode object, or an array whose elements are each a document (decoded one
    at a time with raw_decode, so each has its own line)."""
    counted, line = 0, 1

    def line_at(pos: int) -> int:  # positions only move forwards: count newlines incrementally
        nonlocal counted, line
        counted, line = pos, line + text.count("\n", counted, pos)
        return line

    def doc(index: int, at: int) -> tuple[LoadedEpisode, int]:
        data, end = _decode(text, at)
        if end - at > MAX_DOCUMENT_SIZE:
            return _too_large(source, index, line_at(at)), end
        return _episode(data, source, index, line_at(at), lambda path: _json_line(text, at, path), check), end

    index, pos = 0, _ws(text, 1 if text.startswith("\ufeff") else 0)
    array = text.startswith("[", pos)
    try:
        pos = _ws(text, pos + 1) if array else pos
        while not array or not text.startswith("]", pos):
            loaded, end = doc(index, pos)
            yield loaded
            index, pos = index + 1, _ws(text, end)
            if not array:
                break
            if text.startswith(",", pos):
                pos = _ws(text, pos + 1)
                if text.startswith("]", pos):
                    raise _BadInput("invalid JSON: trailing comma before `]`", pos=pos)
            elif not text.startswith("]", pos):
                raise _BadInput("invalid JSON: expecting `,` or `]` after an episode", pos=pos)
        pos = _ws(text, pos + 1) if array else pos
        if pos < len(text):
            raise _BadInput("invalid JSON: extra data after the episode", pos=pos)
    except _BadInput as e:
        yield _failed(source, index, e.message, e.code, line_at(max(e.pos, counted)))


def _jsonl_docs(
    source: str, readline: Callable[[int], Any], first_line: int = 0, first_index: int = 0, check: bool = True
) -> Iterator[LoadedEpisode]:
    """One document per non-blank line, read line by line (bytes or text). A slice of a larger
    file starts counting at `first_line` lines and `first_index` documents already read."""
    index, lineno = first_index, first_line
    while raw := readline(MAX_DOCUMENT_SIZE + 1):
        lineno += 1
        if len(raw) > MAX_DOCUMENT_SIZE and raw[-1:] not in (b"\n", "\n"):
            while (rest := readline(2**20)) and rest[-1:] not in (b"\n", "\n"):
                pass  # skip the rest of the oversized line without holding it
            yield _too_large(source, index, lineno)
            index += 1
            continue
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            text = (text.lstrip("\ufeff") if lineno == 1 else text).rstrip("\r\n")  # columns stay on it
            if not text.strip():
                continue
            data, end = _decode(text, _ws(text, 0))
            if _ws(text, end) < len(text):
                raise _BadInput(f"invalid JSON: extra data at column {end + 1}")
        except UnicodeDecodeError as e:
            yield _failed(source, index, f"invalid UTF-8 at byte {e.start + 1} of the line", UNPARSEABLE, lineno)
        except _BadInput as e:
            yield _failed(source, index, e.message, e.code, lineno)
        else:
            yield _episode(data, source, index, lineno, None, check)
        index += 1


def _sniffed_docs(source: str, stream: IO[str], check: bool = True) -> Iterator[LoadedEpisode]:
    """stdin, or a file without a known extension: JSONL when the first non-blank line is a whole
    JSON object; else JSON; else YAML. JSON goes first because libyaml rejects some valid JSON
    (a surrogate-pair escape, as json.dumps writes an emoji), and YAML reads flow text JSON rejects."""
    head: list[str] = []
    while line := stream.readline(MAX_DOCUMENT_SIZE + 1):
        head.append(line)
        if line.strip():
            break
    first = head[-1].strip().lstrip("\ufeff") if head else ""
    try:
        jsonl = first.startswith("{") and isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        jsonl = False
    if jsonl:
        pending = iter(head)
        yield from _jsonl_docs(source, lambda size: next(pending, None) or stream.readline(size), check=check)
        return
    text = "".join(head) + stream.read(MAX_FILE_SIZE + 1)
    if len(text) > MAX_FILE_SIZE:
        yield _too_large(source, 0, limit=MAX_FILE_SIZE)
        return
    if first.startswith(("{", "[")):
        docs = _json_docs(source, text, check)
        loaded = next(docs, None)  # None: an empty array
        if loaded is None or loaded.index > 0 or not (loaded.error and loaded.error.message.startswith("invalid JSON")):
            yield from [loaded] if loaded else []
            yield from docs
            return
    yield from _yaml_docs(source, text, check)


def _file_docs(path: str, check: bool = True) -> Iterator[LoadedEpisode]:
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXTENSIONS:  # named explicitly: read it as stdin would be
        with open(path, encoding="utf-8-sig") as text_file:
            yield from _sniffed_docs(path, text_file, check)
        return
    with open(path, "rb") as fh:
        if ext == ".jsonl":
            yield from _jsonl_docs(path, fh.readline, check=check)
        elif os.fstat(fh.fileno()).st_size > MAX_FILE_SIZE:
            yield _too_large(path, 0, limit=MAX_FILE_SIZE)
        elif ext != ".json":
            yield from _yaml_docs(path, fh, check)  # libyaml reads the file in chunks, lazily
        else:
            raw = fh.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                line = raw.count(b"\n", 0, e.start) + 1
                yield _failed(path, 0, f"invalid UTF-8 at byte {e.start + 1}", UNPARSEABLE, line)
                return
            yield from _json_docs(path, text, check)


def _guarded(source: str, docs: Iterator[LoadedEpisode]) -> Iterator[LoadedEpisode]:
    """An I/O or decoding failure ends one input as an error; so does an input without documents."""
    count = 0
    try:
        for loaded in docs:
            count += 1
            yield loaded
    except OSError as e:
        yield _failed(source, count, f"cannot read `{source}`: {e.strerror or e}", UNREADABLE)
    except UnicodeDecodeError as e:
        yield _failed(source, count, f"invalid UTF-8 in `{source}`: {e.reason}", UNPARSEABLE)
    else:
        if count == 0:
            yield _failed(source, 0, "no episode in the input (it is empty)", UNREADABLE)


def discover(inputs: Iterable[str | os.PathLike[str]]) -> list[str | LoadedEpisode]:
    """Inputs in order, a directory replaced by its episode files (recursively, sorted by path,
    hidden entries skipped), `-` kept for stdin, and a path that cannot be used made an error."""
    found: list[str | LoadedEpisode] = []
    for item in (os.fspath(i) for i in inputs):  # (a generator: mypy cannot pick os.fspath's overload for `map`)
        if item == "-" or (os.path.exists(item) and not os.path.isdir(item)):
            found.append(item)
        elif os.path.isdir(item):
            files: list[tuple[list[str], str]] = []
            problems: list[OSError] = []
            for dirpath, dirnames, filenames in os.walk(item, onerror=problems.append):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                paths = [os.path.join(dirpath, n) for n in filenames if not n.startswith(".")]
                files += [(os.path.relpath(p, item).split(os.sep), p) for p in paths if p.lower().endswith(EXTENSIONS)]
            found += [_failed(str(p.filename or item), 0, f"cannot read: {p.strerror}", UNREADABLE) for p in problems]
            found += [path for _, path in sorted(files)]
            if not files and not problems:
                found.append(_failed(item, 0, f"no episode files ({' '.join(EXTENSIONS)}) in `{item}`", UNREADABLE))
        else:
            found.append(_failed(item, 0, f"no such file or directory: `{item}`", UNREADABLE))
    return found


def iter_episodes(inputs: Sequence[str], *, stdin: IO[str] | None = None) -> Iterator[LoadedEpisode]:
    """Every document of every input, lazily and in input order; never raises for bad input."""
    for item in discover(inputs):
        if isinstance(item, LoadedEpisode):
            yield item
        elif item == "-":
            yield from _guarded(STDIN, _sniffed_docs(STDIN, stdin if stdin is not None else sys.stdin))
        else:
            yield from _guarded(item, _file_docs(item))


# ---- units of work: slices of the input that a worker process reads by itself ---------------------

JSONL_CHUNK = 2**20  # bytes of JSONL per unit: small enough to spread, large enough to amortise


@attrs.frozen
class Unit:
    """A whole file, or a byte range of a JSONL file starting at a line boundary."""

    path: str
    start: int = 0
    stop: int | None = None  # None: to the end of the file
    first_line: int = 0  # lines before `start`
    first_index: int = 0  # documents before `start`
    label: str | None = None  # the name to report instead of `path` (standard input, spooled)


def plan_units(
    inputs: Sequence[str], chunk: int = JSONL_CHUNK, stdin_path: str | None = None
) -> list[Unit | LoadedEpisode]:
    """The inputs as units, in order; a path that cannot be used stays an error entry. Standard
    input (`-`) is read from `stdin_path`, where the caller spooled it."""
    out: list[Unit | LoadedEpisode] = []
    for item in discover(inputs):
        if item == "-":
            if stdin_path is None:
                raise ValueError("plan_units: `-` needs stdin_path")
            out.append(Unit(stdin_path, label=STDIN))
            continue
        if isinstance(item, LoadedEpisode) or not item.lower().endswith(".jsonl"):
            out.append(item if isinstance(item, LoadedEpisode) else Unit(item))
            continue
        try:
            out.extend(_jsonl_units(item, chunk))
        except OSError:
            out.append(Unit(item))  # reading it again reports the error in input order
    return out


def _jsonl_units(path: str, chunk: int) -> list[Unit]:
    units: list[Unit] = []
    lines = docs = start = 0
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            block += fh.readline()  # end the unit at a line boundary
            units.append(Unit(path, start, start + len(block), lines, docs))
            start += len(block)
            lines += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            docs += sum(1 for line in block.split(b"\n") if line.strip())
    if len(units) == 1:
        return [Unit(path)]
    return units or [Unit(path)]


def iter_unit(unit: Unit | LoadedEpisode, check: bool = True) -> Iterator[LoadedEpisode]:
    """The documents of one unit, exactly as `iter_episodes` reads them (`check=False`: parsed
    but not validated against the schema, for a first pass that only needs a few fields)."""
    if isinstance(unit, LoadedEpisode):
        yield unit
        return
    if unit.label is not None:
        with open(unit.path, encoding="utf-8-sig") as text_file:
            yield from _guarded(unit.label, _sniffed_docs(unit.label, text_file, check))
        return
    if unit.start == 0 and unit.stop is None:
        yield from _guarded(unit.path, _file_docs(unit.path, check))
        return
    with open(unit.path, "rb") as fh:
        fh.seek(unit.start)
        remaining = [unit.stop - unit.start if unit.stop is not None else 2**62]

        def readline(limit: int) -> bytes:
            line = fh.readline(min(limit, remaining[0]))
            remaining[0] -= len(line)
            return line

        yield from _guarded(unit.path, _jsonl_docs(unit.path, readline, unit.first_line, unit.first_index, check))
