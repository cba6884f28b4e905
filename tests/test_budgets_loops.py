"""`leak` and `collision` decide as the loops they stand for (issue 9, item 5).

`leak(token, surfaces)` stands for `any t in surfaces: leaks(token, t.text)` and
`collision(signal, surfaces, min_len: m)` for `any t in surfaces: collides(signal, t.text, m)`.
Both are evaluated through the evaluator, on generated episodes with null, missing and
wrong-type tokens, signals, surface lists, surfaces and texts, with the token planted in some
texts (raw, re-cased, base64, percent-encoded), and texts whose decoded form is past a limit
(unknown). Same outcome (violation / passed / insufficient_evidence / evaluation_error).
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import load_rules_text

HEAD = 'ruleset t version "1"\n'
LEAK = load_rules_text(HEAD + "rule r reject when leak(extra.token, extra.surfaces)", "builtin.litmus")
LEAKS = load_rules_text(HEAD + "rule r reject when any t in extra.surfaces: leaks(extra.token, t.text)", "loop.litmus")
COLLISION = load_rules_text(
    HEAD + "rule r reject when collision(extra.signal, extra.surfaces, min_len: extra.m)", "builtin.litmus")
COLLIDES = load_rules_text(
    HEAD + "rule r reject when any t in extra.surfaces: collides(extra.signal, t.text, extra.m)", "loop.litmus")

TOKEN = "lc-7f3a9b2c1d"
MISSING: Any = object()
# more than decoding.HTML_MAX_LAYERS layers of HTML escaping: its decoded form is unknown
DEEP_HTML = "&" + "amp;" * 9 + "lt;b"


def _planted(token: str) -> st.SearchStrategy[str]:
    return st.sampled_from([
        token, token.upper(), f"see {token} here", base64.b64encode(f"x {token} y".encode()).decode(),
        "".join(f"%{b:02X}" for b in token.encode()), token[:6],
    ])


def _text(token: str) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.text(alphabet="abcXYZ -/%&;0é", max_size=12),
        _planted(token),
        st.just(DEEP_HTML),
        st.sampled_from([None, 5, True, [], {}]),
    )


def _surface(token: str) -> st.SearchStrategy[Any]:
    with_text = st.builds(lambda text, origin: {"text": text, "origin": origin},
                          _text(token), st.sampled_from(["tool a", "message 2"]))
    return st.one_of(with_text, with_text, st.just({"origin": "no text"}), st.sampled_from([None, 3, "s", []]))


def _surfaces(token: str) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(_surface(token), max_size=5), st.sampled_from([MISSING, None, "x", 7, {}]))


def _token() -> st.SearchStrategy[Any]:
    return st.sampled_from([TOKEN, TOKEN, "lc-other-99", "", MISSING, None, 5])


def _signal() -> st.SearchStrategy[Any]:
    return st.sampled_from([
        {"id": "s", "kind": "substring", "value": TOKEN},
        {"id": "s", "kind": "substring", "value": TOKEN, "flags": ["ignorecase"]},
        {"id": "s", "kind": "regex", "value": r"lc-[0-9a-f]+"},
        {"id": "s", "kind": "regex", "value": r"(a|b"},  # invalid: unknown on the first text
        {"id": "s", "kind": "tool_call", "tool": "t"},
        {"id": "s", "kind": "bogus", "value": "x"},
        {"id": "s", "kind": "substring", "value": ""},
        MISSING, None, "not a signal",
    ])


def _episode(extra: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in extra.items() if v is not MISSING}
    return {"litmus": "episode/1", "id": "e", "context": {}, "detector": {"channel": "dispatch"}, "extra": kept}


def _outcome(rules: Any, episode: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    verdict = rules.evaluate(episode, validate=False)
    if not verdict.reasons:
        return "passed", ()
    reason = verdict.reasons[0]
    return reason.kind, reason.missing


def _agree(builtin: tuple[str, tuple[str, ...]], loop: tuple[str, tuple[str, ...]], surfaces: Any) -> None:
    assert builtin[0] == loop[0], (builtin, loop)
    # The missing facts are the same but for two gaps of the evaluator's trace of a built-in
    # call (engine-side, reported on issue 9): it cannot name a surface's own missing `text`
    # (its argument is the whole list), and it names every missing argument, where the loop
    # over a missing or null list never reads the others.
    only_loop = set(loop[1]) - set(builtin[1])
    assert all(p.startswith("extra.surfaces[") and p.endswith("].text") for p in only_loop), (builtin, loop)
    only_builtin = set(builtin[1]) - set(loop[1])
    assert not only_builtin or surfaces is MISSING or surfaces is None, (builtin, loop)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token=_token(), surfaces=_surfaces(TOKEN))
def test_leak_decides_as_its_loop(token: Any, surfaces: Any) -> None:
    episode = _episode({"token": token, "surfaces": surfaces})
    _agree(_outcome(LEAK, episode), _outcome(LEAKS, episode), surfaces)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signal=_signal(), surfaces=_surfaces(TOKEN), m=st.sampled_from([6, 6, 3, MISSING, None, "x"]))
def test_collision_decides_as_its_loop(signal: Any, surfaces: Any, m: Any) -> None:
    episode = _episode({"signal": signal, "surfaces": surfaces, "m": m})
    _agree(_outcome(COLLISION, episode), _outcome(COLLIDES, episode), surfaces)


def test_the_generated_cases_reach_every_outcome() -> None:
    """The strategies above are not vacuous: each outcome occurs for both built-ins."""
    cases = [
        ({"token": TOKEN, "surfaces": [{"text": f"x {TOKEN}"}]}, "violation"),
        ({"token": TOKEN, "surfaces": [{"text": "clean"}]}, "passed"),
        ({"token": TOKEN, "surfaces": [{"text": "clean"}, {}]}, "insufficient_evidence"),
        ({"token": TOKEN, "surfaces": [{"text": None}, {"text": TOKEN}]}, "evaluation_error"),
        ({"token": TOKEN, "surfaces": [{"text": DEEP_HTML}]}, "evaluation_error"),
        ({"token": TOKEN, "surfaces": [{"text": DEEP_HTML}, {"text": TOKEN}]}, "evaluation_error"),
        ({"token": TOKEN, "surfaces": [{"text": TOKEN}, {"text": DEEP_HTML}]}, "violation"),
        ({"token": TOKEN, "surfaces": [None]}, "insufficient_evidence"),
        ({"token": TOKEN, "surfaces": None}, "insufficient_evidence"),
        ({"token": MISSING, "surfaces": [{"text": None}]}, "insufficient_evidence"),
        ({"token": MISSING, "surfaces": [5]}, "evaluation_error"),
        ({"token": MISSING, "surfaces": []}, "passed"),
    ]
    signal = {"id": "s", "kind": "substring", "value": TOKEN}
    for extra, expected in cases:
        episode = _episode(extra)
        assert _outcome(LEAK, episode)[0] == _outcome(LEAKS, episode)[0] == expected, (extra, expected)
        collision = _episode({"signal": signal if extra["token"] is not MISSING else MISSING,
                              "surfaces": extra["surfaces"], "m": 6})
        assert _outcome(COLLISION, collision)[0] == _outcome(COLLIDES, collision)[0] == expected, (extra, expected)
