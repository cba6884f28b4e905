"""Writing a YAML file of instances back with their `controls`: a round trip that keeps the file.

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
import re
from typing import Any, Callable, Mapping, Sequence

import yaml

__all__ = ["BlockDumper", "dump_yaml", "guess_indent", "round_trip"]

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
            old.move_to_end(name)
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
    except (YAMLError, ValueError, TypeError, AttributeError, IndexError, RecursionError):
        return None  # a stream the round trip cannot take: the safe dumper writes it
    written = out.getvalue()
    return written if read_back(written) == list(expected) else None
