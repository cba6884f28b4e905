"""Importers: read what harnesses already write (Inspect AI, AgentDojo, InjecAgent, garak, MCP,
Agent Skills, OpenAI/Anthropic chats) as episode/1.1, one module per format. The contract of a
format module is in `_contract.py`; this module is the framework around them:

- `FORMATS`: format name -> its module, imported only when used;
- `iter_records(format, paths, options)`: every record of the inputs, in input order, as a
  `Record` holding either an episode or a located problem (the command line prints the problems as
  ERRORs and goes on); `read(format, path, **options)`: the episodes only, raising at the first
  problem (the Python entry point the issue names);
- on every episode: `--detector` and `--run` merged (`merge_detector`), `extra.import` provenance
  added, the episode checked against the episode/1.1 schema and normalised (`io/wire.py`), so that
  an importer bug is a located ERROR, never a silently wrong episode.

Merging `--detector FILE` (YAML or JSON, read safely as episodes are, one mapping; a file whose only
key is `detector` is that mapping): objects merge key by key, recursively; any other value (a
string, a number, a list such as `signals` or `positive_labels`) replaces the importer's. Every
`unknowns` entry whose path the file supplies (the path itself or a path under it) is removed: the
user has now stated that fact. `--run KEY=VALUE` sets `run.KEY` (a string) the same way. A harness
control run with a `label` and no `fired` gets `fired: label in positive_labels` once the merged
detector states `positive_labels` (a control whose label is invalid stays without `fired`).
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any

import attrs

from litmus_rules import diagnostics
from litmus_rules.errors import LitmusConfigError, LitmusError, describe_fault
from litmus_rules.io import wire
from litmus_rules.io.importers._contract import Imported, Options, Problem
from litmus_rules.io.inputs import Unit
from litmus_rules.io.load import iter_unit, validate_episode

__all__ = [
    "FORMATS", "ImportProblemError", "ImportUsageError", "Options", "Record", "iter_records",
    "load_detector_file", "make_options", "merge_detector", "read",
]

# name -> module under litmus_rules.io.importers; a module is imported the first time it is used.
_MODULES = {
    "inspect": "inspect",
    "agentdojo": "agentdojo",
    "injecagent": "injecagent",
    "garak": "garak",
    "mcp": "mcp",
    "skills": "skills",
    "openai": "openai",
    "anthropic": "anthropic",
}

BAD_RECORD = diagnostics.code_for("import-bad-record")
INVALID_EPISODE = diagnostics.code_for("import-invalid-episode")
NOT_RECORDED = diagnostics.code_for("import-fact-not-recorded")
UNREADABLE = diagnostics.code_for("unreadable-input")
MAX_CACHED_TEXT = 64 * 1024  # a subtree larger than this (as JSON) is validated each time, not kept by value
MAX_DETECTOR_FILE = 2**20  # a detector fragment is small; a bigger file is a mistake (a whole log)
# The order keys are written in: the order of docs/format.md, so imported files read the same way.
_KEY_ORDER = ("litmus", "id", "benchmark", "run", "context", "detector", "canaries", "provenance",
              "controls", "episode", "unknowns", "extra")


class ImportUsageError(LitmusConfigError):
    """Misuse: an unknown format or option, a `--detector` file that cannot be used (exit 2)."""


class ImportProblemError(LitmusError):
    """`read` met a record it cannot import; `source`, `position` and `code` locate it."""

    def __init__(self, source: str, position: str, message: str, code: str) -> None:
        super().__init__(f"{source}: {position}: {message}", code=code)
        self.source, self.position = source, position


class _Formats(Mapping[str, ModuleType]):
    """Format name -> module, imported on first access (`litmus-rules import inspect` never imports
    the zstandard reader of another format, and a missing optional module fails only when used)."""

    def __getitem__(self, name: str) -> ModuleType:
        if name not in _MODULES:
            raise KeyError(name)
        return importlib.import_module(f"{__name__}.{_MODULES[name]}")

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


FORMATS: Mapping[str, ModuleType] = _Formats()


@attrs.frozen
class Record:
    """One record of the input: an episode (valid against episode/1.1, normalised) or a problem."""

    source: str  # the input path
    position: str  # within it: "line 12", "samples/x_epoch_1.json", "item 3", ...
    episode: dict[str, Any] | None = None
    code: str | None = None  # the problem's diagnostic code
    message: str | None = None

    @property
    def location(self) -> str:
        return f"{self.source}:{self.position}" if self.position else self.source

    def render(self) -> str:
        """`file:position: error[CODE]: message`, the form every located diagnostic takes."""
        return f"{self.location}: {diagnostics.inline(self.code or BAD_RECORD, self.message or '')}"


def format_module(name: str) -> ModuleType:
    try:
        return FORMATS[name]
    except KeyError:
        raise ImportUsageError(f"unknown import format `{name}`; the formats are: {', '.join(FORMATS)}") from None
    except ImportError as exc:
        raise ImportUsageError(f"the `{name}` importer is not available in this installation: {exc}") from None


def make_options(
    module: ModuleType,
    detector: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    run: Mapping[str, Any] | None = None,
    extra: Mapping[str, str] | None = None,
) -> Options:
    """Options checked against the module: known `--option` keys, a detector where the format
    records none. `detector` may be a mapping or the path of a YAML/JSON file."""
    if detector is not None and not isinstance(detector, Mapping):
        detector = load_detector_file(os.fspath(detector))
    detector = dict(detector or {})
    extra = {str(k): str(v) for k, v in (extra or {}).items()}
    known = getattr(module, "OPTIONS", None)
    if known is not None:
        unknown = sorted(set(extra) - set(known))
        if unknown:
            listed = ", ".join(f"{k} ({h})" for k, h in known.items()) or "none"
            raise ImportUsageError(f"the {module.NAME} importer has no option `{unknown[0]}`; its options: {listed}")
    if not getattr(module, "DETECTOR_RECORDED", True) and "channel" not in detector:
        raise ImportUsageError(
            f"the {module.NAME} format records no detector (how the harness scores): give --detector FILE "
            "with at least `channel` (and the signals the scorer matches on)")
    bad_run = [k for k, v in (run or {}).items() if not k or not isinstance(v, (str, int, float, bool))]
    if bad_run:
        raise ImportUsageError(f"--run takes KEY=VALUE with a non-empty key and a scalar value, got `{bad_run[0]}`")
    return Options(detector=detector, run=dict(run or {}), extra=extra)


def load_detector_file(path: str) -> dict[str, Any]:
    """A `--detector` file: one YAML or JSON mapping, read as episodes are (safe, JSON-shaped, size
    and depth limits). A mapping whose only key is `detector` is unwrapped."""
    try:
        if os.path.getsize(path) > MAX_DETECTOR_FILE:
            raise ImportUsageError(f"--detector `{path}`: over the {MAX_DETECTOR_FILE // 1024} KiB limit for a detector file")
    except OSError as exc:
        raise ImportUsageError(f"--detector: cannot read `{path}`: {exc.strerror or exc}") from None
    docs = iter_unit(Unit(path), check=False)
    first = next(docs, None)
    if first is None or first.error is not None:
        raise ImportUsageError(f"--detector: {first.error if first is not None else path + ': empty'}")
    if next(docs, None) is not None:
        raise ImportUsageError(f"--detector `{path}`: one mapping expected, found several documents")
    data = first.data
    assert data is not None
    if set(data) == {"detector"} and isinstance(data["detector"], dict):
        data = data["detector"]
    return data


def merge_detector(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """`overlay` deep-merged into `base`: objects key by key, anything else replaced."""
    out = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_detector(out[key], value)
        else:
            out[key] = value
    return out


def _supplied(prefix: str, overlay: Mapping[str, Any]) -> Iterator[str]:
    """JSON pointers of the leaves (and sub-objects) an overlay states."""
    for key, value in overlay.items():
        here = f"{prefix}/{str(key).replace('~', '~0').replace('/', '~1')}"
        yield here
        if isinstance(value, Mapping):
            yield from _supplied(here, value)


def _drop_unknowns(episode: dict[str, Any], supplied: Iterable[str]) -> None:
    known = tuple(supplied)
    unknowns = episode.get("unknowns")
    if not known or not isinstance(unknowns, list):
        return
    kept = [u for u in unknowns
            if not (isinstance(u, dict) and any(u.get("path") == p or str(u.get("path")).startswith(p + "/") for p in known))]
    if kept:
        episode["unknowns"] = kept
    else:
        episode.pop("unknowns")


def _derive_fired(episode: dict[str, Any]) -> None:
    detector = episode.get("detector") or {}
    positives, invalid = detector.get("positive_labels"), detector.get("invalid_labels") or []
    controls = episode.get("controls")
    if not isinstance(positives, list) or not isinstance(controls, dict):
        return
    derived = {}
    for name, run in controls.items():
        if (isinstance(run, dict) and run.get("source") == "harness" and "fired" not in run
                and isinstance(run.get("label"), str) and run["label"] not in invalid):
            derived[name] = {**run, "fired": run["label"] in positives}  # a copy: importers may share runs
    if derived:
        episode["controls"] = {**controls, **derived}


# Subtrees importers often share between episodes (one sample, several scorers; one manifest, many
# samples). Validity of a subtree depends only on where it sits, so one already validated at the
# same place, as the same object, is not validated again: schema validation is most of an import.
_SHARED = (("context", "tools"), ("context", "messages"), ("episode", "transcript"), ("episode", "dispatch"),
           ("controls", "null", "transcript"), ("controls", "null", "dispatch"), ("unknowns",), ("detector",))
# What stands in for a subtree already validated: valid at its place whatever else the episode holds.
_PLACEHOLDER: dict[tuple[str, ...], Any] = {("detector",): {"channel": "dispatch"}}


class _Validated:
    """Subtrees already validated at a place of `_SHARED`, by identity (the object is kept alive,
    so that its id is not reused by another object while it is here) and by value (its JSON text:
    every exchange of a chat log repeats its `tools`, every episode the same detector and notes).
    At most `size` entries, least recently used dropped. Importers never change what they yielded."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def seen(self, path: tuple[str, ...], obj: Any) -> tuple[bool, str | None]:
        """(validated already, the JSON text when it had to be computed)."""
        key: tuple[Any, ...] = (path, id(obj))
        if self.items.get(key) is obj:
            self.items.move_to_end(key)
            return True, None
        text = json.dumps(obj, default=repr)
        if len(text) <= MAX_CACHED_TEXT and (path, text) in self.items:
            self.items.move_to_end((path, text))
            self._put((path, id(obj)), obj)
            return True, text
        return False, text

    def add(self, path: tuple[str, ...], obj: Any, text: str | None) -> None:
        self._put((path, id(obj)), obj)
        if text is not None and len(text) <= MAX_CACHED_TEXT:
            self._put((path, text), obj)

    def _put(self, key: tuple[Any, ...], obj: Any) -> None:
        self.items[key] = obj
        while len(self.items) > self.size:
            self.items.popitem(last=False)


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _replaced(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """`doc` with the value at `path` replaced, copying only the objects on the path."""
    head, *rest = path
    return {**doc, head: _replaced(doc[head], tuple(rest), value) if rest else value}


def _schema_error(episode: dict[str, Any], source: str, cache: _Validated | None) -> Any:
    skeleton = episode
    fresh: list[tuple[tuple[str, ...], Any, str | None]] = []
    for path in _SHARED:
        value = _at(episode, path)
        if not isinstance(value, (list, dict)):
            continue
        known, text = cache.seen(path, value) if cache is not None else (False, None)
        if known:
            skeleton = _replaced(skeleton, path, _PLACEHOLDER.get(path, type(value)()))
        else:
            fresh.append((path, value, text))
    error = validate_episode(skeleton, source=source)
    if error is None and cache is not None:
        for path, value, text in fresh:
            cache.add(path, value, text)
    return error


def finish(module: ModuleType, imported: Imported, source: str, options: Options,
           cache: _Validated | None = None) -> Record:
    """An importer's episode as the framework hands it out: options merged, provenance added,
    checked against the 1.1 schema and normalised; or the located problem that stops it."""
    episode = dict(imported.episode)
    position = imported.position
    if options.detector:
        episode["detector"] = merge_detector(episode.get("detector") or {}, options.detector)
        _drop_unknowns(episode, _supplied("/detector", options.detector))
    if options.run:
        episode["run"] = {**(episode.get("run") or {}), **options.run}
        _drop_unknowns(episode, _supplied("/run", options.run))
    _derive_fired(episode)
    extra = dict(episode.get("extra") or {})
    extra["import"] = {"format": module.NAME, "source": source, "position": position, "version": module.VERSION}
    episode["extra"] = extra
    episode = {**{k: episode[k] for k in _KEY_ORDER if k in episode}, **episode}
    detector = episode.get("detector")
    if isinstance(detector, dict) and "channel" not in detector:
        note = next((u.get("note") for u in episode.get("unknowns") or []
                     if isinstance(u, dict) and u.get("path") == "/detector/channel"), None)
        message = diagnostics.message(NOT_RECORDED, path="detector.channel",
                                      note=note or f"the {module.NAME} importer found no scorer it can describe")
        return Record(source, position, code=NOT_RECORDED, message=message)
    error = _schema_error(episode, source, cache)
    if error is not None:
        where = f" (at {error.pointer})" if error.pointer else ""
        detail = f"{error.message}{where}"
        return Record(source, position, code=INVALID_EPISODE, message=diagnostics.message(INVALID_EPISODE, detail=detail))
    try:
        normal = wire.normalise(episode)
    except wire.WireError as exc:
        detail = f"{exc.message} (at {wire.pointer(exc.path)})"
        return Record(source, position, code=INVALID_EPISODE, message=diagnostics.message(INVALID_EPISODE, detail=detail))
    return Record(source, position, episode=dict(normal))


def _problem(source: str, problem: Problem) -> Record:
    code = diagnostics.code_for(problem.title) if problem.title else BAD_RECORD
    return Record(source, problem.position, code=code, message=problem.message)


def _expand(module: ModuleType, paths: Iterable[str | os.PathLike[str]]) -> Iterator[str]:
    """Each input, a folder replaced by its files of the format when the format names its extensions."""
    extensions = tuple(e.lower() for e in getattr(module, "EXTENSIONS", ()))
    for raw in paths:
        path = os.fspath(raw)
        if not extensions or not os.path.isdir(path):
            yield path
            continue
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [os.path.join(root, f) for f in files if not f.startswith(".") and f.lower().endswith(extensions)]
        if not found:
            yield path  # the format module says what it expected there
        yield from sorted(found)


def iter_records(format: str, paths: Iterable[str | os.PathLike[str]], options: Options | None = None) -> Iterator[Record]:
    """Every record of every input, lazily and in input order; bad input never raises here (an
    unknown format does: it is misuse, known before anything is read). Episodes may share
    sub-objects (one sample's messages across its scorers): copy one before changing it."""
    module = format_module(format)
    options = options if options is not None else make_options(module)
    cache = _Validated()
    for source in _expand(module, paths):
        if not os.path.exists(source):
            yield Record(source, "", code=UNREADABLE, message=f"no such file or directory: `{source}`")
            continue
        produced = module.records(source, options)
        try:
            for item in produced:
                if isinstance(item, Problem):
                    yield _problem(source, item)
                else:
                    yield finish(module, item, source, options, cache)
        except OSError as exc:
            yield Record(source, "", code=UNREADABLE,
                         message=diagnostics.message(UNREADABLE, path=source, reason=exc.strerror or exc))
        except (RecursionError, MemoryError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            # An importer that trips over input it did not expect ends that input, located, not the run.
            yield Record(source, "", code=BAD_RECORD,
                         message=f"the {module.NAME} importer could not read the rest of this input: {describe_fault(exc)}")
        finally:
            close = getattr(produced, "close", None)
            if close is not None:
                close()


def read(
    format: str,
    path: str | os.PathLike[str],
    *,
    detector: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    run: Mapping[str, Any] | None = None,
    **options: str,
) -> Iterator[dict[str, Any]]:
    """The episodes of one input, as `litmus-rules import` writes them. Format options are keyword
    arguments (`read("inspect", log, null_control="kind=control", link="group")`). The first record
    that cannot be imported raises `ImportProblemError` (use `iter_records` to go on past it)."""
    module = format_module(format)
    opts = make_options(module, detector, run, options)
    for record in iter_records(format, [path], opts):
        if record.episode is None:
            raise ImportProblemError(record.source, record.position, record.message or "", record.code or BAD_RECORD)
        yield copy.deepcopy(record.episode)  # episodes of one input share sub-objects; yours are your own
