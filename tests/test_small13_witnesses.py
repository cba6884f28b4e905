"""The ranked witnesses of a few small texts, found text by text (`witnesses._collect_each`), are
the ones the joined pass finds (`witnesses._collect_joined`): same hits, same ranking, same error."""

from __future__ import annotations

import base64
import contextlib
import html
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import witnesses
from litmus_rules.domain.builtins import REGISTRY

TOKEN = "QZX_MARK_7"
SIGNAL_TEXT = "wire funds now"


def _variants(word: str) -> list[str]:
    return [
        word, f"see {word} now", word.lower(), word.upper(),
        base64.b64encode(f"x {word} y".encode()).decode(),
        urllib.parse.quote(f"a {word} b"), html.escape(f"<b>{word}</b>").replace("_", "&#95;"),
        word.replace("_", "\\u005f"), "\u200b".join(word), "".join(chr(0xFEE0 + ord(c)) if c.isalnum() else c for c in word),
        f"/tmp/{word}/../x", f"C:\\dir\\{word}", f"a\x00{word}", word[:-1], f"{word}_V2 build",
        word.replace("A", "\u0410").replace("o", "\u043e"),  # Cyrillic look-alikes
    ]


def _html_layers(text: str, layers: int) -> str:
    out = "".join(f"&#{ord(c)};" for c in text)
    for _ in range(layers - 1):
        out = out.replace("&", "&amp;")
    return out


# past decoding.HTML_MAX_LAYERS (8): a text whose decoded form is unknown (LimitUnknown unless a hit)
_TOO_DEEP = [_html_layers("no", 9), _html_layers(TOKEN, 9)]
_PIECES = [*_variants(TOKEN), *_variants(SIGNAL_TEXT), "nothing here", "a marker pen", "funds", "wire-funds-now",
           "bGVhayBtZQ==", "%zz", "&amp;", "\\", "é", "\ud800", *_TOO_DEEP]
_TEXTS = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3).map(" ".join)
_TEXT_LISTS = st.lists(_TEXTS, max_size=10)
_FLAGS = st.lists(st.booleans(), max_size=10)


@contextlib.contextmanager
def _path(joined: bool) -> Iterator[None]:
    """Every search one by one (SMALL_TEXTS large), or every search joined (SMALL_TEXTS 0)."""
    saved = witnesses.SMALL_TEXTS, witnesses.SMALL_CHARS
    witnesses.SMALL_TEXTS, witnesses.SMALL_CHARS = (-1, -1) if joined else (10**9, 10**9)
    try:
        yield
    finally:
        witnesses.SMALL_TEXTS, witnesses.SMALL_CHARS = saved


def _outcome(search: Callable[[], Any]) -> Any:
    try:
        return "ok", search()
    except Exception as exc:  # the same error, naming the same text
        return "raised", type(exc).__name__, str(exc), getattr(exc, "index", None)


def _both(search: Callable[[], Any]) -> tuple[Any, Any]:
    with _path(joined=True):
        joined = _outcome(search)
    with _path(joined=False):
        each = _outcome(search)
    return joined, each


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=_TEXT_LISTS, flags=_FLAGS, token=st.sampled_from([TOKEN, TOKEN.lower(), "MARK", "x"]))
def test_leaks_one_by_one_are_the_joined_ones(texts: list[str], flags: list[bool], token: str) -> None:
    joined, each = _both(lambda: witnesses.ranked_leaks(token, texts, flags))
    assert joined == each


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=_TEXT_LISTS,
    flags=_FLAGS,
    signal=st.sampled_from([
        {"kind": "substring", "value": SIGNAL_TEXT}, {"kind": "substring", "value": TOKEN, "flags": ["ignorecase"]},
        {"kind": "substring", "value": "QZX_MARK_7_V2 build"}, {"kind": "substring", "value": ""},
        {"kind": "regex", "value": r"wire\s+funds"}, {"kind": "regex", "value": r"(?i)qzx_mark_\d"},
        {"kind": "regex", "value": r"^nothing"}, {"kind": "regex", "value": r"(a+)+\1b"},
    ]),
    min_len=st.sampled_from([4, 6, 40]),
)
def test_collisions_one_by_one_are_the_joined_ones(texts: list[str], flags: list[bool], signal: dict[str, Any],
                                                   min_len: int) -> None:
    joined, each = _both(lambda: witnesses.ranked_collisions({"id": "s", **signal}, texts, min_len, flags))
    assert joined == each


def test_an_undecodable_text_before_a_hit_is_raised_after_it_ends_the_search() -> None:
    before = _both(lambda: witnesses.ranked_leaks(TOKEN, ["a", _TOO_DEEP[0], TOKEN], [False, False, False]))
    assert before[0] == before[1] and before[1][0] == "raised" and before[1][3] == 1
    after = _both(lambda: witnesses.ranked_leaks(TOKEN, [f"x {TOKEN}", _TOO_DEEP[0], TOKEN], [False, False, True]))
    assert after[0] == after[1] and [i for i, _ in after[1][1]] == [0]


def test_a_hit_is_found_either_way_and_ranked_the_same() -> None:
    texts = ["nothing", base64.b64encode(f"x {TOKEN} y".encode()).decode(), f"see {TOKEN}", TOKEN]
    joined, each = _both(lambda: witnesses.ranked_leaks(TOKEN, texts, [False, True, False, True]))
    assert joined == each
    assert [i for i, _ in each[1]] == [3, 1, 2]  # verbatim injected, decoded injected, verbatim elsewhere


@pytest.mark.parametrize("count", [witnesses.SMALL_TEXTS, witnesses.SMALL_TEXTS + 1])
def test_the_surface_builtin_gives_the_same_fact_at_the_bound(count: int) -> None:
    surfaces = [{"origin": f"s{i}", "text": f"note {i}", "injected": i % 2 == 0} for i in range(count)]
    surfaces[-1]["text"] = f"see {TOKEN}"
    joined, each = _both(lambda: REGISTRY["leak"].impl(TOKEN, surfaces))
    assert joined == each and each[0] == "ok" and each[1]["origin"] == f"s{count - 1}"


def test_a_new_forms_cache_starts_a_new_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forms derived afresh under another limit (a new forms cache, as the limit tests make) are not
    answered from what the memo remembered under the old one."""
    from litmus_rules.domain import decoding, formcache

    text = _html_layers(TOKEN, 4)
    assert witnesses.ranked_leaks(TOKEN, [text], [True])  # decoded under the default limit (8 layers)
    monkeypatch.setattr(decoding, "HTML_MAX_LAYERS", 3)
    monkeypatch.setattr(formcache, "_forms_cache", formcache._FormsCache())
    with pytest.raises(Exception, match="HTML_MAX_LAYERS"):
        witnesses.ranked_leaks(TOKEN, [text], [True])
