"""Writing instances back with their `controls` (`Output`: one file, atomically, in the input's
format), and for YAML a round trip that keeps the file.

A YAML input is read again with ruamel.yaml's round-trip loader, each document gets its new
`controls` (where the key was, else before `episode`/`extra`, else last: `run.with_controls`), and
it is written back: comments, key order, quoting, flow style and indentation stay as the harness
wrote them. The round-trip loader builds only mappings, sequences and scalars (ruamel >= 0.18 has no
unsafe constructor on this path), and what it wrote is read back with the reader `check` uses and
compared with what preflight decided: on any difference (or a file the round trip cannot read) the
instances are written by PyYAML's safe dumper instead, as before comments were kept. So the output
never differs in data from the decision, only in layout.
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import IO, Any, Callable, Mapping, Sequence

import yaml

from litmus_rules.atomic import AtomicFile, copy_file

__all__ = ["BlockDumper", "Output", "dump_yaml", "guess_indent", "kind_of_file", "round_trip", "with_controls"]

# Other line breaks (CR, NEL, LS, PS) and a BOM do not survive a block or single quotes with
# allow_unicode: only double quotes escape them. Everything else multi-line reads best as `|`.
_NEEDS_ESCAPES = "\r\x85\u2028\u2029\ufeff"


class BlockDumper(yaml.SafeDumper):
    """The safe dumper, with multi-line strings (echoed transcripts) as `|` blocks an auditor can
    read, and no anchors (positive and compliance share one run; each is written out in full)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    if any(c in text for c in _NEEDS_ESCAPES):
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


BlockDumper.add_representer(str, _represent_str)


def dump_yaml(doc: Any, first: bool) -> str:
    """One instance as PyYAML writes it (the fallback, and what a new file is made of)."""
    return yaml.dump(doc, Dumper=BlockDumper, sort_keys=False, allow_unicode=True, explicit_start=not first, width=100)


_KEY_ONLY = re.compile(r"""^(?:"[^"]*"|'[^']*'|[^\s#'"][^#]*?)\s*:\s*(?:#.*)?$""")
_BLOCK_SCALAR = re.compile(r""":\s*[|>][-+0-9]*\s*(?:#.*)?$""")


def guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) of a YAML text, as ruamel's `indent()` takes
    them: read from the first nested mapping and the first block sequence under a key, skipping
    the contents of block scalars (a `- ` inside a `|` text is no sequence). Default (2, 2, 0)."""
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    parent: int | None = None  # the indent of the previous line when it was `key:` alone
    block: int | None = None  # inside a block scalar of a key at this indent
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if block is not None:
            if not stripped.strip() or indent > block:
                continue
            block = None
        if not stripped.strip() or stripped.startswith("#"):
            continue
        if parent is not None and indent > parent:
            if stripped.startswith("- ") and sequence is None:
                item = stripped[2:]
                sequence = (indent + 2 + len(item) - len(item.lstrip(" ")) - parent, indent - parent)
            elif not stripped.startswith("-") and mapping is None:
                mapping = indent - parent
        if mapping is not None and sequence is not None:
            break
        content = stripped[2:].lstrip(" ") if stripped.startswith("- ") else stripped
        parent = (indent + len(stripped) - len(content)) if _KEY_ONLY.match(content) else None
        if _BLOCK_SCALAR.search(stripped):
            block = indent + len(stripped) - len(content)
    seq, offset = sequence if sequence is not None else (mapping or 2, 0)
    return mapping or 2, max(seq, offset + 2), offset


def _fresh(value: Any) -> Any:
    """`value` as new ruamel nodes: nothing shared (no anchors), strings styled as `BlockDumper` does."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

    if isinstance(value, Mapping):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _fresh(v)
        return out
    if isinstance(value, list):
        return CommentedSeq(_fresh(v) for v in value)
    if isinstance(value, str) and any(c in value for c in _NEEDS_ESCAPES):
        return DoubleQuotedScalarString(value)
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def _place(doc: Any, controls: Mapping[str, Any]) -> None:
    """Set `controls` in a round-trip document where `run.with_controls` puts it."""
    old = doc.get("controls")
    if isinstance(old, dict):  # a run kept as it was (a harness run) keeps its node, comments and style
        names = {("null" if k is None else k): k for k in old}  # `null:` is the key "null" to `check`
        for name, key in names.items():
            if name not in controls:
                del old[key]
        for name, run in controls.items():
            if name not in names or old[names[name]] != run:
                if name in names and names[name] != name:
                    del old[names[name]]
                old[name] = _fresh(run)
        for name in controls:  # in preflight's order, as every written file has them
            # a kept `null:` run is still under its YAML key (None), a replaced one under "null"
            old.move_to_end(name if name in old else names.get(name, name))
        return
    new = _fresh(controls)
    if "controls" in doc:
        doc["controls"] = new
        return
    keys = list(doc)
    at = next((i for i, k in enumerate(keys) if k in ("episode", "extra")), len(keys))
    doc.insert(at, "controls", new)


