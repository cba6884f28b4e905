"""Cold start (issue 13 item 5): the package imports its heavy dependencies only when a name needs
them, and the rule parser is read back from the user's cache instead of being built, safely."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _helpers import ROOT
from litmus_rules._resources import grammar_path
from litmus_rules.lang.syntax import _parser_cache
from litmus_rules.lang.syntax._grammar import _OPTIONS

HEAVY = ("lark", "jsonschema", "re2", "regex", "yaml", "jinja2", "confusable_homoglyphs", "litmus_rules.engine")


def _modules_after(code: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         env=env, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_importing_the_package_imports_no_heavy_dependency() -> None:
    loaded = _modules_after("import litmus_rules")
    assert not loaded & set(HEAVY)


def test_a_public_name_still_imports_on_first_use() -> None:
    # with the user's cache off, so that the rules are parsed (a cached tree needs no lark)
    loaded = _modules_after("import os\nos.environ['LITMUS_RULES_CACHE_DIR'] = ''\n"
                            "import litmus_rules\nassert litmus_rules.load_rules().evaluate")
    assert {"lark", "litmus_rules.engine"} <= loaded
    import litmus_rules

    assert set(litmus_rules.__all__) <= set(dir(litmus_rules))
    with pytest.raises(AttributeError):
        litmus_rules.no_such_name  # noqa: B018


def test_the_command_line_does_not_import_the_report_templates() -> None:
    assert "jinja2" not in _modules_after("import litmus_rules.cli")


GRAMMAR = grammar_path().read_text(encoding="utf-8")
TEXT = (ROOT / "rules" / "validity.litmus").read_text(encoding="utf-8")


def _built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the parsers built from the grammar (not read back)."""
    built: list[int] = []
    real = _parser_cache._build

    def counting(*args: Any, **kw: Any) -> Any:
        built.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(_parser_cache, "_build", counting)
    return built


def test_a_stored_parser_is_read_back_and_parses_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_parser_cache.CACHE_ENV, str(tmp_path / "cache"))
    built = _built(monkeypatch)
    first = _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    second = _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    assert len(built) == 1
    assert second.parse(TEXT, start="start") == first.parse(TEXT, start="start")
    assert second.parse("a.b == 1 and not c", start="expr") == first.parse("a.b == 1 and not c", start="expr")
    folder = tmp_path / "cache"
    assert folder.stat().st_mode & 0o777 == 0o700 and [p.name for p in folder.iterdir()][0].startswith("parser-")
    # another grammar never reads this parser
    _parser_cache.cached_parser(GRAMMAR + "\n// changed\n", dict(_OPTIONS))
    assert len(built) == 2


def test_a_folder_others_can_write_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_parser_cache.CACHE_ENV, str(tmp_path / "cache"))
    built = _built(monkeypatch)
    _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    os.chmod(tmp_path / "cache", 0o777)
    _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    assert len(built) == 2


class _Marker:
    def __reduce__(self) -> tuple[object, ...]:
        return (open, (str(MARKER), "w"))


MARKER = Path("/nonexistent")


@pytest.mark.parametrize("content", ["garbage", "json-wrong-key", "pickle", "empty"])
def test_a_damaged_or_foreign_file_is_rebuilt_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    global MARKER
    MARKER = tmp_path / "pwned"
    monkeypatch.setenv(_parser_cache.CACHE_ENV, str(tmp_path / "cache"))
    _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    (stored,) = (tmp_path / "cache").iterdir()
    data = {"garbage": b"{not json", "empty": b"", "pickle": pickle.dumps(_Marker()),
            "json-wrong-key": json.dumps({**json.loads(stored.read_bytes()), "key": "0" * 64}).encode()}[content]
    stored.write_bytes(data)
    built = _built(monkeypatch)
    again = _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    assert len(built) == 1 and not MARKER.exists()
    assert again.parse(TEXT, start="start").data == "start"


def test_an_empty_setting_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_parser_cache.CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = _built(monkeypatch)
    _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    _parser_cache.cached_parser(GRAMMAR, dict(_OPTIONS))
    assert len(built) == 2 and not any(tmp_path.iterdir())
