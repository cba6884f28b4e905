"""Unicode normalisation in linear time (issue 13): `canonical_order.normalize` gives what
`unicodedata.normalize` gives, on texts with long runs of combining marks out of order (which
unicodedata puts in order in quadratic time), and the runs it puts in order itself are found by a
class that holds every character that unicodedata decomposes to non-starters only."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import canonical_order, transforms
from litmus_rules.domain.textmemo import re2_module, re2_options

# Marks of many combining classes, marks that decompose (U+0344 to two, U+0340 to one), marks of
# class 0 (U+0903, U+20DD), the Tibetan vowel signs that decompose to marks only, and the
# half-width kana sound marks (starters that NFKC makes marks).
_MARKS = ("\u0300\u0301\u0316\u0327\u0328\u0334\u0338\u0344\u0340\u0345\u035c\u0361\u05b0\u0903"
          "\u093c\u0f73\u0f75\u0f81\u1dc0\u20dd\u3099\u309a\uff9e\uff9f\U0001d165\U0001d16e\U0001e94a")
# Starters that compose with marks or decompose to a letter and marks, Hangul, a kana that takes a
# sound mark, a character NFKC changes, a lone surrogate.
_BASES = ["a", "e", "o", "\u1e09", "\u00c5", "\u1100", "\u1161", "\uac00", "\u30ab", "\uff76", "\ufb01",
          "\u2126", " ", "x\ud800y", "\U0001d400"]

_RUN = st.text(alphabet=_MARKS, min_size=canonical_order.RUN_MIN - 2, max_size=4 * canonical_order.RUN_MIN)
_TEXTS = st.lists(st.one_of(st.sampled_from(_BASES), _RUN, st.text(alphabet=_MARKS, max_size=6)),
                  max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]))
def test_normalize_is_unicodedata_normalize(text: str, form: str) -> None:
    assert canonical_order.normalize(form, text) == unicodedata.normalize(form, text)


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_a_long_run_out_of_order(form: str) -> None:
    """The shape that took unicodedata quadratic time: thousands of marks of two classes
    alternating, in the runs of several letters (and a kana whose sound mark follows them)."""
    text = "".join(base + "\u0301\u0316" * 300 + "\uff9e\u0345" * 40 for base in ("a", "\u1e09", "\u30ab", "x"))
    assert canonical_order.normalize(form, text) == unicodedata.normalize(form, text)


def test_a_long_stretch_is_given_to_unicodedata_in_order() -> None:
    """What makes it linear: the text that unicodedata then reads is decomposed and its long
    stretches in canonical order (its own quick check says so), so that its insertion sort moves
    nothing far."""
    text = "a" + "\u0301\u0316\u0344\u0345" * 200 + "b\u0316\u0301"
    for decomposition in ("NFD", "NFKD"):
        ordered = canonical_order._decomposed_in_order(text, decomposition)
        assert unicodedata.is_normalized(decomposition, ordered[:-2])  # all but a short stretch
        assert ordered == unicodedata.normalize(decomposition, text)[:-2] + "\u0316\u0301"


def test_a_text_in_order_already_is_left_to_unicodedata(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long run that is decomposed and in order already (one mark repeated, or a form that
    unicodedata has ordered) is not decomposed again: unicodedata reads it in linear time."""
    def refuse(text: str, decomposition: str) -> str:
        raise AssertionError("decomposed again")

    monkeypatch.setattr(canonical_order, "_decomposed_in_order", refuse)
    for text in ("a" + "\u0301" * 500, "a" + "\u0316" * 200 + "\u0301" * 300, "\u3099" * 100):
        for form in ("NFC", "NFD", "NFKC", "NFKD"):
            assert canonical_order.normalize(form, text) == unicodedata.normalize(form, text)


def test_the_transforms_normalise_through_it() -> None:
    text = "see a" + "\u0301\u0316" * 100 + " done"
    assert transforms.nfkc(text) == unicodedata.normalize("NFKC", text)
    assert transforms.skeleton(text) == transforms.skeleton(unicodedata.normalize("NFD", text))


def _decomposes_to_non_starters_only(char: str) -> bool:
    return any(
        (parts := unicodedata.normalize(form, char)) and all(map(unicodedata.combining, parts))
        for form in ("NFD", "NFKD"))


def test_the_run_class_holds_every_character_that_may_make_non_starters_only() -> None:
    """Over every code point: each non-starter, and each starter that decomposes to non-starters
    only, is in the class that finds the runs (RE2's data may be of another Unicode version than
    unicodedata's: this is where it would show)."""
    one = re2_module().compile(r"[\p{M}\x{FF9E}\x{FF9F}]", re2_options())
    missed = [f"U+{cp:04X}" for cp in range(sys.maxunicode + 1)
              if not 0xD800 <= cp < 0xE000
              and (unicodedata.combining(chr(cp)) or _decomposes_to_non_starters_only(chr(cp)))
              and one.fullmatch(chr(cp).encode("utf-8")) is None]
    assert missed == []
