"""Regex signals match what Python's `re` matches (DESIGN, "Reading the note" 2), on any text.

A harness scores with `re`: Unicode \\d \\w \\s \\b, its ignorecase, `$` before a final newline.
The checker's searches (RE2 or `regex`, bounded in time) must agree with `re.search` exactly, and
the probe used to search many texts joined by NUL must never miss a text `re` matches in.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import litmus_rules
from _helpers import base_episode
from litmus_rules.domain.matching import collides, first_collision
from litmus_rules.domain import regexes
from litmus_rules.domain.regexes import RegexUnknown, regex_probe, regex_search

# Characters where engines disagree with `re`: Arabic-Indic and Devanagari digits, fullwidth
# digits, accented and CJK letters, superscript two (\w in `re`, not in `regex`), a combining
# accent (\w in `regex`, not in `re`), Kelvin sign, long s, dotted and dotless i (ignorecase),
# no-break and em spaces, \x1c and \v (\s in `re`, not in RE2), newline, NUL (the join separator).
NASTY = "٣३５é中²\u0301\u212a\u017f\u0130\u0131\u00a0\u2003\x1c\x0b\n\x00"
ALPHABET = "abkKsSiI019_- ." + NASTY
_FLAG_PREFIX = {"ignorecase": "i", "multiline": "m", "dotall": "s"}


# a quantified group: the shape of the patterns that backtrack exponentially ("(?:.+?)+", "(a|a)*")
_QUANTIFIED_GROUP = re.compile(r"\)(?:[*+?]|\{\d)", re.ASCII)


def _python(pattern: str, text: str, flags: tuple[str, ...]) -> tuple[int, str] | None:
    letters = "".join(sorted(_FLAG_PREFIX[f] for f in flags))
    m = re.search((f"(?{letters})" if letters else "") + pattern, text)
    return None if m is None else (m.start(), m.group())


# --- generated patterns from a safe subset ------------------------------------------------------

_chars = st.sampled_from(ALPHABET)
_literal = _chars.map(re.escape)
_category = st.sampled_from([r"\d", r"\w", r"\s", r"\D", r"\W", r"\S"])
_class_item = st.one_of(_literal, _category, st.sampled_from(["a-z", "0-9", "A-Z", "\u0660-\u0669", "à-ÿ"]))
_class = st.builds(lambda neg, items: "[" + ("^" if neg else "") + "".join(items) + "]",
                   st.booleans(), st.lists(_class_item, min_size=1, max_size=4))
_assertion = st.sampled_from([r"\b", r"\B", "^", "$", r"\A", r"\Z"])
_atom = st.one_of(_literal, _literal, _category, _class, st.just("."), _assertion)
_quantifier = st.sampled_from(["", "", "", "?", "*", "+", "{2}", "{1,3}", "*?", "+?", "{0,2}?"])


def _quantified(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    # an assertion cannot be repeated in `re`: only quantify what can match a character
    return st.builds(lambda a, q: a + q if not re.fullmatch(r"\\[bBAZ]|\^|\$", a) else a, inner, _quantifier)


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(inner, min_size=1, max_size=4).map("".join),
        st.lists(inner, min_size=2, max_size=3).map("|".join),
        st.builds(lambda body, capture, q: ("(" if capture else "(?:") + body + ")" + q,
                  inner, st.booleans(), st.sampled_from(["", "?", "+", "{1,2}"])),
    )


patterns = st.recursive(_quantified(_atom), _extend, max_leaves=8)
flag_sets = st.lists(st.sampled_from(["ignorecase", "multiline", "dotall"]), unique=True, max_size=3).map(tuple)
texts = st.one_of(st.text(_chars, max_size=24), st.text(max_size=16), st.text("ab01 _\n", max_size=16))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns, texts, flag_sets)
@example(r"\d{3}-\d{4}", "call ٣٤٥-٦٧٨٩", ())
@example(r"\b\w+\b", "²\u0301x", ())
@example(r"a$", "a\n", ())
@example(r"\B", "", ())
@example(r"i", "\u0130", ("ignorecase",))
@example(r"[^a]", "A", ("ignorecase",))
@example(r"(?:\b(?:.+?)+a)", "00a00000000000000000\xa0", ())  # 30-60 ms in `regex`: at REGEX_TIMEOUT
def test_search_agrees_with_python_re(pattern: str, text: str, flags: tuple[str, ...]) -> None:
    try:
        expected = _python(pattern, text, flags)
    except re.error:
        with pytest.raises(RegexUnknown, match="invalid regex"):
            regex_search(pattern, text, flags)
        return
    try:
        got = regex_search(pattern, text, flags)
    except RegexUnknown as exc:
        # Bounded time: "(?:\b(?:.+?)+a)" backtracks exponentially in `re` too (20 ms at 21
        # characters); past REGEX_TIMEOUT it is unknown, which fails closed. Only a pattern that
        # repeats a group may run out of time; any other must give `re`'s answer.
        assert "did not finish within" in str(exc) and _QUANTIFIED_GROUP.search(pattern), (pattern, str(exc))
        return
    assert got == expected
    # the probe (many texts joined by NUL at once) finds every text that `re` matches in
    probe = regex_probe(pattern, flags)
    if expected is not None and probe is not None and "\x00" not in text:
        assert probe.search(("\x00x\x00" + text + "\x00y\x00").encode()) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns, st.text(_chars, min_size=1, max_size=24), flag_sets)
def test_a_long_texts_probes_agree_with_python_re(pattern: str, text: str, flags: tuple[str, ...]) -> None:
    """A text of PREFILTER_MIN characters or more is probed twice: with `regex_probe`'s pattern,
    then, where that one matches, with the one exact on the text's pages. Neither may hide a
    match of `re` (a low PREFILTER_MIN runs both on short texts)."""
    try:
        expected = _python(pattern, text, flags)
    except re.error:
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(regexes, "PREFILTER_MIN", 0)
        assert regex_search(pattern, text, flags) == expected


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns, st.lists(texts, min_size=1, max_size=6), flag_sets)
def test_joined_search_finds_what_each_text_does(pattern: str, many: list[str], flags: tuple[str, ...]) -> None:
    """`first_collision` over texts joined by NUL answers like `collides` on each text in turn:
    a separator neither creates nor hides a match (\\b, \\s, ^ and $ next to it, a pattern
    that matches NUL or would run across it)."""
    signal = {"id": "r", "kind": "regex", "value": pattern, "flags": list(flags)}
    try:
        re.compile(pattern)
    except re.error:
        return
    expected: Any = None
    for i, text in enumerate(many):
        try:
            w = collides(signal, text)
        except RegexUnknown as exc:
            expected = ("unknown", str(exc))
            break
        if w is not None:
            expected = (i, w)
            break
    try:
        got: Any = first_collision(signal, many)
    except RegexUnknown as exc:
        got = ("unknown", str(exc))
    assert got == expected


# --- named cases ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "text", "flags"), [
    (r"\d{3}-\d{4}", "ref ٣٤٥-٦٧٨٩", ()),  # Arabic-Indic digits
    (r"\d+", "क्रमांक ३४५", ()),  # Devanagari digits
    (r"\d\d", "ｉｄ ５６", ()),  # fullwidth digits
    (r"\bcafé\b", "un café noir", ()),  # \b around an accented letter
    (r"\w+", "北京市 road", ()),  # CJK letters are \w
    (r"\w+", "x²", ()),  # superscript two is \w for `re`
    (r"a\w", "a\u0301", ()),  # a combining accent is not
    (r"a\sb", "a\u00a0b", ()),  # no-break space
    (r"a\sb", "a\x1cb", ()),  # \x1c is whitespace for `re`, not for RE2
    (r"\bid\b", "naïveid", ()),  # no boundary between ï and i
    (r"KELVIN", "\u212aelvin", ("ignorecase",)),
    (r"i", "\u0130", ("ignorecase",)),
    (r"end$", "the end\n", ()),  # `$` before a final newline
    (r"^b$", "a\nb\nc", ("multiline",)),
    (r"[^\W\d]+", "٣٤x٥y", ()),
])
def test_non_ascii_cases_agree_with_re(pattern: str, text: str, flags: tuple[str, ...]) -> None:
    assert regex_search(pattern, text, flags) == _python(pattern, text, flags)


def test_patterns_python_rejects_are_errors_with_their_position() -> None:
    with pytest.raises(RegexUnknown, match=r"invalid regex '\(unclosed' at position 0: missing \)"):
        regex_search("(unclosed", "text")
    # RE2 syntax that `re` does not read
    with pytest.raises(RegexUnknown, match=r"invalid regex '\\\\pL' at position 0: bad escape"):
        regex_search(r"\pL", "x")
    with pytest.raises(RegexUnknown, match="at position 4"):
        regex_search(r"abc[z-a]", "x")
    with pytest.raises(RegexUnknown, match="unknown flag 'unicode'"):
        regex_search("a", "a", ["unicode"])


def test_the_engines_disagree_where_re_is_followed() -> None:
    """Guards the reason for the rewrite: the engines' own classes are not `re`'s."""
    import re2
    import regex

    assert re2.search(r"\d", "٣") is None and re.search(r"\d", "٣")
    assert regex.search(r"\w", "\u0301", regex.V0) and not re.search(r"\w", "\u0301")
    assert regex_search(r"\d", "٣") == (0, "٣") and regex_search(r"\w", "\u0301") is None


def test_a_context_with_arabic_indic_digits_collides_with_a_digit_regex() -> None:
    """Through the shipped rules: the harness's `re` fires on the context, so the instance is
    contaminated (REJECTED with the surface named), where an ASCII \\d would have scored it."""
    ep = base_episode()
    ep["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": r"\d{3}-\d{4}"})
    ep["context"]["messages"].append({"role": "user", "content": "Call me at ٥٥٥-١٢٣٤ tomorrow."})
    verdict = litmus_rules.load_rules().evaluate(ep)
    assert verdict.verdict == "REJECTED"
    assert any("s2" in r.message and "messages[1]" in r.message for r in verdict.reasons), verdict.reasons
    clean = base_episode()
    clean["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": r"\d{3}-\d{4}"})
    clean["context"]["messages"].append({"role": "user", "content": "Call me tomorrow."})
    assert litmus_rules.load_rules().evaluate(clean).verdict == "SCORED"


@pytest.mark.parametrize(("pattern", "text"), [
    (r"(a|b)\1", "xabba"), (r"(?P<q>['\"]).*?(?P=q)", "say 'hi' now"), (r"(?<=٣)\d", "٢٣٤"),
    (r"(?<!\w)é\w+", "café été"), (r"(?!a)\w+", "aab"), (r"(x)?(?(1)a|b)", "zb xa"),
    (r"(?>a+)b", "aaab"), (r"a++b", "aab"), (r"(?i)(a)\1", "xaA"), (r"(?a)\w+", "é٣x_1"),
    (r"(?a)\b\w", "éx"), (r"(?x) a \s b  # comment", "a\u2003b"), (r"(?s:.)\Z", "x\n"),
    (r"\w+$", "naïve\n"), (r"[^\d\s]+", "٣ ab"), (r"(?i)[^k]+", "\u212a k ok"),
])
def test_constructs_re2_lacks_agree_with_re(pattern: str, text: str) -> None:
    assert regex_search(pattern, text) == _python(pattern, text, ())


def test_a_case_insensitive_backreference_in_non_ascii_text_is_unknown() -> None:
    """`re` compares such a group by its own lower-casing, which no bounded engine reproduces
    exactly: unknown (fail closed), not a guess."""
    with pytest.raises(RegexUnknown, match="case-insensitively in a non-ASCII text"):
        regex_search(r"(\w)\1", "ſS", ["ignorecase"])
    assert regex_search(r"(\w)\1", "xaA", ["ignorecase"]) == (1, "aA")


@pytest.mark.parametrize("pattern, text", [
    (r"a|(?:\D|.*?)+", "I0"),  # a repeated body that can match empty: RE2 iterates differently
    (r"(?:x?)+y", "xxy"),
    (r"(?:a|)*b", "aab"),
])
def test_repeats_of_a_possibly_empty_body_match_as_re_does(pattern: str, text: str) -> None:
    m = re.search(pattern, text)
    assert regex_search(pattern, text) == ((m.start(), m.group()) if m else None)
