"""Read episode input (YAML, JSON, JSONL files, directories, stdin) and validate it, with locations.

Lazy throughout: documents are parsed and validated one at a time, so a large JSONL or YAML stream
never sits in memory whole. Bad input never raises: an unusable document (or an unreadable input)
comes out as a `LoadedEpisode` carrying a `FactsError` with file, line and JSON pointer, and the
batch goes on. Lines are found only on the error path.

Which paths are read (folders walked, FIFOs and devices refused, units planned) is `inputs`; strict
JSON decoding and locating a path in JSON text is `jsontext`. Both are re-exported here. The schema
itself, and each schema error as a readable message, is `episode_schema`.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import IO, Any, Callable, Iterator, Sequence

from litmus_rules import diagnostics
from litmus_rules.errors import FactsError
from litmus_rules.io import wire
from litmus_rules.io.episode_schema import DocPath, kind_of, pointer, schema_problem
from litmus_rules.io.inputs import (  # noqa: F401  (re-exported: `load` is where callers look for them)
    EXTENSIONS, INVALID, LIMIT, LOOP, NOT_A_FILE, NOT_AN_OBJECT, STDIN, UNPARSEABLE, UNREADABLE, LoadedEpisode, Unit,
    NotARegularFile, discover, open_regular, plan_units,
)
from litmus_rules.io.inputs import failed as _failed
from litmus_rules.io.jsontext import BadInput as _BadInput
from litmus_rules.io.jsontext import decode, json_line as _json_line, ws as _ws

__all__ = ["LoadedEpisode", "Unit", "discover", "iter_episodes", "iter_unit", "plan_units", "prepare_episode",
           "validate_episode"]

MAX_DOCUMENT_SIZE = 16 * 2**20  # one JSONL line, one JSON object, one YAML document
MAX_FILE_SIZE = 64 * 2**20  # a YAML stream or JSON file, parsed from one buffer
MAX_DEPTH = 200  # the engine walks documents (JSON schemas in tools) recursively
MAX_VALUES = 2_000_000  # values after expansion: YAML aliases can make a small file huge
Locate = Callable[[DocPath], "int | None"]  # path -> 1-based line


# --- validation ------------------------------------------------------------------------------------


def validate_episode(
    data: Any, *, source: str, line: int | None = None, text: str | None = None, doc_index: int = 0
) -> FactsError | None:
    """Check one parsed document: its problem against its version's schema and the wire rules
    (`prepare_episode`), or None. With its source `text` (YAML or JSON; `doc_index` picks the
    document of a YAML stream or the element of a JSON array) the error names the exact line."""
    return prepare_episode(data, source=source, line=line, text=text, doc_index=doc_index)[1]


def prepare_episode(
    data: Any, *, source: str, line: int | None = None, text: str | None = None, doc_index: int = 0
) -> tuple[Any, FactsError | None]:
    """validate -> normalise, the one way every episode reaches the rules (files here, dicts given to
    `RuleSet.evaluate`): `(the canonical episode, None)` (`wire.normalise`: episode/1 documents come
    back as they are), or `(None, the problem)`: a schema error, or a `WireError` as an invalid input."""
    return _prepare(data, source, line, _text_locator(text, doc_index) if text is not None else None)


def _prepare(
    data: Any, source: str, line: int | None, locate: Locate | None, decoded: _Span | None = None
) -> tuple[Any, FactsError | None]:
    err = _check(data, source, line, locate, decoded)
    if err is not None:
        return None, err
    try:
        return wire.normalise(data), None
    except wire.WireError as exc:
        at = (locate(exc.path) if locate else None) or line
        return None, FactsError(exc.message, source=source, line=at, pointer=wire.pointer(exc.path), code=INVALID)


# (text, start, end): the JSON text a document was decoded from, by jiter or the stdlib decoder
_Span = tuple[str, int, int]


def _check(
    data: Any, source: str, line: int | None, locate: Locate | None, decoded: _Span | None = None
) -> FactsError | None:
    def error(message: str, path: DocPath, code: str) -> FactsError:
        at = (locate(path) if locate else None) or line
        return FactsError(message, source=source, line=at, pointer=pointer(path), code=code)

    if not isinstance(data, dict):
        return error(diagnostics.message(NOT_AN_OBJECT, kind=kind_of(data)), (), NOT_AN_OBJECT)
    too_big, json_typed = _size_problem(data) if decoded is None else _decoded_size_problem(data, *decoded)
    if too_big is not None:
        return error(*too_big, LIMIT)
    found = schema_problem(data, json_typed=json_typed)
    return None if found is None else error(*found, INVALID)


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _size_problem(data: Any) -> tuple[tuple[str, DocPath] | None, bool]:
    """Depth and expanded size, checked without recursion (deep data must recurse nowhere), level by
    level; and, from the same walk, whether the document holds JSON's own types only (what the
    compiled schema validator may judge; `episode_schema.schema_problem`)."""
    level, depth, count, typed = [data], 1, 0, True
    while level:
        if depth > MAX_DEPTH:
            return (f"document nests deeper than {MAX_DEPTH} levels", _path_at_depth(data, depth)), typed
        below: list[Any] = []
        push = below.append
        for value in level:
            count += len(value)
            if count > MAX_VALUES:
                return (f"document too large: it expands to more than {MAX_VALUES} values", ()), typed
            if type(value) is dict:
                children: Any = value.values()
                if typed and not all(type(key) is str for key in value):
                    typed = False
            else:
                typed = typed and type(value) is list
                children = value.values() if isinstance(value, dict) else value
            for child in children:
                kind = type(child)
                if kind is dict or kind is list:
                    push(child)
                elif kind not in _JSON_SCALARS:
                    typed = False
                    if isinstance(child, (dict, list)):
                        push(child)
        level, depth = below, depth + 1
    return None, typed


def _decoded_size_problem(data: Any, text: str, start: int, end: int) -> tuple[tuple[str, DocPath] | None, bool]:
    """`_size_problem` of a document the JSON decoder made from `text[start:end]`, mostly from the
    text: the decoder makes JSON's own types only, every value takes at least one character of the
    text (so a text of at most MAX_VALUES characters holds no more values), and a chain of nested
    containers opens with as many brackets (so a text with at most MAX_DEPTH of them, counting those
    inside strings too, nests no deeper). Past either bound, the exact walk decides."""
    if end - start > MAX_VALUES:
        return _size_problem(data)
    if text.count("{", start, end) + text.count("[", start, end) <= MAX_DEPTH:
        return None, True
    level, depth = [data], 1  # the nesting only: a walk over the containers
    while level:
        if depth > MAX_DEPTH:
            return (f"document nests deeper than {MAX_DEPTH} levels", _path_at_depth(data, depth)), True
        below: list[Any] = []
        push = below.append
        for value in level:
            for child in value.values() if value.__class__ is dict else value:
                if child.__class__ is dict or child.__class__ is list:
                    push(child)
        level, depth = below, depth + 1
    return None, True


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


def _text_locator(text: str, doc_index: int) -> Locate:
    start = _ws(text, 1 if text.startswith("\ufeff") else 0)
    if text.startswith(("{", "["), start):
        prefix: DocPath = (doc_index,) if text[start] == "[" else ()
        return lambda path: _json_line(text, start, prefix + path)
    from litmus_rules.io import yamltext

    return yamltext.locator(text, doc_index) or (lambda path: None)


# --- parsing -----------------------------------------------------------------------------------------


def _decode(text: str, at: int) -> tuple[Any, int]:
    return decode(text, at, MAX_DEPTH)


def _episode(
    data: Any, source: str, index: int, line: int | None, locate: Locate | None, check: bool = True,
    decoded: _Span | None = None,
) -> LoadedEpisode:
    if not check:  # a quick read (canaries of a first pass): parsed, not validated
        if isinstance(data, dict):
            return LoadedEpisode(source, index, line, data=data)
        return _failed(source, index, diagnostics.message(NOT_AN_OBJECT, kind=kind_of(data)), NOT_AN_OBJECT, line)
    prepared, err = _prepare(data, source, line, locate, decoded)
    if err is None:
        return LoadedEpisode(source, index, line, data=prepared)
    raw_id = data.get("id") if isinstance(data, dict) else None
    return LoadedEpisode(source, index, line, error=err, raw_id=raw_id if isinstance(raw_id, str) else None)


def _too_large(source: str, index: int, line: int | None = None, limit: int | None = None) -> LoadedEpisode:
    if limit is not None:
        return _failed(source, index, f"file too large: over the {_bytes(limit)} limit for a YAML or JSON file "
                       "(MAX_FILE_SIZE; JSONL is read line by line, without this limit)", LIMIT, line)
    return _failed(source, index, f"document too large: over the {_bytes(MAX_DOCUMENT_SIZE)} limit for one document "
                   "(MAX_DOCUMENT_SIZE)", LIMIT, line)


def _bytes(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def parse_yaml_text(source: str, text: str) -> Iterator[LoadedEpisode]:
    """The YAML documents of `text`, read as episodes are (safe, JSON-shaped, located errors) but not
    validated: for importers reading YAML that is not an episode (SKILL.md frontmatter)."""
    return _yaml_docs(source, text, check=False)


def _yaml_docs(source: str, stream: IO[Any] | str, check: bool = True) -> Iterator[LoadedEpisode]:
    """A YAML stream, one document at a time. The parser builds nodes (with marks) anyway, so the
    node is kept while its document is checked: an error's line costs no second parse."""
    from litmus_rules.io import yamltext  # yaml is imported only when YAML is read

    try:
        loader = yamltext.Loader(stream)
    except UnicodeError as e:  # libyaml encodes a str stream first: a lone surrogate fails there
        yield _failed(source, 0, f"not valid text: {e}", UNPARSEABLE)
        return
    index = 0
    try:
        while True:
            try:
                if not loader.check_node():
                    return
                node = loader.get_node()
            except (*yamltext.ERRORS, UnicodeError) as e:
                # The parser cannot resynchronise after a syntax error: report it, end this input.
                yield _failed(source, index, *yamltext.problem(e, MAX_DEPTH))
                return
            line = node.start_mark.line + 1
            if node.end_mark.index - node.start_mark.index > MAX_DOCUMENT_SIZE:
                yield _too_large(source, index, line)
            else:
                try:
                    data = loader.construct_document(node)
                except yamltext.ERRORS as e:
                    # A bad value (duplicate key, unsupported tag) spoils this document only.
                    loader.constructed_objects, loader.recursive_objects, loader.state_generators = {}, {}, []
                    message, code, err_line = yamltext.problem(e, MAX_DEPTH)
                    yield _failed(source, index, message, code, err_line or line, doc_line=line)
                else:
                    yield _episode(data, source, index, line, functools.partial(yamltext.node_line, node), check)
            loader.checked.clear()
            index += 1
    finally:
        loader.dispose()


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
        return _episode(data, source, index, line_at(at), lambda path: _json_line(text, at, path), check,
                        (text, at, end)), end

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
            yield _episode(data, source, index, lineno, None, check, (text, 0, len(text)))
        index += 1


