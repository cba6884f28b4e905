"""Files kept between runs in the user's cache folder: what a cold start would otherwise rebuild
(the LALR parser, the confusables table). Whatever is stored is data read back with `json.loads`,
never a pickle, so a file that is damaged or planted is a failed read (the value is built again),
never code run. A file is only read from a folder that is the user's own and that no one else can
write (mode 0700), and only if it is a regular file of the same owner; writes are atomic.

`LITMUS_RULES_CACHE_DIR` moves the folder; set to an empty string, it turns the cache off.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

CACHE_ENV = "LITMUS_RULES_CACHE_DIR"
MAX_BYTES = 8 * 2**20  # far above anything stored here: a larger file is not ours


def cache_dir() -> Path | None:
    """Where cached files are kept: `$LITMUS_RULES_CACHE_DIR`, else the XDG cache folder; None: off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return Path(configured) if configured.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "litmus-rules"


def private_folder(folder: Path, create: bool) -> bool:
    """Whether `folder` is a directory of this user that no one else can write (made if `create`)."""
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def read_bytes(path: Path) -> bytes | None:
    """The content of a cached file, or None when it is absent, too large, or not safely ours."""
    if not private_folder(path.parent, create=False):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            raw = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    return raw if len(raw) <= MAX_BYTES else None


def write_text(path: Path, text: str) -> None:
    """Store atomically (a concurrent reader sees the old file or the new one, never half of one);
    any failure (a read-only home, a full disk) only means the next run builds the value too."""
    if not private_folder(path.parent, create=True):
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".cache-", dir=path.parent)  # mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
