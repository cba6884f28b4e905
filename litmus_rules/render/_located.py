"""Where a verdict points: its `source` ("file:line", or a file alone) split for the CI formats."""

from __future__ import annotations

from typing import Any


def file_and_line(verdict: dict[str, Any]) -> tuple[str | None, int | None]:
    source = verdict.get("source")
    if not isinstance(source, str) or not source:
        return None, None
    path, sep, line = source.rpartition(":")
    if sep and line.isdigit() and path:
        return path, max(int(line), 1)
    return source, None


def reasons(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in verdict.get("reasons") or () if isinstance(r, dict)]
