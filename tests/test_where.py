"""`where` names in quantifiers: `any s in xs where w = f(s): w`, with `{w.origin}` in the message.

A `where` name means what its expression would mean where it is read (it is computed at its first
read, once per element), so writing a repeated call once changes no verdict and no message; it is
checked, formatted, linted and traced like the rest of the language."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from litmus_rules import load_rules_text
from litmus_rules.authoring.lint import lint_path
from litmus_rules.domain import builtins as domain_builtins
from litmus_rules.errors import RuleCheckError
from litmus_rules.lang import ast
from litmus_rules.lang.records import replace
from litmus_rules.lang.printer import format_expr, format_ruleset
from litmus_rules.lang.syntax import parse, parse_expression

from _helpers import EXAMPLES, ROOT, base_episode

CLI = [sys.executable, "-m", "litmus_rules"]
HEAD = 'ruleset t version "1"\n'

# The shipped rule `injector_detector_disjoint` as it was written before `where`, and as it is now.
REPEATED = HEAD + """
rule disjoint
  reject when any s in detector.signals:
      collision(s, surfaces, min_len: 6)
  because "signal {s.id} matches {collision(s, surfaces, min_len: 6).origin} "
    "({collision(s, surfaces, min_len: 6).transform}); {collision(s, surfaces, min_len: 6)}"
"""
WHERE = HEAD + """
rule disjoint
  reject when any s in detector.signals where w = collision(s, surfaces, min_len: 6): w
  because "signal {s.id} matches {w.origin} ({w.transform}); {w}"
"""


def _episodes() -> list[dict[str, Any]]:
    out = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and str(doc.get("litmus", "")).startswith("episode/"):
                out.append(doc)
    unknown_signal = base_episode()
    del unknown_signal["detector"]["signals"][0]["id"]
    unknown_signal["detector"]["signals"].append({"id": "s2", "kind": "substring"})  # no value: unknown
    return out + [base_episode(), unknown_signal]


def _reasons(verdict: Any) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [(r.rule, r.kind, r.message, tuple(r.missing)) for r in verdict.reasons]


def test_writing_a_repeated_call_once_changes_no_verdict_and_no_message() -> None:
    repeated, where = load_rules_text(REPEATED, "t.litmus"), load_rules_text(WHERE, "t.litmus")
    episodes = _episodes()
    assert len(episodes) >= 5
    seen_reject = False
    for episode in episodes:
        a, b = repeated.evaluate(episode), where.evaluate(episode)
        assert (a.verdict, _reasons(a)) == (b.verdict, _reasons(b))
        seen_reject |= any(r.rule == "disjoint" for r in b.reasons)
    assert seen_reject  # the examples include a collision: the message path was exercised


def test_a_where_name_is_computed_once_per_element_however_often_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    lower = domain_builtins.REGISTRY["lower"]

    def counting(text: Any) -> Any:
        calls.append(text)
        return lower.impl(text)

    monkeypatch.setitem(domain_builtins.REGISTRY, "lower", replace(lower, impl=counting))
    rules = load_rules_text(HEAD + """
rule r
  reject when any c in canaries where v = lower(c.value): v != c.value and len(v) > 0 and v == v
  because "{c.value} lowers to {v} ({v!r})"
""", "t.litmus")
    episode = base_episode()
    episode["canaries"] = [{"value": "ab"}, {"value": "CD"}]
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED"
    assert verdict.reasons[0].message == "CD lowers to cd ('cd')"
    # the fast run: once per element; the recording run (for the trace): once for the witness;
    # the message: read from the witness's slot, not computed again
    assert calls == ["ab", "CD", "CD"]


def test_a_name_the_body_does_not_reach_is_not_computed_and_cannot_fail() -> None:
    # `len(c.value)` fails on a number; the body reads it only when `c.value` is a string
    rules = load_rules_text(HEAD + """
rule r
  reject when any c in canaries where n = len(c.value): c.value == "x" and n > 0
  because "{c.value!r}"
""", "t.litmus")
    episode = base_episode()
    episode["canaries"] = [{"value": "lc-1234"}, {"value": "x"}]
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED" and verdict.reasons[0].message == "'x'"


def test_an_unknown_value_makes_its_uses_unknown_and_the_reason_names_the_missing_fact() -> None:
    rules = load_rules_text(HEAD + """
rule r
  reject when any x in extra.xs where v = x.k: v == "x" or x.j == 1
  because "{x}"
""", "t.litmus")
    episode = base_episode()
    episode["extra"] = {"xs": [{"j": 0}]}  # no `k`
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED"
    (reason,) = verdict.reasons
    assert reason.kind == "insufficient_evidence"
    assert reason.missing == ("extra.xs[0].k",)
    # a decided `or` absorbs it: the unknown name is unknown only where it is read
    episode["extra"] = {"xs": [{"j": 1}]}
    verdict = rules.evaluate(episode)
    assert [(r.kind, r.message) for r in verdict.reasons] == [("violation", "{j: 1}")]


def test_later_names_see_earlier_ones_and_the_trace_shows_the_value() -> None:
    rules = load_rules_text(HEAD + """
rule r
  reject when any c in canaries where v = lower(c.value), n = len(v): n > 3
  because "{v} has {n} characters"
