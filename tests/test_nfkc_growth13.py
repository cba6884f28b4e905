"""NFKC's growth is bounded (transforms.NFKC_MAX_ADDED): a text that NFKC would make many times
longer (U+FDFA is 18 characters under it) has an unknown NFKC form, and the rules reject with a
message that names the text, or the token, and the limit; within the limit NFKC is exact.

Before the limit, 1 M U+FDFA in a tool description took 7 s and 550 MB: each of the text's forms
was 18 M characters.
"""

from __future__ import annotations

import copy
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus_rules
from litmus_rules.domain import formcache, joins, nfkc_growth, normalize, textmemo, transforms, witnesses
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.matching import leaks

LIGATURE = "\ufdfa"  # ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM: 18 characters under NFKC
ADDED = 17  # what NFKC adds to each


@pytest.fixture(autouse=True)
def _fresh_memo():
    textmemo.clear_memo()
    yield
    textmemo.clear_memo()


def test_the_growth_table_is_the_unicode_databases():
    """Every character NFKC makes four or more of is in `_growers`, with what it adds, and lies
    below `_GROWERS_BELOW`; no character gives more than `_MAX_GROWTH`, and none more than four
    under canonical decomposition, whatever follows it (read over every code point of the running
    Unicode database)."""
    table, _ = nfkc_growth._growers()
    found, most = {}, 0
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        n = len(unicodedata.normalize("NFKC", chr(cp)))
        assert len(unicodedata.normalize("NFD", chr(cp))) <= 4
        most = max(most, n)
        if n >= 4:
            found[chr(cp)] = n - 1
            assert cp < nfkc_growth._GROWERS_BELOW, hex(cp)
    assert table == found
    assert most == nfkc_growth._MAX_GROWTH
    assert len(unicodedata.normalize("NFKC", LIGATURE)) == ADDED + 1


def test_the_limit_is_exact_at_its_bound():
    k = transforms.NFKC_MAX_ADDED // ADDED  # adds just under NFKC_MAX_ADDED
    within = LIGATURE * k
    assert transforms.nfkc(within) == unicodedata.normalize("NFKC", within)
    with pytest.raises(LimitUnknown, match=r"NFKC would add .*transforms\.NFKC_MAX_ADDED"):
        transforms.nfkc(LIGATURE * (k + 1))
    # a long text may add as many characters as it has
    long = "x" * (ADDED * 10_000) + LIGATURE * 10_000
    assert transforms.nfkc(long) == unicodedata.normalize("NFKC", long)
    with pytest.raises(LimitUnknown):
        transforms.nfkc(long + LIGATURE * 1_000)


def test_growers_that_add_less_count_what_they_add():
    """U+3300 (SQUARE APAATO) is four characters under NFKC: 3 added, not 17."""
    square = "\u3300"
    assert len(unicodedata.normalize("NFKC", square)) == 4
    n = transforms.NFKC_MAX_ADDED // 3
    assert transforms.nfkc(square * n) == unicodedata.normalize("NFKC", square * n)
    with pytest.raises(LimitUnknown):
        transforms.nfkc(square * (n + 1))


_PIECES = st.sampled_from(["a", "é", "e\u0301", "\u3300", "\ufb01", LIGATURE, "\ufdfb", "\uac00", " ", "Ａ",
                           "\u1f82", "\u0345", "\u0390"])


def test_precomposed_letters_are_not_growers():
    """U+1F82 is four characters under NFD but one under NFKC: polytonic Greek is not refused."""
    text = "\u1f82" * 200_000
    assert transforms.nfkc(text) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=40), st.integers(1, 4000))
def test_within_the_limit_nfkc_is_unicodes(pieces, repeat):
    text = "".join(pieces) * repeat
    expected = unicodedata.normalize("NFKC", text)
    try:
        got = transforms.nfkc(text)
    except LimitUnknown:
        # refused only past the bound: what the large growers add is more than allowed
        table, _ = nfkc_growth._growers()
        added = sum(table.get(c, 0) for c in text)
        assert added > max(len(text), transforms.NFKC_MAX_ADDED)
        return
    assert got == expected


