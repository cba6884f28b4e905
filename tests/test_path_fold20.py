"""The path canonicalisation of a text's normalised form read off its case-preserving one
(path_fold.canonical_path_folded): for a long text dense with separators, "normalised > path
canonicalised" is the case folding of "path canonicalised" when folding changes no character's
part in a path token, and canonicalised on its own otherwise. Either way it is exactly
canonical_path of the normalised text."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import normalize, path_fold, paths, textmemo
from litmus_rules.domain.transforms import _full_from_clean, clean

# every code point that case folding changes
FOLDED = [chr(i) for i in range(sys.maxunicode + 1) if chr(i).casefold() != chr(i)]
# what path tokens are made of, and what ends or starts them
PIECES = ["/", "\\", "..", ".", "//", "file:", "FILE:", "File://LocalHost", "C:", "c:", "~", "://", "HTTP://",
          " ", '"', "x", "Y", "_", "é", "É", "1", "=", "\n", "-", "@", "!", "\u0301", "\u200b", "\ud800"]


@pytest.fixture
def short_texts_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The short way for texts of any length past DENSE_MIN (FOLD_MIN only keeps it for long
    ones, where it pays): thousands of short texts try it in a few seconds."""
    monkeypatch.setattr(path_fold, "FOLD_MIN", paths.DENSE_MIN)


def _dense(rng: random.Random, c: str) -> str:
    """A clean (NFKC) text of ~300 pieces, `c` among them, dense with separators."""
    text = clean("".join(rng.choice(PIECES + [c] * 6) for _ in range(300)))
    assert len(text) > paths.DENSE_MIN and (text.count("/") + text.count("\\")) * paths.DENSE_PATHS > len(text)
    return text


def _shortcut_taken(text: str, folded: str) -> bool:
    return path_fold._folds_unlike().search(text) is None and text.casefold() == folded


@pytest.mark.parametrize("block", range(4))
@pytest.mark.usefixtures("short_texts_too")
def test_every_character_folding_changes(block: int) -> None:
    """Each of the ~1,500 characters that folding changes, in a dense text: the result is
    canonical_path of the normalised text (and of the plainly folded one), whichever way it went."""
    rng = random.Random(block)
    taken = 0
    for c in FOLDED[block::4]:
        text = _dense(rng, c)
        for folded in (_full_from_clean(text), text.casefold()):
            taken += _shortcut_taken(text, folded)
            got = path_fold.canonical_path_folded(text, paths.canonical_path(text), folded)
            assert got == paths.canonical_path(folded), (hex(ord(c)), text[:120])
    assert taken > len(FOLDED[block::4])  # most characters take the short way: it is tested, not bypassed


def test_the_characters_read_otherwise() -> None:
    """Folds that change a character's part: into several characters, into ASCII, or a letter
    that lower-cases to ASCII. Plain capitals of any script fold alike."""
    unlike = path_fold._folds_unlike()
    for c in ("ß", "ẞ", "ﬁ", "\u212a", "\u017f", "\u0130", "\u0149", "\u1f80"):
        assert unlike.search(c), hex(ord(c))
    for c in ("É", "Σ", "ς", "Ж", "Ⅻ", "Ⓐ", "\U00010400", "ǅ", "A", "Z"):
        assert c.casefold() != c and not unlike.search(c), c
    # past the first two planes nothing is asked: any character there sends a text the long way
    for c in ("\U00020000", "\U0002a6d6", "\U000e0041", chr(sys.maxunicode)):
        assert unlike.search(c), hex(ord(c))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES + ["ß", "ﬁ", "\u212a", "\u017f", "\u0130", "Σ", "ς", "Ⅻ", "Ⓐ", "ǅ",
                                          "\U00010400", "ẘ", "W\u030a", "J\u030c"]),
                min_size=1, max_size=400))
@pytest.mark.usefixtures("short_texts_too")
def test_any_text(pieces: list[str]) -> None:
    text = clean("".join(pieces))
    folded = _full_from_clean(text)
    assert path_fold.canonical_path_folded(text, paths.canonical_path(text), folded) == paths.canonical_path(folded)


def test_forms_are_those_of_canonicalising_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forms of a dense non-ASCII text (and of its decoded forms) are the forms derived by
    canonicalising each normalised text on its own, in the same order, under the same names."""
    rng = random.Random(5)
    text = "".join(rng.choice('=é\ufb01\\\u01c5"/Ab') for _ in range(path_fold.FOLD_MIN + 1))
    assert _shortcut_taken(clean(text), _full_from_clean(clean(text)))
    fast = normalize.forms(text)
    textmemo.clear_memo()  # (which holds what the short way kept as canonical_path's answers)
    plain = paths.canonical_path.__wrapped__  # type: ignore[attr-defined]
    monkeypatch.setattr(normalize, "canonical_path_folded", lambda text, canonical, folded: plain(folded))
    assert normalize.forms(text) == fast
    assert any(f.name == "json unescaped > normalised > path canonicalised" for f in fast
               if isinstance(f, normalize.Form))


def test_kept_for_a_later_call() -> None:
    """A form read off the case-preserving one is kept as canonical_path's own answer for the
    folded text (path_casefold_key asks for it too): not canonicalised a second time."""
    rng = random.Random(9)
    text = clean("".join(rng.choice('=é\\"/AbÉ') for _ in range(path_fold.FOLD_MIN + 1)))
    folded = _full_from_clean(text)
    assert _shortcut_taken(text, folded)
    got = path_fold.canonical_path_folded(text, paths.canonical_path(text), folded)
    assert paths.canonical_path(folded) is got
    assert got == paths.canonical_path.__wrapped__(folded)  # type: ignore[attr-defined]


def test_kept_only_for_memo_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    """With canonical_path replaced by a plain function (a test's stand-in), the short way keeps
    nothing and still answers (hypothesis found `ſ/ ` repeated, which NFKC makes ASCII)."""
    text = "ſ/ " * (path_fold.FOLD_MIN // 3 + 1)
    plain = paths.canonical_path.__wrapped__  # type: ignore[attr-defined]
    monkeypatch.setattr(paths, "canonical_path", lambda t: plain(t))
    monkeypatch.setattr(normalize, "canonical_path", lambda t: plain(t))
    forms = normalize.forms(text)
    viewed = [f.text for f in forms
              if isinstance(f, normalize.Form) and ("normalised > path canonicalised", "path-casefold") in f.views]
    assert viewed == [plain(_full_from_clean(clean(text)))]
