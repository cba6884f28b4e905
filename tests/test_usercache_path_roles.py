"""The path stand-in table (which non-ASCII characters RE2 reads as letters or numbers), read back
from the user's cache: the same table as RE2 gives, and a damaged or foreign file is rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litmus_rules import usercache
from litmus_rules.domain import path_roles


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(usercache.CACHE_ENV, str(folder))
    path_roles._table.cache_clear()
    yield folder
    path_roles._table.cache_clear()


@pytest.fixture(scope="module")
def built() -> str:
    return path_roles._build_table()


def _file(folder: Path) -> Path:
    (path,) = folder.glob("path-roles-*.json")
    return path


def test_the_cached_table_is_the_built_table(cache: Path, built: str) -> None:
    assert path_roles._table() == built  # built, then stored
    path = _file(cache)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert 100 < len(json.loads(path.read_text(encoding="utf-8"))["segments"]) < 5000  # ranges, not the table
    path_roles._table.cache_clear()
    assert path_roles._table() == built  # read back
    assert "é中٣".translate(path_roles._table()) == "@@@" and "\u200b·".translate(path_roles._table()) == "!!"


@pytest.mark.parametrize("damage", [
    "not json", json.dumps([1, 2]), json.dumps({"format": 0, "segments": []}),
    json.dumps({"format": path_roles._TABLE_FORMAT, "segments": [[65, 90]]}),  # ASCII is not the cache's to say
    json.dumps({"format": path_roles._TABLE_FORMAT, "segments": [[300, 200]]}),
    json.dumps({"format": path_roles._TABLE_FORMAT, "segments": [[200, 0x110000]]}),
    json.dumps({"format": path_roles._TABLE_FORMAT, "segments": [["a", 300]]}),
    json.dumps({"format": path_roles._TABLE_FORMAT, "segments": [[200]]}),
])
def test_a_damaged_or_foreign_file_is_rebuilt(cache: Path, built: str, damage: str) -> None:
    path_roles._table()
    _file(cache).write_text(damage, encoding="utf-8")
    path_roles._table.cache_clear()
    assert path_roles._table() == built


def test_no_cache_folder_builds_every_time(monkeypatch: pytest.MonkeyPatch, built: str) -> None:
    monkeypatch.setenv(usercache.CACHE_ENV, "")
    path_roles._table.cache_clear()
    try:
        assert path_roles._table_file() is None and path_roles._table() == built
    finally:
        path_roles._table.cache_clear()
