"""Shared by the tests/test_importers_b_*.py files: schema validation of imported episodes, and
rulesets cut from the shipped rules (a subset of rules, or the classifier alone) so that thousands
of corpus episodes can be checked in seconds."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Iterable

import jsonschema

from litmus_rules._resources import default_rules_dir, episode_schema_path
from litmus_rules.engine.ruleset import RuleSet, load_rules_text
from litmus_rules.io.importers._contract import Imported, Options, Problem
from litmus_rules.io.load import iter_episodes


@functools.lru_cache(maxsize=1)
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(episode_schema_path("episode/1.1").read_text()))


def schema_errors(episode: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(episode)]


def split(items: Iterable[Imported | Problem]) -> tuple[list[Imported], list[Problem]]:
    ok: list[Imported] = []
    bad: list[Problem] = []
    for item in items:
        (ok if isinstance(item, Imported) else bad).append(item)
    return ok, bad


def episodes(module: Any, path: Path | str, **extra: str) -> list[dict[str, Any]]:
    ok, bad = split(module.records(path, Options(extra=extra)))
    assert not bad, bad
    return [i.episode for i in ok]


def assert_loads(episodes_: list[dict[str, Any]], tmp_path: Path) -> None:
    """Every episode validates against the 1.1 schema, directly and through the loader."""
    for e in episodes_:
        assert schema_errors(e) == [], e["id"]
    out = tmp_path / "imported.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in episodes_), encoding="utf-8")
    loaded = list(iter_episodes([str(out)]))
    assert len(loaded) == len(episodes_)
    for item in loaded:
        assert item.error is None, str(item.error)


def _shipped_text() -> str:
    return (default_rules_dir() / "validity.litmus").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def rules_subset(keep: tuple[str, ...] = ()) -> RuleSet:
    """The shipped rules file with only the rules named in `keep` (its lets and classifier stay)."""
    out: list[str] = []
    skip = False
    for line in _shipped_text().splitlines():
        if line.startswith("rule "):
            skip = line.split()[1] not in keep
        elif skip and line and not line[0].isspace():
            skip = False
        if not skip:
            out.append(line)
    return load_rules_text("\n".join(out), "validity-subset.litmus")


def classify(episode: dict[str, Any]) -> str | None:
    """The shipped classifier's label, whatever the validity rules say (a rejected episode is not
    classified by `evaluate`; the acceptance criteria compare classification all the same)."""
    return rules_subset(()).evaluate(episode, validate=False).classification


def violations(verdict: Any) -> dict[str, str]:
    return {r.rule: r.message for r in verdict.reasons if r.kind == "violation"}