def _sniffed_docs(source: str, stream: IO[str] | IO[bytes], check: bool = True) -> Iterator[LoadedEpisode]:
    """stdin, or a file without a known extension: JSONL when the first non-blank line is a whole
    JSON object; else JSON; else YAML. JSON goes first because libyaml rejects some valid JSON
    (a surrogate-pair escape, as json.dumps writes an emoji), and YAML reads flow text JSON rejects.
    A binary stream is decoded here, so that bad UTF-8 is an error located by line (JSONL) or by
    byte offset (the rest), not an exception."""
    head: list[Any] = []
    while line := stream.readline(MAX_DOCUMENT_SIZE + 1):
        head.append(line)
        if line.strip():
            break
    last = head[-1] if head else ""
    first = (last.decode("utf-8", "replace") if isinstance(last, bytes) else last).strip().lstrip("\ufeff")
    try:
        jsonl = first.startswith("{") and isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        jsonl = False
    if jsonl:
        pending = iter(head)
        yield from _jsonl_docs(source, lambda size: next(pending, None) or stream.readline(size), check=check)
        return
    rest = stream.read(MAX_FILE_SIZE + 1)
    if isinstance(rest, bytes) or (not rest and head and isinstance(head[0], bytes)):
        raw = b"".join(head) + (rest or b"")
        if len(raw) > MAX_FILE_SIZE:
            yield _too_large(source, 0, limit=MAX_FILE_SIZE)
            return
        bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
        try:
            text = raw[bom:].decode("utf-8")
        except UnicodeDecodeError as e:
            at = bom + e.start
            yield _failed(source, 0, f"invalid UTF-8 at byte {at + 1} ({e.reason})", UNPARSEABLE,
                          raw.count(b"\n", 0, at) + 1)
            return
    else:
        text = "".join(head) + rest
        if len(text) > MAX_FILE_SIZE:
            yield _too_large(source, 0, limit=MAX_FILE_SIZE)
            return
        text = text.removeprefix("\ufeff")
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
    with open_regular(path) as fh:
        if ext not in EXTENSIONS:  # named explicitly: read it as stdin would be
            yield from _sniffed_docs(path, fh, check)
        elif ext == ".jsonl":
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
    except NotARegularFile as e:
        yield _failed(source, count, str(e), NOT_A_FILE)
    except OSError as e:
        yield _failed(source, count, diagnostics.message(UNREADABLE, path=source, reason=e.strerror or e), UNREADABLE)
    except (RecursionError, MemoryError) as e:
        what = "nests too deeply" if isinstance(e, RecursionError) else "needs too much memory"
        yield _failed(source, count, diagnostics.message(LIMIT, what=what), LIMIT)
    except UnicodeDecodeError as e:
        yield _failed(source, count, f"invalid UTF-8 in `{source}`: {e.reason}", UNPARSEABLE)
    else:
        if count == 0:
            yield _failed(source, 0, "no episode in the input (it is empty)", UNREADABLE)


