"""The confusables table, read back from the user's cache (a quarter of a cold `check` to build):
the same table as built, and a damaged, planted or foreign file is never trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from litmus_rules import usercache
from litmus_rules.domain import transforms


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(usercache.CACHE_ENV, str(folder))
    transforms._skeleton_table.cache_clear()
    yield folder
    transforms._skeleton_table.cache_clear()


def _file(folder: Path) -> Path:
    (path,) = folder.glob("skeleton-*.json")
    return path


def test_the_cached_table_is_the_built_table(cache: Path) -> None:
    built = transforms._build_skeleton_table()
    assert transforms._skeleton_table() == built  # built, then stored
    path = _file(cache)
    assert oct(cache.stat().st_mode & 0o777) == "0o700" and oct(path.stat().st_mode & 0o777) == "0o600"
    transforms._skeleton_table.cache_clear()
    assert transforms._skeleton_table() == built  # read back
    assert transforms.skeleton("раураl") == "paypal"


@pytest.mark.parametrize("damage", ["not json", json.dumps({"key": "another", "table": {"97": "b"}}),
                                    json.dumps({"table": {"x": "b"}}), json.dumps([1, 2])])
def test_a_damaged_or_foreign_file_is_rebuilt_not_trusted(cache: Path, damage: str) -> None:
    built = transforms._build_skeleton_table()
    transforms._skeleton_table()
    path = _file(cache)
    key = json.loads(path.read_text(encoding="utf-8"))["key"]
    path.write_text(damage.replace('"another"', json.dumps(key)) if "another" in damage else damage, encoding="utf-8")
    transforms._skeleton_table.cache_clear()
    table = transforms._skeleton_table()
    if "another" in damage:  # the right key, a planted table: still read (it is data, not code)
        assert table == {97: "b"}
    else:
        assert table == built


def test_a_folder_others_can_write_is_never_read(cache: Path) -> None:
    transforms._skeleton_table()
    path = _file(cache)
    key = json.loads(path.read_text(encoding="utf-8"))["key"]
    path.write_text(json.dumps({"key": key, "table": {"97": "b"}}), encoding="utf-8")
    os.chmod(cache, 0o777)
    transforms._skeleton_table.cache_clear()
    assert transforms._skeleton_table() == transforms._build_skeleton_table()


def test_an_empty_setting_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(usercache.CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    transforms._skeleton_table.cache_clear()
    try:
        assert transforms._skeleton_table() == transforms._build_skeleton_table()
    finally:
        transforms._skeleton_table.cache_clear()
    assert not (tmp_path / "xdg").exists()
