"""A short text's forms are first looked at all at once, joined by NUL (matching.py,
`_collision_absent` and `_absent`): a superset of the searches of each form, so the answers are
those of searching the forms one by one: the same witness, the same unknown. Property-tested here
against the one-by-one search on texts made of escapes, paths, encodings, non-ASCII and parts of
the signal or token, with substring and regex signals (anchors, \\b, classes, ignorecase,
backreferences); `regexes.regex_absent` alone against `regex_search` on each text.
"""

from __future__ import annotations

import base64
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import matching, partial
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.formcache import _forms_cache
from litmus_rules.domain.normalize import Undecodable
from litmus_rules.domain.regexes import RegexUnknown, regex_absent, regex_search

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = ["transfer_ok_", "lc-0042-ab", "secret", "Token", "TOKEN", "x", "é", "Ж", "ǅ", "ß", "ſ", "K", "\u200b",
         "\u00ad", "\U000e0041", "ｌｃ", "ⅼc", "/", "\\", "..", "C:", "file:", "://", " ", "\n", "\t", '"', "<",
         "%", "&", ";", "#", "0", "7", "a", "A", "_", "-", ".", "$", "^", "\ud800", "\x00"]


_LOOKALIKES = str.maketrans("aceopxTOKENl", "асеорхТОКЕΝⅼ")  # Cyrillic, Greek, a Roman numeral


def _escaped(word: str) -> st.SearchStrategy[str]:
    return st.sampled_from([
        word,
        "".join(f"\\u{ord(c):04x}" for c in word if ord(c) < 0x10000),
        "".join(f"&#{ord(c)};" for c in word),
        "".join(f"%{b:02X}" for b in word.encode("utf-8", "surrogatepass")),
        "".join(f"\\x{ord(c):02x}" for c in word if ord(c) < 256),
        base64.b64encode(word.encode("utf-8", "surrogatepass")).decode(),
        word.encode("utf-8", "surrogatepass").hex(),
        word[::-1],
        word.upper(),
        word.translate(_LOOKALIKES),
        "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word),  # fullwidth
        "C:\\d\\..\\" + word,
        "/srv/./" + word + "//x",
    ])


def _texts(vocabulary: list[str]) -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(WORDS), st.sampled_from(vocabulary).flatmap(_escaped), st.text(max_size=4))
    return st.lists(piece, max_size=12).map("".join).filter(lambda t: len(t) <= matching.JOINED_TEXT_MAX)


SUBSTRINGS = ["transfer_ok_123456", "lc-0042-ab", "secret token", "Token", "é-x_1", "ß/x", "a", "pox", "cEl"]
# each regex with text it matches: the texts are made of them, disguised
REGEXES = {r"\btransfer_ok_[0-9]{6}\b": "transfer_ok_314159", r"^lc-\d+": "lc-7", r"ab$": "ab", r"[^a-z]{3}": "A1-",
           r"(?i)token": "TOKEN", r"(a)\1": "aa", r"secret\s+token": "secret token", r"\bé\w+": "éclair",
           r"x|y": "y", r"\d{2,}": "42", r"[ǅß]": "ß", r"lc-0042-ab": "lc-0042-ab", r"(?:C:)?/x": "C:/x", r"a*": ""}
FLAGS = [(), ("ignorecase",), ("i", "multiline")]


def _outcome(call: Any) -> Any:
    try:
        return call()
    except (LimitUnknown, RegexUnknown) as exc:
        return (type(exc).__name__, str(exc))


@st.composite
def signal_and_text(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    kind = draw(st.sampled_from(["substring", "regex"]))
    value = draw(st.sampled_from(SUBSTRINGS if kind == "substring" else sorted(REGEXES)))
    signal = {"id": "s", "kind": kind, "value": value, "flags": list(draw(st.sampled_from(FLAGS)))}
    match = value if kind == "substring" else REGEXES[value]
    return signal, draw(_texts([match, match.upper(), match[: len(match) // 2 + 1], match[1:]]))


@SETTINGS
@given(signal_and_text(), st.sampled_from([6, 3, 1]))
def test_a_collision_is_the_one_found_form_by_form(case: tuple[dict[str, Any], str], min_len: int) -> None:
    signal, text = case
    joined = _outcome(lambda: matching.collides(signal, text, min_len))
    with mock.patch.object(matching, "_collision_absent", lambda *args: False):
        one_by_one = _outcome(lambda: matching.collides(signal, text, min_len))
    assert joined == one_by_one


@SETTINGS
@given(st.sampled_from(["lc-0042-ab", "transfer_ok_1", "Token-77x", "éclair-9", "ab"]).flatmap(
    lambda token: st.tuples(st.just(token), _texts([token, token[:4], token[2:]]))))
def test_a_leak_is_the_one_found_form_by_form(case: tuple[str, str]) -> None:
    token, text = case
    joined = _outcome(lambda: matching.leaks(token, text))
    with mock.patch.object(matching, "_absent", lambda *args: False):
        one_by_one = _outcome(lambda: matching.leaks(token, text))
    assert joined == one_by_one


@SETTINGS
@given(st.sampled_from(sorted(REGEXES)), st.sampled_from(FLAGS),
       st.lists(_texts(SUBSTRINGS + list(REGEXES.values())), min_size=1, max_size=5))
def test_regex_absent_only_where_no_text_matches(pattern: str, flags: tuple[str, ...], texts: list[str]) -> None:
    if regex_absent(pattern, flags, "\0".join(texts)):
        for text in texts:
            assert regex_search(pattern, text, flags) is None, text


def test_the_joined_look_settles_a_text_without_searching_its_forms() -> None:
    # a text of 20-odd forms in which the signal is nowhere: no form is searched one by one
    text = "see \\x2a\\u0810 &#810; %2A C:\\d810\\..\\x"
    signal = {"id": "s", "kind": "regex", "value": r"\btransfer_ok_[0-9]{6}\b"}
    with mock.patch.object(matching, "_regex_in_form", side_effect=AssertionError("searched")):
        assert matching.collides(signal, text) is None
    found = matching.collides(signal, text + " \\u0074ransfer_ok_123456")
    assert found is not None and found.transform.startswith("json unescaped"), found


def test_an_undecodable_form_still_makes_nothing_found_unknown() -> None:
    # a form that could not be derived: nothing found in the others is unknown, as one by one
    text = "x" + "\\u0041" * 3
    with mock.patch.object(matching, "text_forms", _with_undecodable):
        for signal in ({"id": "s", "kind": "substring", "value": "zzzzzz"}, {"id": "r", "kind": "regex", "value": "zz+"}):
            outcome = _outcome(lambda: matching.collides(signal, text))
            assert outcome[0] == "LimitUnknown", outcome
        assert _outcome(lambda: matching.leaks("zzzzzzzz", text))[0] == "LimitUnknown"


def _with_undecodable(text: str) -> tuple[Any, ...]:
    return (*_forms_cache.get(text), Undecodable("nfkc", "a limit, for the test"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text("abcé\0-", min_size=3, max_size=3), min_size=17, max_size=60, unique=True),
       st.text("abcé\0- x", min_size=0, max_size=1200))
def test_many_grams_in_a_longer_text_are_found_as_by_each_position(gram_list: list[str], text: str) -> None:
    # past partial.GRAM_SET_RE2_MIN characters, by one RE2 scan instead of a set of the text's grams
    literal_grams = frozenset(gram_list)
    expected = any(text[i:i + 3] in literal_grams for i in range(len(text) - 2))
    assert partial._shares_gram(literal_grams, text, 3) == expected