def iter_episodes(inputs: Sequence[str], *, stdin: IO[str] | None = None) -> Iterator[LoadedEpisode]:
    """Every document of every input, lazily and in input order; never raises for bad input."""
    for item in discover(inputs):
        if isinstance(item, LoadedEpisode):
            yield item
        elif item == "-":
            yield from _guarded(STDIN, _sniffed_docs(STDIN, stdin if stdin is not None else sys.stdin))
        else:
            yield from _guarded(item, _file_docs(item))


def iter_unit(unit: Unit | LoadedEpisode, check: bool = True) -> Iterator[LoadedEpisode]:
    """The documents of one unit, exactly as `iter_episodes` reads them (`check=False`: parsed
    but not validated against the schema, for a first pass that only needs a few fields)."""
    if isinstance(unit, LoadedEpisode):
        yield unit
    elif unit.label is not None:
        yield from _guarded(unit.label, _spooled_docs(unit.path, unit.label, check))
    elif unit.start == 0 and unit.stop is None:
        yield from _guarded(unit.path, _file_docs(unit.path, check))
    else:
        yield from _guarded(unit.path, _slice_docs(unit, check))


def _spooled_docs(path: str, label: str, check: bool) -> Iterator[LoadedEpisode]:
    with open(path, "rb") as fh:
        yield from _sniffed_docs(label, fh, check)


def _slice_docs(unit: Unit, check: bool) -> Iterator[LoadedEpisode]:
    with open_regular(unit.path) as fh:
        fh.seek(unit.start)
        remaining = [unit.stop - unit.start if unit.stop is not None else 2**62]

        def readline(limit: int) -> bytes:
            line = fh.readline(min(limit, remaining[0]))
            remaining[0] -= len(line)
            return line

        yield from _jsonl_docs(unit.path, readline, unit.first_line, unit.first_index, check)