""", "t.litmus")
    verdict = rules.evaluate(base_episode())
    assert verdict.reasons[0].message == "lc-0f1e2d3c4b5a has 15 characters"
    trace = verdict.reasons[0].trace
    assert trace is not None and trace.root is not None
    texts = [n.text for n in _nodes(trace.root)]
    assert "lower(c.value)" in texts and "len(v)" in texts


def _nodes(node: Any) -> list[Any]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


@pytest.mark.parametrize(
    ("condition", "code"),
    [
        ("any c in canaries where v = lowr(c.value): v == \"a\"", "L203"),  # the value is checked
        ("any c in canaries where v = c.value, v = c.value: v == \"a\"", "L210"),  # declared twice
        ("any c in canaries where c = 1: c == 1", "L210"),  # a loop variable's name
        ("(any c in canaries where v = c.value: v == \"a\") and v == \"a\"", "L201"),  # not seen outside
        ("any c in canaries where v = c.valu: v == \"a\"", "L202"),
        ("any c in canaries where v = len(c.value): v", "L207"),  # its type reaches the body
    ],
)
def test_the_checker_checks_where_names(condition: str, code: str) -> None:
    with pytest.raises(RuleCheckError) as info:
        load_rules_text(HEAD + f"rule r reject when {condition}\n", "t.litmus")
    assert code in [d.code for d in info.value.diagnostics]


def test_a_message_placeholder_is_checked_against_the_where_name_type() -> None:
    with pytest.raises(RuleCheckError) as info:
        load_rules_text(HEAD + 'rule r reject when any c in canaries where n = len(c.value): n > 1\n'
                        '  because "{n.origin}"\n', "t.litmus")
    assert "L208" in [d.code for d in info.value.diagnostics]


def test_where_parses_prints_and_parses_back() -> None:
    e = parse_expression("any s in xs, t in ys where w = f(s, t), v = (any x in w: x): v and w")
    assert isinstance(e, ast.Quantifier)
    assert [b.name for b in e.loops] == ["s", "t"] and [b.name for b in e.locals] == ["w", "v"]
    assert parse_expression(format_expr(e)) == e
    assert format_expr(e) == "any s in xs, t in ys where w = f(s, t), v = (any x in w: x): v and w"


def test_a_long_head_breaks_before_where_and_then_between_names() -> None:
    tree = parse(HEAD + "rule r reject when any s in some_signals where first_name = "
                 + "f(" + ", ".join(f"argument_{i}" for i in range(12)) + "), second = g(first_name): second\n")
    text = format_ruleset(tree, width=100)
    lines = text.splitlines()
    assert any(line.strip().startswith("where first_name = f(") for line in lines)
    assert any(line.strip() == "second = g(first_name):" for line in lines)
    assert parse(text) == tree
    narrow = format_ruleset(tree, width=40)
    assert parse(narrow) == tree


def test_where_is_still_a_name_where_no_clause_can_start() -> None:
    e = parse_expression("any where in xs: where")
    assert isinstance(e, ast.Quantifier) and e.loops[0].name == "where" and not e.locals


def test_an_unused_where_name_is_a_lint_warning(tmp_path: Path) -> None:
    path = tmp_path / "r.litmus"
    path.write_text(HEAD + '\nrule r\n  "d"\n  cite "c"\n  reject when any c in canaries where v = c.value, '
                    'u = lower(c.value): v == "a"\n  because "{c.value}"\n', encoding="utf-8")
    report = lint_path(path)
    codes = [(d.code, d.message) for d in report.diagnostics if d.code == "L411"]
    assert codes == [("L411", "`where u` is never read")]
    path.write_text(path.read_text(encoding="utf-8").replace('"{c.value}"', '"{c.value} {u}"'), encoding="utf-8")
    assert [d for d in lint_path(path).diagnostics if d.code == "L411"] == []


def test_fmt_round_trips_a_where_binding_through_the_cli(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    messy = HEAD + """
rule r "d" cite "c" reject when any   s in detector.signals   where w=collision(s,surfaces,min_len:6) ,v = w:v
  because "{s.id} {w.origin}"
"""
    (rules / "r.litmus").write_text(messy, encoding="utf-8")
    fmt = subprocess.run([*CLI, "fmt", str(rules)], capture_output=True, text=True, cwd=tmp_path)
    assert fmt.returncode == 0, fmt.stderr
    formatted = (rules / "r.litmus").read_text(encoding="utf-8")
    assert "any s in detector.signals where w = collision(s, surfaces, min_len: 6), v = w: v" in formatted
    assert parse(formatted) == parse(messy)
    check = subprocess.run([*CLI, "fmt", "--check", str(rules)], capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_shipped_rules_read_each_repeated_call_through_a_where_name() -> None:
    tree = parse((ROOT / "rules" / "validity.litmus").read_text(encoding="utf-8"))
    for rule in tree.rules:
        if rule.message is None:
            continue
        placeholders = [p.expr for p in rule.message.parts if isinstance(p, ast.Placeholder)]
        calls = [n for e in placeholders for n in ast.walk(e) if isinstance(n, ast.Call)]
        assert calls == [], f"rule `{rule.name}` calls {calls[0].func} in its message: bind it with `where`"
