"""The forms a streamed text keeps are packed in the narrowest of Latin-1 and UTF-16 that holds
them, else UTF-8 (formcache._packed, session 22): each comes back as it was, lone surrogates and
characters past the BMP included."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import formcache

every_character = st.characters(codec=None, exclude_categories=())


@settings(max_examples=500, deadline=None)
@given(st.text(every_character, max_size=60))
@example("")
@example("plain ASCII")
@example("é and ÿ")  # Latin-1
@example("ﬁ ǅ Σ")  # UTF-16
@example("𝐱 past the BMP")  # a surrogate pair in UTF-16
@example("\ud83d\ude00")  # a lone high surrogate then a lone low one: not one character
@example("a\udc80b")  # a lone surrogate (a decoded form may hold one)
def test_a_kept_form_comes_back_as_it_was(text: str) -> None:
    data, codec = formcache._packed(text)
    kept = ("path", "path", formcache._zstd()[0].compress(data), codec)
    form = formcache._form(kept)
    assert isinstance(form, formcache.Form)
    assert form.text == text and form.views == (("path", "path"),)


def test_each_text_is_packed_in_the_narrowest_codec_that_holds_it() -> None:
    assert formcache._packed("é")[1] == "latin-1"
    assert formcache._packed("ﬁ")[1] == "utf-16-le"
    assert formcache._packed("𝐱")[1] == "utf-16-le"
    assert formcache._packed("\ud83d\ude00")[1] == "utf-8"  # UTF-16 would read the two as one character
