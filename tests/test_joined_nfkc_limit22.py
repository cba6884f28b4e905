"""The NFKC limit is each text's, in a join too (session 22). It grows with a text's length
(transforms.NFKC_MAX_ADDED: as many characters as the text has, at least 65,536), so a join of
texts within its own limit may hold a text past its own: 4,000 U+FDFA (68 K characters added to
4 K) among 90 KB of other texts. The join used to derive that text's NFKC forms and search them as
if known, and a search found no leak where the search of each text in turn finds its form unknown:
a fail-open answer. Now the text's forms are unknown in the join as on its own, and every search
answers as text by text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus_rules
from litmus_rules.domain import joined, nfkc_growth, textmemo, transforms
from litmus_rules.domain.matching import collides, first_collision, first_leak, leaks

from _helpers import base_episode, first_one_by_one, forget_searches, search_outcome

TOKEN = "lc-5f0e9a1d7c3b"
PAST = "\ufdfa" * 4_000 + " words"  # alone: NFKC would add 68 K characters to 4 K, past its limit
WITHIN = "\ufdfa" * 3_000  # alone: adds 51 K, within the limit of 65,536
FILLER = "é" * 30_000  # non-ASCII, small enough to be joined (textmemo.MEMO_MIN), no growth


@pytest.mark.parametrize("texts", [
    [FILLER, FILLER + "a", FILLER + "b", PAST, "plain tail"],
    [FILLER, PAST, FILLER + "a", FILLER + "b", "tail " + TOKEN],  # a hit after it: the limit comes first
    [FILLER, FILLER + " " + TOKEN, PAST],  # a hit before it stands
    [FILLER, WITHIN, FILLER + "a", WITHIN, FILLER + "b"],  # growers in all past the limit, none alone
])
def test_a_text_past_its_own_limit_inside_a_join_within_its_limit_is_unknown(texts: list[str]) -> None:
    expected = search_outcome(lambda: first_one_by_one(lambda t: leaks(TOKEN, t), texts))
    forget_searches()
    assert search_outcome(lambda: first_leak(TOKEN, texts)) == expected
    signal = {"id": "s", "kind": "substring", "value": TOKEN}
    expected = search_outcome(lambda: first_one_by_one(lambda t: collides(signal, t), texts))
    forget_searches()
    assert search_outcome(lambda: first_collision(signal, texts)) == expected


def test_the_join_is_within_its_own_limit_but_not_each_text() -> None:
    """The case the tests above stand on: NFKC of the join alone would not raise."""
    join = "\0".join([FILLER, FILLER + "a", FILLER + "b", PAST])
    with textmemo.transient():  # (as joins.py asks it: not kept by the join)
        assert transforms.nfkc(join)  # within the join's own limit
        with pytest.raises(nfkc_growth.LimitUnknown), nfkc_growth.joined_texts():
            transforms.nfkc(join)
    with pytest.raises(nfkc_growth.LimitUnknown):
        transforms.nfkc(PAST)


def test_the_rules_see_the_description_past_its_limit_as_unknown() -> None:
    episode: dict[str, Any] = base_episode()
    tools = episode["context"]["tools"]
    tools += [{"name": f"t{i}", "description": text, "injected": True}
              for i, text in enumerate([FILLER, FILLER + "a", FILLER + "b", PAST])]
    forget_searches()
    verdict = litmus_rules.load_rules().evaluate(episode)
    assert verdict.verdict == "REJECTED"
    assert any("NFKC would add 68 K characters to a text of 4006 characters" in r.message for r in verdict.reasons)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([FILLER, PAST, WITHIN, "plain", "x " + TOKEN, "\ufdfa" * 200 + TOKEN]),
                min_size=1, max_size=6))
def test_first_leak_answers_as_text_by_text(texts: list[str]) -> None:
    expected = search_outcome(lambda: first_one_by_one(lambda t: leaks(TOKEN, t), texts))
    forget_searches()
    assert search_outcome(lambda: first_leak(TOKEN, texts)) == expected


def test_the_texts_past_their_limits_are_taken_apart_and_the_others_stay_joined(monkeypatch: Any) -> None:
    """A join naming its texts past their own limits (`LimitUnknown.pieces`): those are derived on
    their own (unknown), the others joined again, not one by one."""
    texts = tuple([f"arg {i} é words" for i in range(200)] + [FILLER, FILLER + "a", FILLER + "b"])
    texts = texts[:50] + (PAST,) + texts[50:120] + (PAST + " again",) + texts[120:]
    from litmus_rules.domain import joins

    alone: list[int] = []
    real = joins._transformed
    monkeypatch.setattr(joins, "_transformed", lambda transform, pieces, i, unknown: alone.append(i) or real(
        transform, pieces, i, unknown))
    forget_searches()
    hay = joined.Haystack(texts)
    assert hay.form("normalised") is not None
    assert hay._joins.unknown == {50, 121}
    assert set(alone) == {50, 121}
    assert 50 in hay.exact and 121 in hay.exact
