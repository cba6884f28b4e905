"""Where a preflighted copy came from: the manifest `preflight -o OUTDIR` writes beside its copies,
read when inputs are planned, so that a verdict's `source` names the file the user gave and its
`checked` the copy that was read.

One manifest per folder of copies (`.litmus-preflight.json`: hidden, so a folder walk never reads
it as an episode file). A copy is looked up only in its own folder's manifest: the lookup is
bounded (one file per folder, read once per run) and works whichever part of OUTDIR is checked (the
folder, a subfolder, one file). Preflight writes it through `write_manifests`, merged with what an
earlier preflight into the same folder recorded.

    {"litmus": "preflight-manifest/1",
     "files": {"ep.yaml": {"origin": "/abs/episodes/ep.yaml", "relative": "../episodes/ep.yaml",
                           "sha256": <the copy as written>, "origin_sha256": <the origin as read>,
                           "origin_size": 4404, "docs": 2, "lines": [[0, 4], [1, 40]]}}}

`lines`: runs of (first document index, its line in the origin), a line counting up by one per
document within a run (a JSONL file is one run); absent for a byte-for-byte copy (a file with an
unusable document), whose lines are the origin's. The origin is recorded twice: absolute (a check
from any working directory) and relative to the manifest's folder (a tree moved or checked out
elsewhere as a whole); the first that holds the recorded content wins, shown relative to the
working directory when it lies below it, else absolute.

Fail closed: a copy is attributed only when its sha256 is still the one recorded (a copy edited
after preflight is not the origin's) and an origin file still has the recorded size and sha256 (an
origin edited, moved or deleted since is not what was checked). Otherwise `source` stays the copy.
A manifest that is not one (not JSON, wrong shape, too large) is ignored with one warning line.
Only a copy with a manifest entry is hashed, once; nothing of it is trusted but as a label.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from litmus_rules.lang.records import record

__all__ = ["FORMAT", "MANIFEST", "Origin", "Origins", "Record", "sha256_file", "write_manifests"]

MANIFEST = ".litmus-preflight.json"
FORMAT = "preflight-manifest/1"
MAX_MANIFEST_BYTES = 16 * 2**20  # past it the manifest is ignored (with a warning): never read whole
_CHUNK = 2**20
_HEX64 = r"[0-9a-f]{64}"  # compiled on first use (re caches it): most runs read no manifest



def _warning(message: str) -> None:
    """A logging warning: unconfigured, Python prints it as its one line on stderr. (logging is
    imported here, on the rare bad manifest, not on every start.)"""
    import logging

    logging.getLogger(__name__).warning(message)


def sha256_file(path: str) -> str:
    """The sha256 of a regular file's bytes, read in chunks (a FIFO or device raises OSError)."""
    from litmus_rules.io.inputs import open_regular  # inputs imports this module

    digest = hashlib.sha256()
    with open_regular(path) as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


@record
class Origin:
    """The file a copy was made from, as a verdict names it."""

    path: str  # relative to the working directory when below it, else absolute
    runs: tuple[tuple[int, int], ...] | None = None  # None: the copy's own lines are the origin's
    docs: int = 0

    def location(self, index: int, copy_line: int | None) -> str:
        """`path:line` of document `index` (whose line in the copy is `copy_line`); the path alone
        when its line is not known."""
        if self.runs is None:
            line = copy_line
        else:
            line = None
            if 0 <= index < self.docs:
                for start, first in self.runs:
                    if start > index:
                        break
                    line = first + (index - start)
        return f"{self.path}:{line}" if line else self.path


def _shown(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def _runs(lines: Sequence[int | None]) -> list[list[int]] | None:
    """Lines of documents 0..n-1 as runs [(first index, its line)]; None when one is not known."""
    runs: list[list[int]] = []
    for index, line in enumerate(lines):
        if not isinstance(line, int) or line < 1:
            return None
        if not runs or runs[-1][1] + (index - runs[-1][0]) != line:
            runs.append([index, line])
    return runs


def _valid_runs(value: Any) -> tuple[tuple[int, int], ...] | None:
    if not isinstance(value, list):
        return None
    out: list[tuple[int, int]] = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2 or not all(type(n) is int and n >= 0 for n in item)
                or (out and item[0] <= out[-1][0])):
            return None
        out.append((item[0], item[1]))
    return tuple(out)


class _Manifest:
    """One folder's manifest, checked when an entry is used (a bad entry is ignored alone)."""

    def __init__(self, path: str, files: Mapping[str, Any]) -> None:
        self.path, self.files = path, files
        self.warned = False  # about a malformed entry: once per manifest

    def entry(self, name: str) -> tuple[dict[str, Any] | None, bool]:
        """(the entry for the copy `name`, or None; whether there was one, malformed)."""
        entry = self.files.get(name)
        if entry is None:
            return None, False
        ok = (isinstance(entry, dict) and isinstance(entry.get("origin"), str) and os.path.isabs(entry["origin"])
              and isinstance(entry.get("relative", ""), str) and "\0" not in entry["origin"] + entry.get("relative", "")
              and all(isinstance(entry.get(k), str) and re.fullmatch(_HEX64, entry[k]) for k in ("sha256", "origin_sha256"))
              and type(entry.get("origin_size")) is int and entry["origin_size"] >= 0
              and type(entry.get("docs", 0)) is int and entry.get("docs", 0) >= 0
              and ("lines" not in entry or _valid_runs(entry["lines"]) is not None))
        return (entry, False) if ok else (None, True)


