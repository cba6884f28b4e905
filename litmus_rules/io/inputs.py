"""Where episodes come from: the inputs named on the command line, folders walked, files cut into units.

Nothing here parses a document (that is `load`). This module decides *which* paths are read and
refuses, without opening them, the ones that must not be: a FIFO would hang the batch, `/dev/zero`
would fill memory, a symlinked folder that points at its own ancestor would walk forever. Each such
path becomes an ERROR entry (a `LoadedEpisode` with a located `FactsError`) in input order.
"""

from __future__ import annotations

import os
import stat
from typing import IO, Any, Iterable, Sequence

from litmus_rules import diagnostics
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import FactsError
from litmus_rules.io.origins import Origin, Origins
from litmus_rules.lang.records import field, record, replace

__all__ = ["LoadedEpisode", "Unit", "discover", "failed", "open_regular", "plan_units"]

EXTENSIONS = (".yaml", ".yml", ".json", ".jsonl")
STDIN = "<stdin>"

# Stable error codes (tests assert codes, not wording), from the one catalogue.
UNPARSEABLE = code_for("unparseable-input")  # not valid YAML/JSON/UTF-8, a duplicate key, an unsupported YAML tag
INVALID = code_for("schema-mismatch")  # parses, but does not match the episode schema
LIMIT = code_for("input-too-large")  # too large or too deep
NOT_AN_OBJECT = code_for("not-an-object")  # a document that is not a mapping
UNREADABLE = code_for("unreadable-input")  # a missing path, an I/O error, an input without any document
NOT_A_FILE = code_for("not-a-regular-file")  # a FIFO, a device, a socket: never opened
LOOP = code_for("folder-loop")  # a symlinked folder that leads back to one of its own ancestors
DUPLICATE_ID = code_for("duplicate-id")  # an id already used by an earlier episode of the batch


@record
class LoadedEpisode:
    """One document of the input: exactly one of `data` (a valid episode) and `error` is set."""

    source: str
    index: int
    line: int | None
    data: dict[str, Any] | None = None
    error: FactsError | None = None
    raw_id: str | None = field(default=None, repr=False)  # the id of an invalid document

    def __post_init__(self) -> None:
        if (self.data is None) == (self.error is None):
            raise ValueError("LoadedEpisode needs exactly one of data and error")

    @property
    def id(self) -> str | None:
        return self.data["id"] if self.data is not None else self.raw_id


def failed(source: str, index: int, message: str, code: str, line: int | None = None,
           doc_line: int | None = None) -> LoadedEpisode:
    error = FactsError(message, source=source, line=line, code=code)
    return LoadedEpisode(source, index, doc_line or line, error=error)


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class NotARegularFile(OSError):
    """An input that turned into a FIFO or a device between discovery and reading."""


