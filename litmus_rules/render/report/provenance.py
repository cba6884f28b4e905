"""What makes a summary reproducible: the inputs' SHA-256, the ruleset identity and params, the
litmus_rules version, the time."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from pathlib import Path
from typing import Any, Iterable

from litmus_rules.engine.verdict import TOOL_VERSION, RulesetInfo

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def input_hashes(inputs: Iterable[str]) -> list[dict[str, Any]]:
    """{path, sha256} for every input file; under a folder, every regular file outside hidden
    folders, sorted. stdin (`-`) cannot be hashed after it was read: its sha256 is null."""
    out: list[dict[str, Any]] = []
    for item in inputs:
        if item == "-":
            out.append({"path": "-", "sha256": None})
            continue
        path = Path(item)
        files = [path] if not path.is_dir() else sorted(
            f for f in path.rglob("*")
            if f.is_file() and not any(p.startswith(".") for p in f.relative_to(path).parts)
        )
        for f in files:
            try:
                out.append({"path": str(f), "sha256": sha256_file(f)})
            except OSError as exc:
                out.append({"path": str(f), "sha256": None, "error": exc.strerror or str(exc)})
    return out


def generated_at() -> str:
    """Now, in UTC; `SOURCE_DATE_EPOCH` (reproducible builds) fixes it."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit()
              else _dt.datetime.now(_dt.timezone.utc))
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def provenance(info: RulesetInfo | None, inputs: Iterable[str]) -> dict[str, Any]:
    """The summary's provenance block for `check`: the loaded ruleset, its params, the config file
    they came from (`{path, sha256}`, or null), the inputs."""
    config = info.config if info is not None else None
    return {
        "ruleset": info.to_json() if info is not None else None,
        "params": info.params_json() if info is not None else [],
        "config": {"path": config[0], "sha256": config[1]} if config is not None else None,
        "litmus_rules_version": TOOL_VERSION,
        "inputs": input_hashes(inputs),
        "generated_at": generated_at(),
    }