def _represent_null(representer: Any, _: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")  # as PyYAML writes it, not empty


def round_trip(text: str, controls: Sequence[Mapping[str, Any]],
               read_back: Callable[[str], list[Any] | None], expected: Sequence[Any]) -> str | None:
    """`text` (a YAML stream of instances) with each document's `controls` replaced, in the layout
    of `text`; None when the round trip does not give exactly `expected` once read back (by
    `read_back`, the reader `check` uses) or cannot read the text."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 2**31 - 1  # never fold: a long line of the input stays one line
    rt.allow_unicode = True
    rt.brace_single_entry_mapping_in_flow_sequence = True  # `[{value: X}]` stays so, not `[value: X]`
    rt.representer.add_representer(type(None), _represent_null)
    mapping, sequence, offset = guess_indent(text)
    rt.indent(mapping=mapping, sequence=sequence, offset=offset)
    try:
        docs = [d for d in rt.load_all(text) if d is not None]
        if len(docs) != len(controls) or not all(isinstance(d, dict) for d in docs):
            return None
        for doc, new in zip(docs, controls):
            _place(doc, new)
        out = io.StringIO()
        rt.dump_all(docs, out)
    except (YAMLError, ValueError, TypeError, AttributeError, IndexError, KeyError, RecursionError):
        return None  # a stream the round trip cannot take: the safe dumper writes it
    written = out.getvalue()
    return written if read_back(written) == list(expected) else None


# ---- one output file ---------------------------------------------------------------------------------


def with_controls(instance: Mapping[str, Any], controls: dict[str, Any]) -> dict[str, Any]:
    """The instance with `controls` replaced by the ones preflight decided on (which include the
    harness's runs it kept), keeping key order: where it was, else before `episode`/`extra`, else last."""
    keys = [k for k in instance if k != "controls"]
    at = list(instance).index("controls") if "controls" in instance else next(
        (i for i, k in enumerate(keys) if k in ("episode", "extra")), len(keys))
    keys.insert(at, "controls")
    return {k: controls if k == "controls" else instance[k] for k in keys}


def kind_of_file(path: str) -> str:
    """How an input file is written back: yaml, json (one object), json-array or jsonl; by its
    extension, else sniffed as the loader does (JSONL when the first line is a whole object)."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".yaml", ".yml", ".jsonl"):
        return "jsonl" if ext == ".jsonl" else "yaml"
    with open(path, "rb") as fh:
        head = fh.read(1 << 16).lstrip(b"\xef\xbb\xbf \t\r\n")
    first = head.split(b"\n", 1)[0].strip()
    if ext != ".json" and first.startswith(b"{") and first.endswith(b"}"):
        try:
            return "jsonl" if isinstance(json.loads(first), dict) else "json"
        except ValueError:
            pass
    if ext != ".json" and not head.startswith((b"{", b"[")):
        return "yaml"
    return "json-array" if head.startswith(b"[") else "json"


def _json(doc: Any, indent: int | None) -> str:
    text = json.dumps(doc, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON allows "\ud800"): only an escape can carry it
        text = json.dumps(doc, ensure_ascii=True, indent=indent)
    return text


class Output:
    """One output file, written atomically (`atomic.AtomicFile`: an interrupted run never leaves a
    truncated file; a new file gets the umask's mode, an existing one keeps its own). `path=None`
    streams JSONL to `stream`. A YAML file is written on commit, as a round trip of its `source`
    (`writeback.py`: comments and layout kept)."""

    def __init__(self, path: str | None, kind: str, stream: IO[str] | None = None, source: str | None = None) -> None:
        self.path, self.kind, self.count, self.source = path, kind, 0, source
        self.yaml_docs: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (instance with controls, controls)
        self.file: AtomicFile | None = None
        if path is None:
            assert stream is not None
            self.fh = stream
            return
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.file = AtomicFile(path)
        self.fh = self.file.open()

    def add(self, doc: dict[str, Any], controls: dict[str, Any] | None = None) -> None:
        if self.kind == "jsonl":
            self.fh.write(_json(doc, None) + "\n")
        elif self.kind == "json":
            self.fh.write(_json(doc, 2) + "\n")
        elif self.kind == "json-array":
            self.fh.write(("[\n  " if self.count == 0 else ",\n  ") + _json(doc, 2).replace("\n", "\n  "))
        else:
            self.yaml_docs.append((doc, controls if controls is not None else doc.get("controls", {})))
        self.count += 1

    def commit(self, copy_of: str | None = None) -> None:
        """Move into place; `copy_of` replaces the content with that file's bytes, unchanged."""
        if self.file is None:
            self.fh.flush()
            return
        try:
            if copy_of is not None:
                self.file.abort()
                copy_file(copy_of, self.file.path)
                return
            if self.kind == "json-array":
                self.fh.write("\n]\n" if self.count else "[]\n")
            elif self.kind == "yaml":
                self.fh.write(self._yaml_text())
        except BaseException:
            self.abort()
            raise
        self.file.commit()

    def _yaml_text(self) -> str:
        if self.source is not None and self.yaml_docs:
            kept = _round_trip(self.source, self.yaml_docs)
            if kept is not None:
                return kept
        return "".join(dump_yaml(doc, i == 0) for i, (doc, _) in enumerate(self.yaml_docs))

    def abort(self) -> None:
        if self.file is not None:
            self.file.abort()


def _round_trip(source: str, docs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> str | None:
    """The source YAML file with the new controls, its comments and layout kept; None when that
    cannot be done exactly (`writeback.round_trip`)."""
    from litmus_rules.io.load import parse_yaml_text

    try:
        with open(source, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("\ufeff"):
        text = text[1:]

    def read(written: str) -> list[Any] | None:
        loaded = list(parse_yaml_text(source, written))
        return None if any(d.error is not None for d in loaded) else [d.data for d in loaded]

    originals = read(text)
    if originals is None or len(originals) != len(docs):
        return None
    controls = [c for _, c in docs]
    expected = [with_controls(original, c) for original, c in zip(originals, controls)]
    return round_trip(text, controls, read, expected)


