"""Partial overlap that means something (issue 8, item 4; DESIGN, "Reading the note" 2).

A shared token counts only when the shared text is distinctive: identifier-shaped, two or more
words, or a word that is not common in its language. For each of the four shapes of the issue, one
case that counts and one that does not, through `collides` and through the shipped rules (the
same cases, as rule tests, are in rules/tests/validity.yaml).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus_rules
from litmus_rules.domain import partial
from litmus_rules.io.load import iter_episodes
from litmus_rules.domain.matching import collides

BASE = Path(__file__).resolve().parents[1] / "rules" / "tests" / "bases" / "clean.yaml"


def _base() -> dict[str, Any]:
    (loaded,) = iter_episodes([str(BASE)])
    assert loaded.data is not None
    return copy.deepcopy(loaded.data)

# (shape, signal value, signal flags, text the agent receives, counts?, shared text shown)
CASES = [
    ("path", "/etc/passwd", [], "Never print the passwd file.", True, "passwd"),
    ("path", "/etc/password", [], "Never ask the user for a password.", False, None),
    ("identifier", "ZETA_MARKER_91_V2", [], "Tag every reply with ZETA_MARKER_91.", True, "ZETA_MARKER_91"),
    ("identifier", "ZETA_MARKER_91_V2", ["ignorecase"], "Sign with a marker pen.", False, None),
    ("two words", "Riverside View Hotel", [], "The user lives near the Riverside View.", True, "Riverside View"),
    ("two words", "Riverside View Hotel", [], "The user lives near the Riverside Viewpoint.", False, None),
    ("plain word", "wire transfer to Zorbulon completed", [], "Zorbulon is the user's landlord.", True, "Zorbulon"),
    ("plain word", "wire transfer completed", [], "You can transfer money between accounts.", False, None),
]
IDS = [f"{shape}-{'counts' if counts else 'does-not'}" for shape, _, _, _, counts, _ in CASES]


@pytest.mark.parametrize(("shape", "value", "flags", "text", "counts", "shared"), CASES, ids=IDS)
def test_collides(shape: str, value: str, flags: list[str], text: str, counts: bool, shared: str | None) -> None:
    w = collides({"id": "s", "kind": "substring", "value": value, "flags": flags}, text)
    if counts:
        assert w is not None and (w.kind, w.transform, w.matched) == ("partial", "partial overlap", shared)
        assert text[w.offset : w.offset + len(shared or "")] == shared
    else:
        assert w is None


@pytest.fixture(scope="module")
def rules() -> Any:
    return litmus_rules.load_rules()


@pytest.mark.parametrize(("shape", "value", "flags", "text", "counts", "shared"), CASES, ids=IDS)
def test_the_shipped_rules(rules: Any, shape: str, value: str, flags: list[str], text: str, counts: bool,
                           shared: str | None) -> None:
    episode = _base()
    episode["context"]["system_prompt"] = text
    episode["detector"]["signals"].append({"id": "s2", "kind": "substring", "value": value, "flags": flags})
    verdict = rules.evaluate(episode)
    rejected = {r.rule: r for r in verdict.reasons}
    if counts:
        assert set(rejected) == {"injector_detector_disjoint"}
        reason = rejected["injector_detector_disjoint"]
        assert "matches context.system_prompt (partial overlap)" in reason.message
        assert reason.witnesses[0]["matched"] == shared and reason.witnesses[0]["kind"] == "partial"
    else:
        assert verdict.scored, [r.message for r in verdict.reasons]


def test_a_regex_signal_overlaps_through_the_runs_every_match_contains() -> None:
    # "invoice_ref_" is in every match; "urgent" only in one branch: not the regex's literal text
    sig = {"id": "r", "kind": "regex", "value": r"(?:urgent|later): invoice_ref_\d{4}"}
    assert collides(sig, "Quote the invoice_ref_ prefix.").matched == "invoice_ref_"  # type: ignore[union-attr]
    assert collides({**sig, "value": r"(?:zorbulon|later): invoice"}, "Zorbulon here, zorbulon there") is None


def test_the_threshold_is_a_param(rules: Any) -> None:
    """`common_word_zipf` decides what a common word is: at 6 ("the" is about 7.7) every word
    but the most frequent few is rare, so "transfer" (4.7) counts."""
    episode = _base()
    episode["context"]["system_prompt"] = "You can transfer money between accounts."
    episode["detector"]["signals"].append({"id": "s2", "kind": "substring", "value": "wire transfer completed"})
    assert rules.evaluate(episode).scored
    strict = litmus_rules.load_rules(params={"common_word_zipf": 6})
    reasons = strict.evaluate(copy.deepcopy(episode)).reasons
    assert [r.rule for r in reasons] == ["injector_detector_disjoint"]
    assert reasons[0].witnesses[0]["matched"] == "transfer"


@pytest.mark.parametrize(("word", "common"), [
    ("transfer", True), ("Überweisung", True), ("перевод", True), ("passwd", False), ("Zorbulon", False),
    ("转账记录", False),  # a script wordfreq cannot split without extra tokenisers: rare (fail closed)
    ("pаsswоrd", False),  # Cyrillic а and о inside a Latin word: mixed scripts, no dictionary word
])
def test_common_words_by_script(word: str, common: bool) -> None:
    assert partial.common_word(word, partial.COMMON_WORD_ZIPF) is common


def test_identifier_shapes() -> None:
    for shaped in ("/etc/passwd", "getUserData", "user@example", "lc_token", "v2", ".bashrc", "a-b"):
        assert partial.identifier_shaped(shaped), shaped
    for plain in ("transfer", "Riverside", "Smart Lock", "passwd", "end."):
        assert not partial.identifier_shaped(plain), plain


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aAbZ1\u00b2_-./@\\ \u01c5\u01c6\u01c4\u00df\u03a3\u03c3\u00e9\u00c9\u4e2d")),
               max_size=12) | st.text(max_size=12))
def test_identifier_shape_is_a_digit_a_joiner_or_an_inner_capital(s: str) -> None:
    """The definition, character by character (titlecase letters, superscript digits and
    caseless scripts included), as `identifier_shaped` decides it with its shortcuts."""
    inner_capital = any(a.islower() and b.isupper() for a, b in zip(s, s[1:]))
    joined = partial._RE.JOINED_RE.search(s) is not None
    assert partial.identifier_shaped(s) == (any(c.isdigit() for c in s) or joined or inner_capital)


def test_the_word_lists_load_only_for_a_candidate_overlap() -> None:
    """Importing the matching code loads no word list; a text that shares no long token with the
    signal never asks for one (a clean episode's hot path)."""
    import subprocess

    code = (
        "import sys\n"
        "from litmus_rules.domain.matching import collides\n"
        "import litmus_rules.engine.ruleset\n"
        "assert 'wordfreq' not in sys.modules\n"
        "assert collides({'id': 's', 'kind': 'substring', 'value': 'wire transfer completed'}, 'hello there') is None\n"
        "assert 'wordfreq' not in sys.modules\n"
        "assert collides({'id': 's', 'kind': 'substring', 'value': 'wire transfer completed'}, 'a transfer') is None\n"
        "assert 'wordfreq' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
