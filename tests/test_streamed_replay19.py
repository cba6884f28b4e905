"""Streamed forms kept compressed between searches (formcache.StreamedForms): a text whose forms
are too large to keep derives them once, and the next search of it reads them back. Whatever
the store holds, drops or never held, every iteration gives the very derivations, in order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from litmus_rules.domain import formcache, normalize
from litmus_rules.domain.formcache import StreamedForms
from litmus_rules.domain.normalize import Form, Undecodable

# non-ASCII, escapes of several kinds, a lone surrogate, a path, base64
TEXT = ("Ｆｕｌｌ wіdth ﬁle:///tmp//x \\u0041 \ud800 &#x41; %41 ǅ e\u0301 "
        "Y2FuYXJ5LXRva2Vu \u200b/etc/./passwd " * 40)


def _listed(forms: Any) -> list[Any]:
    return [item if isinstance(item, Undecodable) else (item.text, item.views) for item in forms]


def _expected(text: str) -> list[Any]:
    return [item if isinstance(item, Undecodable) else (item[1], ((item[0], item[2]),))
            for item in normalize.derivations(text)]


class Counted:
    """How many derivations formcache reads from `normalize.derivations`, in all; those at the
    indexes in `dear` take 0.1 s each (REPLAY_AFTER is 0.05 s here)."""

    def __init__(self) -> None:
        self.pulled = 0
        self.dear: set[int] = set()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    count = Counted()
    plain = normalize.derivations

    def counting(text: str) -> Iterator[Any]:
        for i, item in enumerate(plain(text)):
            count.pulled += 1
            if i in count.dear:
                time.sleep(0.1)
            yield item

    monkeypatch.setattr(formcache, "derivations", counting)
    monkeypatch.setattr(formcache, "REPLAY_AFTER", 0.05)
    return count


@pytest.fixture(autouse=True)
def empty_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formcache, "_store", formcache._Store())


def test_the_next_search_reads_the_forms_back(counted: Counted) -> None:
    """From the first form dear to derive: those before it are derived again (the memo holds
    them: the very objects), those from it on read back."""
    expected = _expected(TEXT)
    assert any("\ud800" in item[0] for item in expected if isinstance(item, tuple))  # kept as it is
    counted.dear = {0}
    streamed = StreamedForms(TEXT)
    assert _listed(streamed) == expected
    assert counted.pulled == len(expected)
    assert _listed(streamed) == expected
    assert counted.pulled == len(expected) + 1  # the first derived again, the rest read back
    counted.dear = {6}
    assert _listed(streamed) == expected
    assert counted.pulled == len(expected) + 1 + 7


def test_forms_cheap_to_derive_are_derived_again(counted: Counted) -> None:
    expected = _expected(TEXT)
    streamed = StreamedForms(TEXT)
    assert _listed(streamed) == expected
    assert _listed(streamed) == expected
    assert counted.pulled == 2 * len(expected)


def test_a_search_that_stops_early_keeps_what_it_read(counted: Counted) -> None:
    """The derivations are dropped with the last search under way (a suspended one holds several
    derived texts): the next search reads the forms kept, derives them again to go on past them,
    and keeps the rest; the one after it derives only the first again."""
    expected = _expected(TEXT)
    counted.dear = {0}
    streamed = StreamedForms(TEXT)
    first = iter(streamed)
    head = [next(first) for _ in range(5)]
    assert _listed(head) == expected[:5]
    assert streamed._derived is not None
    del first
    assert streamed._derived is None
    assert _listed(streamed) == expected
    assert counted.pulled == 5 + 1 + len(expected)
    assert _listed(streamed) == expected
    assert counted.pulled == 5 + 1 + len(expected) + 1


def test_a_search_that_stops_early_goes_on_with_cheap_forms(counted: Counted) -> None:
    """Forms derived again up to where the last search stopped are derived on from there."""
    expected = _expected(TEXT)
    streamed = StreamedForms(TEXT)
    first = iter(streamed)
    [next(first) for _ in range(5)]
    del first
    assert _listed(streamed) == expected
    assert counted.pulled == 5 + len(expected)


def test_interleaved_searches_read_the_same_forms(counted: Counted) -> None:
    expected = _expected(TEXT)
    counted.dear = {0}
    streamed = StreamedForms(TEXT)
    a, b = iter(streamed), iter(streamed)
    got_a, got_b = [], []
    for _ in range(len(expected)):  # b one behind a, then level with it
        got_a.append(next(a))
        got_b.append(next(b))
    assert next(a, None) is None and next(b, None) is None
    assert _listed(got_a) == _listed(got_b) == expected
    assert counted.pulled == len(expected) + 1  # b derived the first again


def test_the_first_search_goes_on_from_forms_within(counted: Counted) -> None:
    expected = _expected(TEXT)
    started = normalize.forms_within(TEXT, 1)
    assert isinstance(started, tuple) and isinstance(started[0], list)
    streamed = StreamedForms(TEXT, started)  # type: ignore[arg-type]
    assert _listed(streamed) == expected
    assert _listed(streamed) == expected


def test_past_the_bound_the_forms_are_derived_again(monkeypatch: pytest.MonkeyPatch, counted: Counted) -> None:
    expected = _expected(TEXT)
    monkeypatch.setattr(formcache, "REPLAY_BYTES", 2000)  # a few forms, not all of them
    counted.dear = {0}
    streamed = StreamedForms(TEXT)
    assert _listed(streamed) == expected
    assert counted.pulled == len(expected)
    assert formcache._store.total == 0  # given up, nothing held
    assert _listed(streamed) == expected
    assert counted.pulled == 2 * len(expected)


def test_the_least_recently_read_text_makes_room(monkeypatch: pytest.MonkeyPatch, counted: Counted) -> None:
    counted.dear = {0}
    one, two = StreamedForms(TEXT), StreamedForms(TEXT.upper())
    _listed(one)
    held_by_one = formcache._store.total
    monkeypatch.setattr(formcache, "REPLAY_BYTES", held_by_one + 100)  # not both
    expected_two = _expected(TEXT.upper())
    assert _listed(two) == expected_two  # room made: one's forms dropped
    assert formcache._store.total <= formcache.REPLAY_BYTES
    before = counted.pulled
    assert _listed(two) == expected_two
    assert counted.pulled == before + 1  # two's are kept (the first derived again)
    assert _listed(one) == _expected(TEXT)
    assert counted.pulled == before + 1 + len(_expected(TEXT))  # one's were all derived again


def test_forms_freed_give_their_room_back(counted: Counted) -> None:
    streamed = StreamedForms(TEXT)
    _listed(streamed)
    assert formcache._store.total > 0
    del streamed
    assert formcache._store.total == 0


def test_threads_searching_one_text_read_every_form(counted: Counted) -> None:
    expected = _expected(TEXT)
    counted.dear = {0}
    streamed = StreamedForms(TEXT)
    results: list[list[Any]] = []
    errors: list[BaseException] = []

    def search() -> None:
        try:
            results.append(_listed(streamed))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == [expected] * 4
    # once, and the first again by each search that began with forms kept
    assert len(expected) <= counted.pulled <= len(expected) + 3


def test_a_search_over_streamed_forms_finds_what_the_kept_forms_find(monkeypatch: pytest.MonkeyPatch) -> None:
    """A canary in a decoded form, found by each of several searches of one streamed text."""
    from litmus_rules.domain import matching

    text = TEXT + " \\u0063\\u0061\\u006e\\u0061\\u0072\\u0079-7f3a"
    kept = formcache._FormsCache._derive(text)
    assert isinstance(kept, tuple)
    monkeypatch.setattr(normalize, "FORMS_BUDGET_FACTOR", 0)
    monkeypatch.setattr(normalize, "FORMS_BUDGET_EXTRA", 0)
    monkeypatch.setattr(formcache, "_forms_cache", formcache._FormsCache())
    assert isinstance(formcache.text_forms(text), StreamedForms)
    for needle in ("canary-7f3a", "CANARY-7F3A", "/etc/passwd", "absent-needle-91"):
        found = matching._find(needle, formcache.text_forms(text), casefold_ok=True)
        assert (found is not None) == (needle != "absent-needle-91"), needle
        assert found == matching._find(needle, kept, casefold_ok=True)
    assert all(isinstance(f, (Form, Undecodable)) for f in formcache.text_forms(text))


@pytest.mark.parametrize("bound", [formcache.REPLAY_BYTES, 2000])
def test_a_search_inside_a_search_of_the_same_text(monkeypatch: pytest.MonkeyPatch, counted: Counted,
                                                   bound: int) -> None:
    """No lock is held while a form is handed out: a search nested in another (a rule's message
    asking again while its condition reads on) reads every form too."""
    monkeypatch.setattr(formcache, "REPLAY_BYTES", bound)
    expected = _expected(TEXT)
    streamed = StreamedForms(TEXT)
    outer = []
    for i, form in enumerate(streamed):
        outer.append(form)
        if i in (0, 7, len(expected) - 1):
            assert _listed(streamed) == expected
    assert _listed(outer) == expected
