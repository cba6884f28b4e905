"""Markup and line wraps inside a word (domain/markup.py): a token split by an HTML tag, a
Markdown marker, a string concatenation or a hyphen line wrap is found ("markup removed"); markup between words changes
nothing; a search of many texts at once (joined.py) tests on its own every text it changes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain.markup import markup_hint, unwrap_markup
from litmus_rules.domain.matching import leaks
from _helpers import assert_changed_texts_are_not_plain, assert_hint_finds_changes

TOKEN = "lc-5f0e9a1d7c3b"


@pytest.mark.parametrize("text", [
    "lc-5f<b>0e9a</b>1d7c3b", "lc-5f<span class='x'>0e9a1d</span>7c3b", "lc-5f<!-- note -->0e9a1d7c3b",
    "lc-5f0e<br/>9a1d7c3b", "lc-5f**0e9a**1d7c3b", "lc-`5f0e9a`1d7c3b", "lc-5f~~0e9a~~1d7c3b", "lc-5f__0e9a__1d7c3b",
    "lc-\n5f0e9a1d7c3b", "lc-\n        5f0e9a1d7c3b", "lc-\r\n  5f0e9a1d7c3b",
    '"lc-5f" + "0e9a1d7c3b"', "'lc-5f0e'+'9a1d7c3b'", "'lc-5f' '0e9a' '1d7c3b'",  # string concatenation
])
def test_a_token_split_by_markup_is_found(text: str) -> None:
    witness = leaks(TOKEN, f"The reference is {text}. Thanks.")
    assert witness is not None and witness.transform == "markup removed", witness


def test_a_hyphen_line_wrap_keeps_the_hyphen() -> None:
    assert unwrap_markup("a well-\n    known tool") == "a well-known tool"


@pytest.mark.parametrize("text", [
    "**bold** text and `code` here", "~~gone~~ now", "<b>bold</b> and <i>more</i>", "- item\n- item",
    "snake_case_name", "x < y and y > z", "2 * 3 ** 4", "end of line\nnext line", "a -\nb", "",
    "it's 'a' and don't", '{"a": "b", "c": "d"}', '["x", "y"]', "'a' + 1", "a___b", "name_____here", "2___",
])
def test_markup_between_words_changes_nothing(text: str) -> None:
    assert unwrap_markup(text) == text


_PIECES = st.sampled_from([
    "lc", "-", "5f", "0e9a", "1d7c3b", "<b>", "</b>", "<!-- x -->", "<br/>", "**", "__", "`", "~~", "*", "_",
    "\n", "\r\n", "  ", " ", "\t", "<", ">", "é", "ｌｃ", "\u200b", "\x00", "word", "x<y", "a>b",
    '"', "'", " + ", "+",
])
_TEXTS = st.lists(st.lists(_PIECES, max_size=14).map("".join), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_TEXTS)
def test_the_hint_is_found_wherever_markup_is_removed(texts: list[str]) -> None:
    assert_hint_finds_changes(texts, lambda form: unwrap_markup(form) != form, markup_hint())


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_TEXTS)
def test_a_text_markup_changes_is_never_plain(texts: list[str]) -> None:
    assert_changed_texts_are_not_plain(texts, lambda text: unwrap_markup(text) != text, TOKEN)
