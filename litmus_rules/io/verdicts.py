"""Reading verdict files (what `check --format jsonl` or `--format json` wrote) for `report`: one
streaming pass, in 1 MiB chunks, hashed on the side, each line parsed on its own so that a bad line
is a located error and memory stays flat however many verdicts there are."""

from __future__ import annotations

import collections
import concurrent.futures as cf
import itertools
import json
import sys
from typing import Any, BinaryIO, Callable, Iterator

from litmus_rules.diagnostics import code_for
from litmus_rules.errors import FactsError
from litmus_rules.interrupts import deferred

try:  # orjson parses a verdict line 2-3x faster; json is the fallback and gives the error messages
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency, but a vendored install may lack it
    _fast_loads = json.loads


def loads(data: bytes) -> Any:
    """One verdict line or document. orjson refuses what `check` may legitimately write (a lone
    surrogate's `\\ud800` escape, an integer past 64 bits): json decides those, and words errors."""
    try:
        return _fast_loads(data)
    except ValueError:
        return json.loads(data)


def read_verdicts(path: str, digest: Any = None) -> Iterator[dict[str, Any]]:
    """The verdicts of one file (`-`: stdin): JSON Lines, or one `check --format json` document.
    `digest` (a hashlib object) sees every byte read, so an input is hashed in the same pass."""
    if path == "-":
        fh: BinaryIO = sys.stdin.buffer
    else:
        try:
            fh = open(path, "rb")
        except OSError as exc:
            raise FactsError(f"cannot read `{path}`: {exc.strerror or exc}", source=path,
                             code=code_for("unreadable-input")) from None
    try:
        with _Hashing(digest) as update:
            lines = _lines(fh, update)
            first = next(lines, b"")
            if first.strip() == b"{":  # an indented `check --format json` document
                try:
                    doc = loads(b"\n".join([first, *lines]))
                except (ValueError, UnicodeDecodeError) as exc:
                    raise FactsError(f"not a JSON document: {exc}", source=path,
                                     code=code_for("unparseable-input")) from None
                verdicts = doc.get("verdicts") if isinstance(doc, dict) else None
                if not isinstance(verdicts, list):
                    raise FactsError("a JSON document without `verdicts`", source=path, code=code_for("not-an-object"))
                yield from (v for v in verdicts if isinstance(v, dict))
                return
            line_no = 0
            for line in itertools.chain((first,), lines):
                line_no += 1
                if not line or line.isspace():
                    continue
                try:
                    v = loads(line)
                except (ValueError, UnicodeDecodeError) as exc:
                    raise FactsError(f"not a JSON verdict: {exc}", source=path, line=line_no,
                                     code=code_for("unparseable-input")) from None
                if not isinstance(v, dict) or "verdict" not in v:
                    raise FactsError("not a verdict object (no `verdict` key)", source=path, line=line_no,
                                     code=code_for("not-an-object"))
                yield v
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


_CHUNK = 1 << 20


def _lines(fh: BinaryIO, update: Callable[[bytes], None]) -> Iterator[bytes]:
    """The lines of a binary stream (split on `\\n`, without it), read in 1 MiB chunks, every chunk
    given to `update` first. A line longer than a chunk is gathered from pieces, not re-copied."""
    pieces: list[bytes] = []
    while chunk := fh.read(_CHUNK):
        update(chunk)
        lines = chunk.split(b"\n")
        if len(lines) == 1:
            pieces.append(chunk)
            continue
        if pieces:
            pieces.append(lines[0])
            lines[0] = b"".join(pieces)
            pieces = []
        pieces.append(lines.pop())
        yield from lines
    rest = b"".join(pieces)
    if rest:
        yield rest


class _Hashing:
    """Feeds chunks to a hashlib object on a second thread: hashlib lets go of the GIL on large
    updates, so hashing an input costs the report no time on a machine with a second core. Order
    is kept (one thread), and at most a few chunks wait."""

    def __init__(self, digest: Any) -> None:
        self.digest = digest
        self.pool: cf.ThreadPoolExecutor | None = None
        self.waiting: collections.deque[cf.Future[None]] = collections.deque()

    # Each call into the pool is `deferred()` (interrupts.py): a signal raised inside its code could
    # leave a lock held that `shutdown` then waits for.

    def __enter__(self) -> Callable[[bytes], None]:
        if self.digest is None:
            return lambda chunk: None
        with deferred():
            self.pool = cf.ThreadPoolExecutor(1, thread_name_prefix="litmus-report-hash")
        return self.update

    def update(self, chunk: bytes) -> None:
        assert self.pool is not None
        with deferred():
            self.waiting.append(self.pool.submit(self.digest.update, chunk))
            if len(self.waiting) > 4:
                self.waiting.popleft().result()

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:
            with deferred():
                self.pool.shutdown(wait=True)
                for future in self.waiting:
                    future.result()
