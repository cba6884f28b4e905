"""`textchecks.checked_many` (session 22): whether the HTML and percent decoders change each of many
texts, told by one call of the decoder on their join by NUL, is what the check of each text on its
own says: references and escapes at the texts' edges (a reference whose name runs on past the
NUL, a UTF-8 sequence split between two texts, "%00", which makes a NUL), layers nested up to and
past the decoders' limits, non-ASCII texts whose cleaned text holds what the decoder reads."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import textchecks
from litmus_rules.domain.decoding import HTML_MAX_LAYERS, PERCENT_MAX_LAYERS

PIECES = ["&", "&amp", "&amp;", "&lt", "&#", "&#108;", "&#x6c;", "&#0;", "&notin;", "&not", "&ampx", "amp;", "lt;",
          ";", "#", "%", "%2", "%25", "%41", "%6c", "%00", "%C3", "%A9", "%c3%a9", "%u006c", "=3D", "\\u0041", "\\",
          "x", "y", "1", " ", "\n", "é", "％４１", "＆ａｍｐ；", "\u200b", "ﬁ", "&AMP;", "&Amp;"]


def _nested(layers: int, kind: str) -> str:
    text = "%6c" if kind == "percent" else "&#108;"
    for _ in range(layers - 1):
        text = text.replace("%", "%25") if kind == "percent" else text.replace("&", "&amp;")
    return text


NESTED = [_nested(n, kind) for kind, limit in (("percent", PERCENT_MAX_LAYERS), ("html", HTML_MAX_LAYERS))
          for n in (limit - 1, limit, limit + 1, limit + 2)]

texts_st = st.lists(st.one_of(st.lists(st.sampled_from(PIECES), max_size=10).map("".join), st.sampled_from(NESTED)),
                    min_size=textchecks.JOINED_MIN, max_size=24)


def _each(check: str, texts: list[str]) -> list[bool]:
    return [textchecks._CHECKS[check](text) for text in texts]  # (the check itself, no memo)


@settings(max_examples=600, deadline=None)
@given(texts_st, st.sampled_from(sorted(textchecks._JOINED)))
@example(["x &amp"] + ["lt;"] * 7, "html")  # a name that runs on past the NUL
@example(["%C3"] + ["%A9"] * 7, "percent")  # a UTF-8 sequence split between two texts
@example(["%00"] * 8, "percent")  # a NUL made: the texts one by one
@example([_nested(PERCENT_MAX_LAYERS + 1, "percent")] + ["%41"] * 7, "percent")  # one text past the layer limit
@example([_nested(HTML_MAX_LAYERS + 1, "html")] + ["plain"] * 7, "html")
@example(["＆ａｍｐ；"] + ["plain"] * 7, "html")  # only the cleaned text holds a reference
def test_the_join_tells_what_each_text_tells(texts: list[str], check: str) -> None:
    assert textchecks.checked_many(check, texts) == _each(check, texts)


def test_the_joined_call_is_made_once_for_many_texts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    real = textchecks._JOINED["percent"]
    monkeypatch.setitem(textchecks._JOINED, "percent", lambda text: calls.append(len(text)) or real(text))
    texts = [f"arg {i} a%20b" for i in range(100)] + ["plain"] * 100
    assert textchecks.checked_many("percent", texts) == [True] * 100 + [False] * 100
    assert len(calls) == 1
