"""The committed episode validators (`io/validators/`) are what fastjsonschema generates today from
the vetted shipped schemas, and `check` uses them without importing fastjsonschema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from litmus_rules.io import episode_schema
from litmus_rules.io.validator_codegen import MODULES, module_text, schema_digest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("version", sorted(MODULES))
def test_the_committed_module_was_made_from_the_shipped_schema(version: str) -> None:
    from importlib import import_module

    prepared = episode_schema._vetted(episode_schema._load(version))
    assert prepared is not None
    module = import_module(f"litmus_rules.io.validators.{MODULES[version]}")
    assert module.SCHEMA_SHA256 == schema_digest(prepared), (
        "stale: run `python -m litmus_rules.io.validator_codegen` after changing a schema")
    assert episode_schema._compiled(version) is module.VALIDATE


@pytest.mark.parametrize("version", sorted(MODULES))
def test_the_committed_code_is_what_fastjsonschema_generates(version: str) -> None:
    import fastjsonschema
    from importlib import import_module

    module = import_module(f"litmus_rules.io.validators.{MODULES[version]}")
    if module.VERSION != fastjsonschema.VERSION:
        pytest.skip(f"generated with fastjsonschema {module.VERSION}, {fastjsonschema.VERSION} installed")
    prepared = episode_schema._vetted(episode_schema._load(version))
    path = Path(module.__file__)
    assert path.read_text(encoding="utf-8") == module_text(version, prepared)


def test_a_module_made_from_another_schema_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from litmus_rules.io import validator_codegen

    monkeypatch.setattr(validator_codegen, "schema_digest", lambda prepared: "0" * 64)
    episode_schema._compiled.cache_clear()
    try:
        fast = episode_schema._compiled("episode/1")
        assert fast is not None and fast.__module__ != "litmus_rules.io.validators.episode_1"
        with pytest.raises(Exception):
            fast({"litmus": "episode/1"})  # compiled at run time, and still a validator
    finally:
        episode_schema._compiled.cache_clear()


def test_check_validates_without_importing_fastjsonschema(tmp_path: Path) -> None:
    episode = ROOT / "examples" / "clean-structured.yaml"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"litmus": "episode/1", "id": "x", "context": 3}), encoding="utf-8")
    probe = ("import runpy, sys\n"
             "sys.argv = ['litmus-rules', 'check', sys.argv[1], sys.argv[2]]\n"
             "try:\n    runpy.run_module('litmus_rules', run_name='__main__')\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "print('FAST', 'fastjsonschema' in sys.modules, code, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(episode), str(bad)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert "FAST False 2" in done.stderr, done.stderr[-2000:]
    assert "bad.json:1: at /: missing required key `detector`" in done.stdout  # explained by jsonschema
