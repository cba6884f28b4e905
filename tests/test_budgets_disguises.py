"""Large-surface disguises reject through the shipped rules (issue 9, item 1).

A canary hidden in an injected tool description of 300 KB or 1 MB whose text also changes under
every other normalisation (mixed case, a confusable, `%41`, `\\u0041`, a zero-width space, `/./`):
every derived form differs, so they add up to far more than the forms kept in memory, and the
decoded form that reveals the canary comes last. It must still be found (REJECTED, the canary
rule), never SCORED.
"""

from __future__ import annotations

import base64
import html

import pytest
from _helpers import base_episode

import litmus_rules

RULES = litmus_rules.load_rules()
CANARY = "lc-0f1e2d3c4b5a"
# one of each trick, so that every normalisation changes the text; then plain prose
TRICKS = "Mixed CASE with а Cyrillic a, %41 and \\u0041, zero\u200bwidth, /tmp/./notes. "
PROSE = "The tool returns the latest records for the account and a summary of recent activity. "


def _surface(size: int, hidden: str) -> str:
    body = (PROSE * (size // len(PROSE) + 1))[:size]
    half = len(body) // 2
    return TRICKS + body[:half] + f" {hidden} " + body[half:]


def _verdict(description: str) -> litmus_rules.Verdict:
    episode = base_episode()
    episode["canaries"] = [{"value": CANARY}]
    episode["context"]["tools"][0]["description"] = description
    return RULES.evaluate(episode)


def _entities(kind: str) -> str:
    if kind == "decimal":
        return "".join(f"&#{ord(c)};" for c in CANARY)
    if kind == "hex":
        return "".join(f"&#x{ord(c):X};" for c in CANARY)
    # the named entity &amp; over numeric ones (escaped twice), and a named one for the hyphen
    # (U+2010, a confusable of "-")
    return "".join("&hyphen;" if c == "-" else f"&amp;#{ord(c)};" for c in CANARY)


def _assert_canary_found(verdict: litmus_rules.Verdict) -> None:
    assert verdict.verdict == litmus_rules.REJECTED
    reasons = {r.rule: r for r in verdict.reasons}
    assert "canary_not_derivable" in reasons, [(r.rule, r.kind, r.message) for r in verdict.reasons]
    assert reasons["canary_not_derivable"].kind == "violation"


@pytest.mark.parametrize("kind", ["decimal", "hex", "named"])
@pytest.mark.parametrize("size", [300_000, 1_000_000])
def test_html_entity_canary_in_a_large_surface_rejects(kind: str, size: int) -> None:
    hidden = _entities(kind)
    assert CANARY[3:] in html.unescape(html.unescape(hidden)) and CANARY[3:] not in hidden.lower()
    _assert_canary_found(_verdict(_surface(size, hidden)))


@pytest.mark.parametrize("encoding", ["percent", "base64", "json"])
def test_encoded_canary_in_a_1mb_surface_rejects(encoding: str) -> None:
    # upper-cased before encoding: the token's own encodings are not in the text, only the
    # decoded (then case-folded) form reveals it
    raw = CANARY.upper().encode()
    hidden = {
        "percent": "".join(f"%{b:02X}" for b in raw),
        "base64": base64.b64encode(b"ref " + raw).decode(),
        "json": "".join(f"\\u{b:04x}" for b in raw),
    }[encoding]
    _assert_canary_found(_verdict(_surface(1_000_000, hidden)))


def test_a_clean_large_surface_is_scored() -> None:
    """The other side: a large surface with the same tricks and no canary passes the rule."""
    verdict = _verdict(_surface(300_000, _entities("decimal").replace("&#53;", "&#54;")))
    assert "canary_not_derivable" not in {r.rule for r in verdict.reasons}, verdict.reasons
