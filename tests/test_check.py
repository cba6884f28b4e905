"""The load-time checker: every diagnostic has a stable code and a location."""

from __future__ import annotations

import pytest

from litmus_rules import RuleCheckError, load_rules_text
from litmus_rules.domain.environment import check
from litmus_rules.lang.syntax import parse

HEAD = 'ruleset t version "1"\n'


def codes(text: str) -> list[str]:
    return [d.code for d in check(parse(HEAD + text, "c.litmus"))]


@pytest.mark.parametrize(
    "text, code",
    [
        ("rule r reject when nope == 1", "L201"),
        ("rule r reject when detector.chanel == 1", "L202"),
        ("rule r reject when lenn(canaries) > 1", "L203"),
        ("rule r reject when len(canaries, 2) > 1", "L204"),
        ("rule r reject when len() > 1", "L204"),
        ("rule r reject when starts_with(1, \"a\")", "L205"),
        ('rule r reject when true because "{zz}"', "L206"),
        ("rule r reject when detector.channel", "L207"),
        ("rule r reject when id.foo == 1", "L208"),
        ("rule r reject when any x in id: true", "L208"),
        ('rule r reject when id == 3', "L209"),
        ("rule r reject when true\nrule r reject when false", "L210"),
        ("let a = b\nlet b = a\nrule r reject when a", "L211"),
        ("param p = id\nrule r reject when p", "L212"),
        ("param p: bogus = 1\nrule r reject when p > 0", "L212"),
        ("let id = 1\nrule r reject when id > 0", "L213"),
        ('classify c\n  "a" when true\n  "a" otherwise', "L214"),
        ("param p = 1\nrule r reject when true", "L220"),
        ("let l = 1\nrule r reject when true", "L221"),
    ],
)
def test_each_diagnostic_code(text: str, code: str) -> None:
    assert code in codes(text)


def test_clean_rules_have_no_diagnostics() -> None:
    text = (
        "param n = 6\nlet names = [t.name for t in context.tools]\n"
        'rule r "doc" reject when any s in detector.signals: s.kind == "regex" and len(names) > n\n'
        '  because "signal {s.id}"\n'
    )
    assert codes(text) == []


def test_typo_suggests_the_right_fact_path() -> None:
    diags = check(parse(HEAD + "rule r reject when detector.chanel == \"dispatch\"", "x.litmus"))
    (d,) = diags
    assert d.code == "L202" and "detector.chanel" in d.message
    assert d.help == "did you mean `detector.channel`?"
    assert d.span.location() == "x.litmus:2:20"
    assert d.render().splitlines()[1].endswith('reject when detector.chanel == "dispatch"')


def test_nested_schema_paths_are_checked() -> None:
    assert codes('rule r reject when any d in episode.dispatch: d.decison == "x"') == []  # records are open
    assert "L202" in codes("rule r reject when controls.null.transcrpt == 1")
    assert "L202" in codes("rule r reject when any t in context.tools: t.nmae == 1")


def test_diagnostics_are_all_collected_and_sorted() -> None:
    diags = check(parse(HEAD + "rule a reject when zz\nrule b reject when yy\nrule c reject when xx", "s.litmus"))
    assert [d.span.line for d in diags] == [2, 3, 4]


def test_a_ruleset_with_errors_does_not_load() -> None:
    with pytest.raises(RuleCheckError) as info:
        load_rules_text(HEAD + "rule r reject when nope", "e.litmus")
    assert [d.code for d in info.value.diagnostics] == ["L201"]
    assert "e.litmus:2:20" in info.value.render()


def test_warnings_do_not_block_loading() -> None:
    rules = load_rules_text(HEAD + "param p = 1\nrule r reject when false", "w.litmus")
    assert [d.code for d in rules.diagnostics] == ["L220"]