def test_a_joined_run_past_the_limit_is_done_text_by_text():
    """Small texts each within the limit, whose join is not: the haystack's forms are those of
    each text, as a search of one text at a time finds them (nothing raised, the same hits)."""
    each = LIGATURE * 3000  # adds 51 K: within the limit
    texts = tuple(f"{each} note {i}" for i in range(40))
    pieces = joins._each(transforms.nfkc, texts)
    assert pieces == [unicodedata.normalize("NFKC", t) for t in texts]
    canary = "lc-7f3a9e21c4b8"
    texts = texts[:25] + (each + " " + canary.upper(),) + texts[25:]
    hit = witnesses.ranked_leaks(canary, texts)
    assert hit and hit[0][0] == 25
    assert [i for i, t in enumerate(texts) if leaks(canary, t) is not None] == [25]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_text_past_the_limit_is_searched_in_its_other_forms(streamed, monkeypatch):
    """Only the forms made from the NFKC text are unknown: a token in the raw text is found; a
    token in none of the other forms is unknown, never absent. Alike whether the text's forms are
    kept or streamed (past the forms budget)."""
    canary = "lc-5d0c6e2b9a17"
    text = LIGATURE * 100_000 + " " + canary
    if streamed:
        monkeypatch.setattr(normalize, "FORMS_BUDGET_FACTOR", 0)
        monkeypatch.setattr(normalize, "FORMS_BUDGET_EXTRA", 0)
    monkeypatch.setattr(formcache, "_forms_cache", formcache._FormsCache())
    assert isinstance(formcache.text_forms(text), formcache.StreamedForms) is streamed
    witness = leaks(canary, text)
    assert witness is not None and witness.transform == "raw"
    with pytest.raises(LimitUnknown, match="its nfkc form is unknown: NFKC would add"):
        leaks("lc-0000aaaa1111", text)


def _one_by_one(token, texts):
    """What the joined search stands for: each text in order, the first hit, or the first error."""
    for i, text in enumerate(texts):
        try:
            if leaks(token, text) is not None:
                return i
        except LimitUnknown:
            return "unknown", i
    return None


@pytest.mark.parametrize("hostile_at", [0, 7, 30])
def test_a_text_past_the_limit_among_many_is_tested_where_it_stands(hostile_at):
    """In a join, the text whose forms meet the limit is left out of them and tested on its own,
    in order: a hit before it stands (the witness), the limit before any hit makes the search
    unknown, naming that text, as a search of one text at a time has it."""
    canary = "lc-5d0c6e2b9a17"
    texts = [f"plain words {i}, then ï and é" for i in range(40)]
    texts[20] = f"the note says {canary} here"
    texts[hostile_at] = LIGATURE * 100_000
    texts = tuple(texts)
    expected = _one_by_one(canary, texts)
    try:
        got = witnesses.ranked_leaks(canary, texts)
    except LimitUnknown as exc:
        assert expected == ("unknown", exc.index) == ("unknown", hostile_at)
    else:
        assert expected == got[0][0] == 20
        assert hostile_at > 20


def test_a_text_past_the_limit_in_a_join_is_named_by_its_index():
    texts = ("plain words", LIGATURE * 100_000, "more words")
    with pytest.raises(LimitUnknown) as caught:
        joins._each(transforms.nfkc, texts)
    assert caught.value.index == 1
    assert not caught.value.needle


# --- the rules: fail closed, with the text (or token) named -------------------------------------


@pytest.fixture(scope="module")
def rules():
    return litmus_rules.load_rules()


@pytest.fixture(scope="module")
def example():
    from litmus_rules.io.load import iter_episodes

    loaded = next(iter(iter_episodes(["examples/clean-structured.yaml"])))
    assert loaded.data is not None
    return loaded.data


def _messages(verdict):
    return {r.rule: r.message for r in verdict.reasons}


def test_a_tool_description_past_the_limit_rejects_naming_it(rules, example):
    episode = copy.deepcopy(example)
    assert rules.evaluate(episode).verdict == "SCORED"
    episode["context"]["tools"][0]["description"] = LIGATURE * 200_000
    # not injected, no rule searches it (canaries are looked for in injected surfaces only)
    assert rules.evaluate(episode).verdict == "SCORED"
    episode["context"]["tools"][0]["injected"] = True
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED"
    messages = _messages(verdict)
    assert messages, verdict
    for message in messages.values():
        assert "context.tools[0].description (200 K characters)" in message
        assert "transforms.NFKC_MAX_ADDED" in message


def test_a_null_transcript_past_the_limit_rejects_naming_it(rules, example):
    episode = copy.deepcopy(example)
    episode["controls"]["null"]["transcript"] = "I cannot help. " + LIGATURE * 200_000
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED"
    message = _messages(verdict)["null_control_clean"]
    assert "the text (" in message and "NFKC would add 3.4 M characters" in message


def test_a_canary_in_a_text_past_the_limit_is_a_violation_with_its_witness(rules, example):
    episode = copy.deepcopy(example)
    canary = episode["canaries"][0]["value"]
    episode["context"]["tools"][0]["description"] = LIGATURE * 200_000 + f" then {canary}"
    episode["context"]["tools"][0]["injected"] = True
    verdict = rules.evaluate(episode)
    reason = next(r for r in verdict.reasons if r.rule == "canary_not_derivable")
    assert reason.kind == "violation", reason.message
    assert "context.tools[0].description" in reason.message


def test_a_canary_past_the_limit_is_named_as_the_token(rules, example):
    episode = copy.deepcopy(example)
    episode["canaries"].append({"value": LIGATURE * 200_000})
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED"
    messages = _messages(verdict)
    assert any("`leak`: the token: NFKC would add" in m for m in messages.values()), messages