class Origins:
    """The origin of every copy named by a manifest, found for one run of planning: each folder's
    manifest read once, each copy with an entry hashed once. `warn` gets one line per manifest that
    cannot be used (default: a logging warning, which Python prints on stderr when unconfigured)."""

    def __init__(self, warn: Callable[[str], None] | None = None) -> None:
        self.warn = warn if warn is not None else _warning
        self._folders: dict[str, _Manifest | None] = {}

    def origin_of(self, path: str) -> Origin | None:
        folder, name = os.path.split(path)
        manifest = self._manifest(folder or os.curdir)
        if manifest is None:
            return None
        entry, malformed = manifest.entry(name)
        if malformed and not manifest.warned:
            manifest.warned = True
            self.warn(f"litmus-rules: warning: ignoring the malformed entry for `{name}` in `{manifest.path}`: "
                      "its verdicts name the copy")
        if entry is None:
            return None
        try:
            if sha256_file(path) != entry["sha256"]:
                return None  # edited after preflight: the copy is what was checked, not the origin
        except OSError:
            return None
        for candidate in dict.fromkeys((entry["origin"], os.path.join(os.path.abspath(folder or os.curdir),
                                                                       entry.get("relative") or entry["origin"]))):
            found = os.path.normpath(candidate)
            try:
                if os.stat(found).st_size == entry["origin_size"] and sha256_file(found) == entry["origin_sha256"]:
                    runs = _valid_runs(entry["lines"]) if "lines" in entry else None
                    return Origin(_shown(found), runs, entry.get("docs", 0))
            except (OSError, ValueError):
                continue
        return None

    def _manifest(self, folder: str) -> _Manifest | None:
        if folder in self._folders:
            return self._folders[folder]
        path = os.path.join(folder, MANIFEST)
        manifest: _Manifest | None = None
        problem = None
        try:
            files = read_manifest(path)
        except FileNotFoundError:
            files = None
        except (OSError, ValueError) as exc:
            files, problem = None, str(exc)
        if files is not None:
            manifest = _Manifest(path, files)
        elif problem is not None:
            self.warn(f"litmus-rules: warning: ignoring `{path}` ({problem}): verdicts name the copies in `{folder}`")
        self._folders[folder] = manifest
        return manifest


def read_manifest(path: str) -> dict[str, Any]:
    """A manifest's `files`; FileNotFoundError when there is none, OSError or ValueError (with what
    is wrong, in a few words) when the file is not a preflight manifest."""
    from litmus_rules.io.inputs import open_regular

    try:
        with open_regular(path) as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise OSError(f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ValueError(f"over the {MAX_MANIFEST_BYTES // 2**20} MiB limit for a manifest")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ValueError("not JSON") from None
    if not isinstance(data, dict) or data.get("litmus") != FORMAT or not isinstance(data.get("files"), dict):
        raise ValueError(f"not a `{FORMAT}` manifest")
    return data["files"]


# ---- writing (preflight) ------------------------------------------------------------------------


@record
class Record:
    """One copy preflight wrote: `origin` None for one that has none (standard input)."""

    copy: str
    origin: str | None = None
    origin_sha256: str = ""
    origin_size: int = 0
    lines: Sequence[int | None] | None = None  # each document's line in the origin; None: a byte copy


def _entry(rec: Record, folder: str) -> dict[str, Any]:
    assert rec.origin is not None
    origin = os.path.abspath(rec.origin)
    entry: dict[str, Any] = {"origin": origin, "relative": os.path.relpath(origin, os.path.abspath(folder)),
                             "sha256": sha256_file(rec.copy), "origin_sha256": rec.origin_sha256,
                             "origin_size": rec.origin_size}
    if rec.lines is not None:
        entry["docs"] = len(rec.lines)
        runs = _runs(rec.lines)
        if runs is not None:
            entry["lines"] = runs
    return entry


def write_manifests(records: Iterable[Record]) -> None:
    """Record each copy's origin in its folder's manifest, merged with what that manifest held
    (an entry whose copy is gone is dropped; a manifest that cannot be read is replaced). Written
    atomically (`atomic.write_text`). Raises OSError when a copy cannot be hashed or a manifest
    cannot be written."""
    from litmus_rules.atomic import write_text

    folders: dict[str, dict[str, Record]] = {}
    for rec in records:
        folder, name = os.path.split(rec.copy)
        folders.setdefault(folder or os.curdir, {})[name] = rec
    for folder, written in folders.items():
        path = os.path.join(folder, MANIFEST)
        try:
            old = read_manifest(path)
        except (OSError, ValueError):
            old = {}
        files = {name: entry for name, entry in old.items()  # a key that is not a file's name never matches
                 if name not in written and os.path.basename(name) == name and name not in (os.curdir, os.pardir)
                 and os.path.isfile(os.path.join(folder, name))}
        for name, rec in written.items():
            if rec.origin is not None:
                files[name] = _entry(rec, folder)
        if not files and not old:
            continue
        # one line per copy: small, and a diff of two runs reads file by file
        body = ",\n".join(f" {json.dumps(name)}: {json.dumps(entry)}" for name, entry in sorted(files.items()))
        write_text(path, f'{{"litmus": "{FORMAT}", "files": {{\n{body}\n}}}}\n')
