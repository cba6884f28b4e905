"""Issue 13 (CPU per episode): the shortcuts of the domain's search agree with what they shorten.

- a list of surfaces read in C-level passes (every element a dict with a string `text`) gives the
  texts, owners and cost the element-by-element reading gives, and anything else is read element
  by element;
- a reject's ranked witnesses are the same whether or not `first_match` found the first hit
  before (the collection goes on past that hit instead of searching again);
- a haystack's decoder checks, kept by text, give the answers of fresh checks, and what they keep
  stays within its bounds.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.cache import BoundedCache
from litmus_rules.domain import joined, matching, surface_texts, textchecks, witnesses
from litmus_rules.lang.values import UNKNOWN

TOKEN = "lc-7f3a9b2c1d0e"
PIECES = [TOKEN, TOKEN.upper(), "ｌｃ-7f3a9b2c1d0e", base64.b64encode(TOKEN.encode()).decode(),
          "/tmp/./x", "a&amp;b", "%41%42", "plain words", "7f3a9b", "", "back\\slash", "Ünïcode"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=3).map(" ".join)

SURFACE = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=8), "origin": st.just("o"), "injected": st.booleans()}),
    st.fixed_dictionaries({"origin": st.just("o")}),  # no text: unknown
    st.fixed_dictionaries({"text": st.integers()}),  # a text that is not a string
    st.fixed_dictionaries({"text": st.just(UNKNOWN)}),
    st.none(),
    st.integers(),  # not an object at all
    st.text(max_size=4),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(SURFACE, max_size=6))
def test_surface_texts_read_in_c_passes_agree_with_the_element_by_element_reading(surfaces: list[Any]) -> None:
    fast = surface_texts.plain_surface_texts(surfaces)
    slow = surface_texts.each_surface_text(surfaces)
    if fast is not None:
        assert fast == slow
    else:  # the shortcut declines only lists it cannot read whole
        assert not surfaces or slow.unknown or slow.soft or slow.hard or any(
            s.__class__ is not dict or s.get("text").__class__ is not str for s in surfaces)
    assert surface_texts.surface_texts(surfaces) == slow


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXTS, min_size=1, max_size=8), st.lists(st.booleans(), max_size=8))
def test_ranked_witnesses_are_the_same_after_a_first_match(texts: list[str], injected: list[bool]) -> None:
    joined._haystacks.clear()
    fresh = witnesses.ranked_leaks(TOKEN, texts, injected)
    joined._haystacks.clear()
    first = matching.first_leak(TOKEN, texts)  # the first hit, kept with the haystack
    after = witnesses.ranked_leaks(TOKEN, texts, injected)
    assert after == fresh
    assert (first is None) == (not fresh)
    if first is not None:
        assert first in fresh
    signal = {"id": "s", "kind": "substring", "value": TOKEN}
    joined._haystacks.clear()
    fresh_c = witnesses.ranked_collisions(signal, texts, 6, injected)
    joined._haystacks.clear()
    matching.first_collision(signal, texts)
    assert witnesses.ranked_collisions(signal, texts, 6, injected) == fresh_c


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXTS, min_size=1, max_size=8))
def test_kept_decoder_checks_answer_as_fresh_ones(texts: list[str]) -> None:
    textchecks._checked_memo.clear()
    fresh = joined.Haystack(tuple(texts)).changed
    again = joined.Haystack(tuple(reversed(texts))).changed  # the same texts, their checks kept
    assert again == sorted(len(texts) - 1 - i for i in fresh)
    # and the search answers as testing each text in order
    expected = next(((i, w) for i, t in enumerate(texts) if (w := matching.leaks(TOKEN, t)) is not None), None)
    joined._haystacks.clear()
    assert matching.first_leak(TOKEN, texts) == expected


def test_kept_decoder_checks_stay_within_their_bounds(monkeypatch: Any) -> None:
    monkeypatch.setattr(textchecks, "_checked_memo", BoundedCache(8, 4096))
    texts = [f"/tmp/{i}/./file&amp;{i}" for i in range(50)]
    first = joined.Haystack(tuple(texts)).changed
    assert len(textchecks._checked_memo) <= 8
    assert textchecks._checked_memo._weight <= max(4096, 64 + max(map(len, texts)))
    assert joined.Haystack(tuple(texts)).changed == first == list(range(50))  # evicted answers made again
