"""The named stages (engine/stages.py), the language's ignorance of the domain, and the bounded
caches a RuleSet owns (cache.py)."""

from __future__ import annotations

import ast as pyast
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import base_episode
from litmus_rules import load_rules, load_rules_text
from litmus_rules.authoring import lint
from litmus_rules.cache import BoundedCache
from litmus_rules.engine import stages
from litmus_rules.engine.batch import RulesSpec, check_inputs

import litmus_rules

PACKAGE = Path(litmus_rules.__file__).resolve().parent
HEAD = 'ruleset t version "1"\n'


# ---- layers ---------------------------------------------------------------------------------------


def test_the_language_imports_nothing_above_it() -> None:
    above = ("litmus_rules.domain", "litmus_rules.engine", "litmus_rules.io", "litmus_rules.authoring",
             "litmus_rules.cli", "litmus_rules.render", "litmus_rules.preflight")
    for path in (PACKAGE / "lang").rglob("*.py"):
        tree = pyast.parse(path.read_text(encoding="utf-8"))
        for node in pyast.walk(tree):  # nested (deferred) imports too
            names = [a.name for a in node.names] if isinstance(node, pyast.Import) else (
                [node.module or ""] if isinstance(node, pyast.ImportFrom) else [])
            assert not [n for n in names if n.startswith(above)], (path, names)


# ---- stages ---------------------------------------------------------------------------------------


def test_the_loader_lint_and_rules_info_find_the_same_files(tmp_path: Path) -> None:
    rule = HEAD + 'rule r\n  "d"\n  cite "c"\n  reject when detector.channel == "x"\n  because "{detector.channel}"\n'
    (tmp_path / "a.litmus").write_text(rule)
    for skipped in (".hidden", "tests", "sub/.venv"):  # a broken file in each: never read
        (tmp_path / skipped).mkdir(parents=True)
        (tmp_path / skipped / "b.litmus").write_text("not a rule file")
    (tmp_path / "sub" / "c.litmus").write_text(HEAD + "let unused_here = 1\n")
    found = stages.find(tmp_path)
    assert [f.relative_to(tmp_path).as_posix() for f in found] == ["a.litmus", "sub/c.litmus"]
    loaded = load_rules(tmp_path)
    report = lint.lint_path(tmp_path)
    info = lint.ruleset_info(tmp_path)
    assert report.errors == 0 and [Path(f).name for f in report.files] == ["a.litmus", "c.litmus"]
    assert [Path(f).name for f in info["files"]] == ["a.litmus", "c.litmus"] and info["hash"] == loaded.info.hash


def test_merge_reports_each_file_whose_header_differs() -> None:
    parsed = [stages.parse(HEAD, "a.litmus"), stages.parse('ruleset u version "2"\n', "b.litmus"),
              stages.parse(HEAD, "c.litmus")]
    merged = stages.merge(parsed)
    assert [(d.code, d.span.source.name) for d in merged.diagnostics] == [("L215", "b.litmus")]


def test_the_check_stage_keeps_the_type_of_every_node() -> None:
    tree = stages.parse(HEAD + 'let n = len(detector.signals)\nrule r reject when n > 2 and detector.channel == "x"\n', "t")
    checked = stages.check(tree)
    assert checked.ok
    let = tree.lets[0]
    assert checked.type_of(let.expr).describe() == "number"
    channel = tree.rules[0].condition.operands[1].left  # type: ignore[attr-defined]
    assert checked.type_of(channel) is not None and checked.type_of(channel).may_be("string")


def test_the_batch_validates_each_episode_once_and_evaluate_validates_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = stages.validate

    def counting(episode: Any, source: str) -> Any:
        calls.append(source)
        return real(episode, source)

    monkeypatch.setattr(stages, "validate", counting)
    rules = load_rules()
    eps = [{**base_episode(), "id": f"e{i}", "canaries": [{"value": f"lc-{i:04d}-unique"}]} for i in range(3)]
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(ep) for ep in eps))
    bad = {**base_episode(), "id": "bad", "detector": "not an object"}
    (tmp_path / "c.jsonl").write_text(json.dumps(bad) + "\n")
    outcomes = list(check_inputs(rules, RulesSpec(None, {}, "fails", want_text=False), [str(tmp_path)], jobs=1))
    assert [o.verdict for o in outcomes] == ["SCORED", "SCORED", "SCORED", "ERROR"]
    assert calls == []  # the reader validated them: the engine does not again
    assert rules.evaluate(bad).verdict == "ERROR" and len(calls) == 1  # the public entry point does


# ---- caches -----------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 50)), max_size=80),
       st.integers(1, 6), st.one_of(st.none(), st.integers(0, 120)))
def test_a_bounded_cache_keeps_the_newest_entries_within_its_bounds(
        ops: list[tuple[int, int]], entries: int, weight: int | None) -> None:
    cache: BoundedCache[int] = BoundedCache(entries, weight)
    newest: dict[int, int] = {}
    for key, w in ops:
        cache.put(key, key * 10, w)
        newest.pop(key, None)
        newest[key] = w
        assert len(cache) <= max(1, entries) and cache.get(key) == key * 10  # the newest always stays
    kept = [k for k in newest if cache.get(k) is not None]
    assert kept == list(newest)[-len(kept):] if kept else True  # what stays is the most recent
    if weight is not None and len(kept) > 1:
        assert sum(newest[k] for k in kept) <= weight


def test_a_bounded_cache_stays_bounded_under_threads() -> None:
    cache: BoundedCache[int] = BoundedCache(8, 100)

    def work(offset: int) -> None:
        for i in range(2000):
            cache.get_or_make((offset, i % 50), lambda: i, lambda v: 3)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(cache) <= 8 and cache._weight == 3 * len(cache)


def test_each_ruleset_owns_its_environment_and_its_caches() -> None:
    a = load_rules_text(HEAD + 'rule r reject when any s in surfaces: s.text == "x"')
    b = load_rules_text(HEAD + 'rule r reject when any s in surfaces: s.text == "x"')
    assert a.environment is not b.environment
    assert a.environment.derived["surfaces"].compute is not b.environment.derived["surfaces"].compute
    ep = base_episode()
    assert a.evaluate(ep).verdict == b.evaluate(ep).verdict == "SCORED"
