"""HTML references are decoded with a call back into Python only where one changes the text
(issue 13): `decoding._unescape` gives what `html.unescape` gives, on every text. The stdlib is
the oracle: texts are generated from the pieces its references are made of (entity names whole,
cut short, run on, with and without ";", numeric references, the characters that end a
reference, the 32-character cut-off)."""

from __future__ import annotations

import html
import html.entities

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import decoding

_NAMES = sorted(html.entities.html5)
_BARE = [name for name in _NAMES if not name.endswith(";")]

_PIECES = st.one_of(
    st.sampled_from(["&", "&#", "&#x", "&#X", ";", "#", " ", "\t", "\n", "\f", "<", "x", "X", "é", "\u00a0"]),
    st.sampled_from(_NAMES).map(lambda name: "&" + name),
    st.sampled_from(_BARE).map(lambda name: "&" + name),
    st.sampled_from(_NAMES).map(lambda name: "&" + name[: max(1, len(name) // 2)]),
    st.sampled_from(_NAMES).map(lambda name: "&" + name.rstrip(";") + "q;"),
    st.integers(0, 0x11FFFF).map(lambda n: f"&#{n}"),
    st.integers(0, 0x11FFFF).map(lambda n: f"&#x{n:x}"),
    st.text(alphabet="abcdefqAZ019", min_size=1, max_size=40),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_unescape_is_the_stdlib_unescape(text: str) -> None:
    assert decoding._unescape(text) == html.unescape(text)


@pytest.mark.parametrize(
    "text",
    [
        "&ampx &amp; &amp &AMP &Amp; &notin; &notit; &not &no",  # a bare name as a prefix; not one
        "&lt&gt&LT&GT&Lt;&lT",  # two-letter bare names run together, and a name of the other case
        "&#65&#66;&#x41&#X42;&#;&#x;&#xZZ &#0; &#128; &#xD800; &#1114112;",  # numeric, and none
        "&" + "a" * 31 + "; &" + "a" * 32 + "; &" + "b" * 33 + "; &CounterClockwiseContourIntegral;",
        "&&amp;& amp; &\tamp; &\namp; &<amp; a&amp;b &amp;amp;",  # what ends or starts a reference
        "R&D, AT&T, Q&A, x&y=1&z=2, &a, &b, &c;",  # ampersands that start none
        "&" + "x" * 200 + "&euro;&" + "Aacute" * 10,
        "é&eacute;\u00a0&nbsp;\U0001F600&#x1F600;",
    ],
)
def test_unescape_edge_cases(text: str) -> None:
    assert decoding._unescape(text) == html.unescape(text)


def test_unchanged_references_make_no_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of it: an "&" that starts no reference makes no call (one followed by a name's
    shape and ";" still does: the table is looked up there)."""
    pattern, replace = decoding._changing_references()
    calls = []
    monkeypatch.setattr(decoding, "_changing_references",
                        lambda: (pattern, lambda match: calls.append(match.group()) or replace(match)))
    text = "R&D and AT&T, x&y=1&z=2 &bogus &a &#q &; " * 50 + "&amp;&#65;&lt&bogus;"
    assert decoding._unescape(text) == html.unescape(text)
    assert calls == ["&amp;", "&#65;", "&lt", "&bogus;"]


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_public_fallback_decodes_alike(text: str) -> None:
    """Where `html` has no `_replace_charref` (a later Python), each match is given to
    `html.unescape` alone: the same text."""
    pattern, _ = decoding._changing_references()
    assert pattern.sub(decoding._unescape_one, text) == html.unescape(text)
