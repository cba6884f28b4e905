"""Reading Inspect AI logs: `.eval` (a zip archive whose members are zstd- or deflate-compressed
JSON: `header.json`, `samples/<id>_epoch_<n>.json`, `summaries.json`) and `.json` (one document).

The `.eval` reader opens one sample member at a time, so a large log never sits in memory whole;
zstd members are decompressed with the maintained `zstandard` package (the zip's own central
directory is read by `zipfile`; Python's `zipfile` has no zstd before 3.14). A `.json` log is one
JSON document and is parsed whole (within `MAX_JSON_LOG`): use `.eval` for large runs.

Both give the same view: the header (`eval`, `plan`, ...), the samples in dataset order (the
header's `eval.dataset.sample_ids`, then epoch), each sample's summary (id, epoch, metadata), and
each sample loaded on demand.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from collections.abc import Iterator, Mapping
from typing import Any

MAX_MEMBER = 512 * 2**20  # one decompressed sample of an .eval log
MAX_JSON_LOG = 1024 * 2**20  # a .json log, parsed whole
_ZSTD = 93  # the zip compression method id of Zstandard
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")


class LogError(ValueError):
    """The file is not an Inspect log this reader understands; the message says what was found."""


class SampleKey:
    """One sample of the log: its id, epoch and where it is (a member name or a list index)."""

    def __init__(self, ident: Any, epoch: int, where: str | int) -> None:
        self.id, self.epoch, self.where = ident, epoch, where

    @property
    def position(self) -> str:
        return self.where if isinstance(self.where, str) else f"samples[{self.where}]"


def open_log(path: str) -> EvalLog | JsonLog:
    if path.lower().endswith(".eval") or zipfile.is_zipfile(path):
        return EvalLog(path)
    return JsonLog(path)


def _order(header: Mapping[str, Any], keys: list[SampleKey]) -> list[SampleKey]:
    """Dataset order (`eval.dataset.sample_ids`), then epoch: the same for .eval (members are in
    completion order) and .json (samples in any order), so both give the same episodes."""
    dataset = ((header.get("eval") or {}).get("dataset") or {}).get("sample_ids") or []
    rank = {str(s): i for i, s in enumerate(dataset)}
    return sorted(keys, key=lambda k: (rank.get(str(k.id), len(rank)), str(k.id), k.epoch))


class JsonLog:
    def __init__(self, path: str) -> None:
        if os.path.getsize(path) > MAX_JSON_LOG:
            raise LogError(f"a .json log over {MAX_JSON_LOG // 2**20} MiB is not read whole: convert it to .eval")
        with open(path, "rb") as fh:
            try:
                data = json.load(fh)
            except (ValueError, RecursionError) as exc:
                raise LogError(f"not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
            raise LogError("not an Inspect log (no `eval` object at the top)")
        samples = data.get("samples") or []
        self.header = {k: v for k, v in data.items() if k != "samples"}
        self._samples = samples if isinstance(samples, list) else []
        keys = [SampleKey(s.get("id"), int(s.get("epoch") or 1), i) for i, s in enumerate(self._samples) if isinstance(s, dict)]
        self.keys = _order(self.header, keys)

    def summary(self, key: SampleKey) -> Mapping[str, Any]:
        return self.load(key)

    def load(self, key: SampleKey) -> Mapping[str, Any]:
        sample = self._samples[int(key.where)]
        if not isinstance(sample, dict):
            raise LogError("a sample is not an object")
        return sample

    def close(self) -> None:
        self._samples = []


class EvalLog:
    def __init__(self, path: str) -> None:
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise LogError(f"not a readable .eval archive: {exc}") from None
        self._path = path
        names = set(self._zip.namelist())
        if "header.json" in names:
            self.header = self._member("header.json")
        elif "_journal/start.json" in names:  # a log still being written: the start record only
            self.header = self._member("_journal/start.json")
        else:
            raise LogError("not an Inspect .eval log (no header.json)")
        if not isinstance(self.header, dict):
            raise LogError("header.json is not an object")
        keys = []
        for name in sorted(names):
            if name.startswith("samples/") and name.endswith(".json") and "_epoch_" in name:
                ident, _, epoch = name[len("samples/"):-len(".json")].rpartition("_epoch_")
                if epoch.isdigit():
                    keys.append(SampleKey(ident, int(epoch), name))
        self.keys = _order(self.header, keys)
        self._summaries: dict[tuple[str, int], Mapping[str, Any]] | None = None

    def summary(self, key: SampleKey) -> Mapping[str, Any]:
        """The sample's summary (id, epoch, metadata, scores) without its events, when the log has
        summaries; else the sample itself."""
        if self._summaries is None:
            self._summaries = {}
            names = self._zip.namelist()
            members = ["summaries.json"] if "summaries.json" in names else sorted(
                n for n in names if n.startswith("_journal/summaries/"))
            for name in members:
                for s in self._member(name) or []:
                    if isinstance(s, dict):
                        self._summaries[(str(s.get("id")), int(s.get("epoch") or 1))] = s
        found = self._summaries.get((str(key.id), key.epoch))
        return found if found is not None else self.load(key)

    def load(self, key: SampleKey) -> Mapping[str, Any]:
        sample = self._member(str(key.where))
        if not isinstance(sample, dict):
            raise LogError(f"{key.where} is not an object")
        return sample

    def _member(self, name: str) -> Any:
        info = self._zip.getinfo(name)
        if info.file_size > MAX_MEMBER:
            raise LogError(f"{name}: over the {MAX_MEMBER // 2**20} MiB limit for one member")
        if info.compress_type != _ZSTD:
            with self._zip.open(info) as fh:
                return _json(fh.read(MAX_MEMBER + 1), name)
        import zstandard  # only .eval logs with zstd members need it

        with open(self._path, "rb") as fh:
            fh.seek(info.header_offset)
            head = fh.read(_LOCAL_HEADER.size)
            if len(head) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(head)[0] != 0x04034B50:
                raise LogError(f"{name}: bad local header in the archive")
            fields = _LOCAL_HEADER.unpack(head)
            fh.seek(fields[9] + fields[10], os.SEEK_CUR)  # the member's name and extra field
            with zstandard.ZstdDecompressor().stream_reader(_Limited(fh, info.compress_size)) as reader:
                data = reader.read(MAX_MEMBER + 1)
                while len(data) <= MAX_MEMBER and (more := reader.read(MAX_MEMBER + 1 - len(data))):
                    data += more
        if len(data) > MAX_MEMBER:
            raise LogError(f"{name}: decompresses past the {MAX_MEMBER // 2**20} MiB limit for one member")
        return _json(data, name)

    def close(self) -> None:
        self._zip.close()


class _Limited:
    """The compressed bytes of one member, and nothing after them."""

    def __init__(self, fh: Any, size: int) -> None:
        self.fh, self.left = fh, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        return data


def _json(data: bytes, name: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise LogError(f"{name}: not valid JSON: {exc}") from None


def samples(log: EvalLog | JsonLog) -> Iterator[SampleKey]:
    yield from log.keys