def open_regular(path: str) -> IO[bytes]:
    """Open a regular file for reading in binary; anything else raises without blocking (opening a
    FIFO waits for a writer, unless non-blocking)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(_not_regular(path, mode).error.message)  # type: ignore[union-attr]
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text_file(path: str | os.PathLike[str], limit: int) -> str:
    """A rule or rule-test file as text: a FIFO or device raises instead of blocking, and a file
    over `limit` bytes raises before it is read whole. Raises OSError or UnicodeDecodeError."""
    with open_regular(os.fspath(path)) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"over the {limit:,}-byte limit for a rule file")
    return data.decode("utf-8")


def _not_regular(path: str, mode: int) -> LoadedEpisode:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return failed(path, 0, diagnostics.message(NOT_A_FILE, path=path, kind=kind), NOT_A_FILE)


def _walk(root: str) -> list[str | LoadedEpisode]:
    """Episode files under `root`, sorted by path; symlinked folders followed, a loop reported once
    per symlink that closes it. Hidden entries are skipped; a non-regular file is an error entry."""
    found: list[tuple[list[str], str | LoadedEpisode]] = []

    def add(path: str, item: str | LoadedEpisode) -> None:
        found.append((os.path.relpath(path, root).split(os.sep), item))

    top = os.stat(root)
    stack: list[tuple[str, tuple[tuple[int, int], ...]]] = [(root, ((top.st_dev, top.st_ino),))]
    while stack:
        folder, ancestors = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            add(folder, failed(folder, 0, f"cannot read: {e.strerror or e}", UNREADABLE))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                st = os.stat(entry.path)  # follows symlinks: what a read would reach
            except OSError as e:
                if entry.name.lower().endswith(EXTENSIONS) or entry.is_symlink():
                    add(entry.path, failed(entry.path, 0, f"cannot read: {e.strerror or e}", UNREADABLE))
                continue
            if stat.S_ISDIR(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if key in ancestors:
                    looping = diagnostics.message(LOOP, path=entry.path, target=os.path.realpath(entry.path))
                    add(entry.path, failed(entry.path, 0, looping, LOOP))
                else:
                    stack.append((entry.path, ancestors + (key,)))
            elif entry.name.lower().endswith(EXTENSIONS):
                add(entry.path, entry.path if stat.S_ISREG(st.st_mode) else _not_regular(entry.path, st.st_mode))
    found.sort(key=lambda pair: pair[0])
    return [item for _, item in found]


def discover(inputs: Iterable[str | os.PathLike[str]]) -> list[str | LoadedEpisode]:
    """Inputs in order, a directory replaced by its episode files (recursively, sorted by path,
    hidden entries skipped), `-` kept for stdin, and a path that cannot be used made an error."""
    found: list[str | LoadedEpisode] = []
    for item in (os.fspath(i) for i in inputs):  # (a generator: mypy cannot pick os.fspath's overload for `map`)
        if item == "-":
            found.append(item)
            continue
        try:
            st = os.stat(item)
        except OSError as e:
            missing = isinstance(e, FileNotFoundError)
            message = f"no such file or directory: `{item}`" if missing else f"cannot read `{item}`: {e.strerror or e}"
            found.append(failed(item, 0, message, UNREADABLE))
            continue
        if stat.S_ISREG(st.st_mode):
            found.append(item)
        elif not stat.S_ISDIR(st.st_mode):
            found.append(_not_regular(item, st.st_mode))
        else:
            files = _walk(item)
            found += files
            if not files:
                found.append(failed(item, 0, f"no episode files ({' '.join(EXTENSIONS)}) in `{item}`", UNREADABLE))
    return found


# ---- units of work: slices of the input that a worker process reads by itself ---------------------

# A unit's verdicts are built, sent back and held together (a verdict with its traces is about
# 100 KiB in memory), and a pool keeps two units per worker in flight: cap a unit by bytes and by
# documents, so that memory stays flat whatever the batch size and the episode size. Small enough
# to spread, large enough to amortise a unit's cost (a task, a file opened and seeked).
JSONL_CHUNK = 256 * 2**10  # bytes of JSONL per unit (a longer line ends its unit)
UNIT_DOCS = 32  # documents per unit


@record
class Unit:
    """A whole file, or a byte range of a JSONL file starting at a line boundary."""

    path: str
    start: int = 0
    stop: int | None = None  # None: to the end of the file
    first_line: int = 0  # lines before `start`
    first_index: int = 0  # documents before `start`
    label: str | None = None  # the name to report instead of `path` (standard input, spooled)
    # A preflighted copy: the file it was made from, which its verdicts name (`io/origins.py`)
    origin: Origin | None = None

    @property
    def name(self) -> str:
        return self.label if self.label is not None else self.path

    def location(self) -> str:
        """Where the unit starts, for a message about the whole unit."""
        return f"{self.name}:{self.first_line + 1}" if self.first_line else self.name


def plan_units(
    inputs: Sequence[str], chunk: int = JSONL_CHUNK, stdin_path: str | None = None, max_docs: int = UNIT_DOCS,
    origins: Origins | None = None, find_origins: bool = True,
) -> list[Unit | LoadedEpisode]:
    """The inputs as units, in order; a path that cannot be used stays an error entry. A JSONL file
    is cut at line boundaries into units of about `chunk` bytes and at most `max_docs` documents.
    Standard input (`-`) is read from `stdin_path`, where the caller spooled it. A file that
    preflight wrote carries the file it was made from (`Unit.origin`; `origins` finds it, each
    folder's manifest read once: a new `Origins` by default; `find_origins=False`: not looked for,
    for a caller that only counts or reads documents)."""
    out: list[Unit | LoadedEpisode] = []
    origins = origins if origins is not None else Origins()
    for item in discover(inputs):
        if item == "-":
            if stdin_path is None:
                raise ValueError("plan_units: `-` needs stdin_path")
            out.append(Unit(stdin_path, label=STDIN))
            continue
        if isinstance(item, LoadedEpisode):
            out.append(item)
            continue
        origin = origins.origin_of(item) if find_origins else None
        if not item.lower().endswith(".jsonl"):
            out.append(Unit(item, origin=origin))
            continue
        try:
            units = _jsonl_units(item, chunk, max(1, max_docs))
        except OSError:
            units = [Unit(item)]  # reading it again reports the error in input order
        out.extend(units if origin is None else [replace(u, origin=origin) for u in units])
    return out


def _jsonl_units(path: str, chunk: int, max_docs: int) -> list[Unit]:
    units: list[Unit] = []
    lines = docs = start = 0
    with open_regular(path) as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            block += fh.readline()  # end the unit at a line boundary
            cut, count = _first_docs(block, max_docs)
            if cut < len(block):  # more documents than a unit holds: the rest starts the next one
                block = block[:cut]
                fh.seek(start + cut)
            units.append(Unit(path, start, start + len(block), lines, docs))
            start += len(block)
            lines += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            docs += count
    if len(units) == 1:
        return [Unit(path)]
    return units or [Unit(path)]


def _first_docs(block: bytes, max_docs: int) -> tuple[int, int]:
    """Where the line that holds the `max_docs`-th document of `block` ends (the length of
    `block` when it holds fewer), and how many documents (non-blank lines) lie before it."""
    pos = count = 0
    while pos < len(block) and count < max_docs:
        end = block.find(b"\n", pos)
        end = len(block) if end < 0 else end + 1
        if block[pos:end].strip():
            count += 1
        pos = end
    return pos, count
