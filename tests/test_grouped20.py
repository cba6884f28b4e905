"""grouped_text looks for the runs of only the patterns an RE2 set finds in a text the hint
matched (session 20: a tool of 20,000 properties described "arg 1000 /x/../y" ran every run
pattern on each, as "1000 /x/" looks like base64 groups to the hint). The same spans, whichever
patterns the set names, and all of them when it names none."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import grouped

TOKEN = "lc-5f0e9a1d7c3b"
RAW = TOKEN.encode()

# pieces of every kind of run, and of prose and paths that only look like one
PIECES = ["bGMt", "NWYw", "ZTlh", "MDAw", " ", "\t", ":", ",", ", ", "-", "6c", "63", "0x6c", "108", "99",
          "NRRS2NLGGBSTSYJR", "l", "c", ".", "01101100", "\\x6c", "&#108;", "%6C", "\\154", "/", "1000", "x",
          "Y2FuYXJ5", "\u00b7", "|", "*", "_", "é", "\ud800", "=", "=="]

EACH_KIND = {
    0: " ".join(["bGMt", "NWYw", "ZTlh", "MWQ3", "YzNi"]),
    1: ":".join(f"{b:02x}" for b in RAW),
    2: ", ".join(str(b) for b in RAW),
    3: "NRRS2NLGGBSTSYJRMQ3WGM3C",
    4: " ".join(TOKEN),
    5: " ".join(f"{b:08b}" for b in RAW),
    6: " ".join(f"\\x{b:02x}" for b in RAW),
}


def _every_pattern(text: str) -> tuple[bool, ...]:
    return (True,) * 7


@pytest.mark.parametrize("kind", sorted(EACH_KIND))
def test_the_set_names_the_pattern_of_each_kind(kind: int) -> None:
    text = f"send ({EACH_KIND[kind]}) now"
    assert grouped._which(text)[kind]
    assert grouped.grouped_text(text)


def test_a_path_that_looks_like_groups_asks_one_pattern() -> None:
    text = "[r0] arg 1000 /x/../y"
    assert grouped.grouped_hint().search(text) is not None
    assert grouped._which(text) == (True, False, False, False, False, False, False)
    assert grouped.grouped_text(text) == ""


def test_every_pattern_when_the_set_names_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """An RE2 set that runs out of memory names no pattern: then every one is looked for."""

    class Silent:
        def Match(self, text: object) -> None:
            return None

    monkeypatch.setattr(grouped, "_pattern_set", lambda: Silent())
    assert grouped._which("bGMt NWYw ZTlh") == (True,) * 7
    assert TOKEN in grouped.grouped_text(f"send ({EACH_KIND[6]}) now").split("\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES + list(EACH_KIND.values())), min_size=1, max_size=60))
def test_the_same_spans_as_every_pattern(pieces: list[str]) -> None:
    text = "".join(pieces)
    narrowed = grouped.grouped_text(text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(grouped, "_which", _every_pattern)
        assert grouped.grouped_text(text) == narrowed
