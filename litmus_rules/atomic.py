"""The one way the package writes a file: atomically, keeping the file's mode.

The text goes to a temporary file beside the target, which is moved into place on commit
(`os.replace`): an interrupted or failed write leaves the old file (or none), never half a file and
never the temporary one. The new file gets the mode the old one had, or, for a new file, the mode
any program's new file gets (0666 less the umask) -- not `mkstemp`'s 0600. A symlink is followed
(the link stays, its target is replaced). An existing non-regular target (`/dev/null`, a FIFO) is
written in place: renaming over it would replace a device by a file. Not kept: the owner, ACLs and
extended attributes of an existing file, and hard links to it (the new file is a new inode).

Base layer: imports nothing of the package.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from typing import IO, Any, Iterable, Iterator

__all__ = ["AtomicFile", "copy_file", "new_file_mode", "write_text"]


def new_file_mode() -> int:
    """0666 less the process's umask: the mode `open(path, "w")` would give a new file."""
    try:  # Linux: read it without changing it (os.umask is a set-and-return, racy with threads)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


class AtomicFile:
    """A file being written: `open()` it, write to `.fh`, then `commit()` (or `abort()`). As a
    context manager: committed when the block ends normally, aborted when it raises."""

    def __init__(self, path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8",
                 errors: str | None = "strict", newline: str | None = None) -> None:
        if mode not in ("w", "wb"):
            raise ValueError("AtomicFile writes a whole file: mode is `w` or `wb`")
        self.path = os.path.realpath(path) if os.path.islink(path) else os.fspath(path)
        self.binary = mode == "wb"
        self.options: dict[str, Any] = {} if self.binary else {"encoding": encoding, "errors": errors, "newline": newline}
        self.tmp: str | None = None
        self.fh: IO[Any] | None = None

    def open(self) -> IO[Any]:
        """Create the temporary file (or open a non-regular target in place). OSError on failure."""
        try:
            st: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "it is a folder", self.path)
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.fh = open(self.path, "wb" if self.binary else "w", **self.options)
            return self.fh
        mode = stat.S_IMODE(st.st_mode) if st is not None else new_file_mode()
        folder = os.path.dirname(os.path.abspath(self.path))
        fd, self.tmp = tempfile.mkstemp(prefix=".litmus-", suffix=".tmp", dir=folder)
        try:
            os.fchmod(fd, mode)
            self.fh = os.fdopen(fd, "wb" if self.binary else "w", **self.options)
        except BaseException:
            os.close(fd)
            self._remove()
            raise
        return self.fh

    def commit(self) -> None:
        """Close and move into place; on failure nothing is left behind and the OSError propagates."""
        assert self.fh is not None, "commit() before open()"
        try:
            self.fh.close()  # the close's flush can fail (ENOSPC)
            if self.tmp is not None:
                os.replace(self.tmp, self.path)
                self.tmp = None
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        if self.fh is not None:
            with contextlib.suppress(OSError, ValueError):
                self.fh.close()
        self._remove()

    def _remove(self) -> None:
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None

    def __enter__(self) -> IO[Any]:
        return self.open()

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


def write_text(path: str | os.PathLike[str], text: str | Iterable[str], *, encoding: str = "utf-8",
               errors: str = "strict", newline: str | None = None) -> None:
    """Write `text` (or its chunks) to `path` atomically."""
    with AtomicFile(path, encoding=encoding, errors=errors, newline=newline) as fh:
        for chunk in _chunks(text):
            fh.write(chunk)


def copy_file(source: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Copy `source`'s bytes to `path` atomically (the mode is `path`'s rule, not `source`'s)."""
    with open(source, "rb") as src, AtomicFile(path, "wb") as fh:
        shutil.copyfileobj(src, fh, 2**20)


def _chunks(text: str | Iterable[str]) -> Iterator[str]:
    if isinstance(text, str):
        yield text
    else:
        yield from text

