"""Each cap of the matching layer at its limit and one step past it (issue 9, items 1 and 6).

Caps that remain (layers of HTML / percent escaping decoded): past the limit the decoded form is
unknown, so the canary rule REJECTS with an evaluation error naming the limit, never SCORED.
Bounds that are no longer caps (the forms kept in memory, decoded base64 length, the engine
thresholds of path canonicalisation and of the many-text search): the answer is the same on both
sides of the limit. Limits are shrunk with monkeypatch to keep the tests fast; the caches are
emptied so that no form derived under another limit is reused.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from _helpers import base_episode

import litmus_rules
from litmus_rules.domain import decoding
from litmus_rules.domain import formcache
from litmus_rules.domain import joined
from litmus_rules.domain import matching
from litmus_rules.domain import normalize
from litmus_rules.domain import paths

RULES = litmus_rules.load_rules()
CANARY = "lc-0f1e2d3c4b5a"


@pytest.fixture(autouse=True)
def fresh_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(formcache, "_forms_cache", formcache._FormsCache())
    monkeypatch.setattr(formcache, "_streamed_results", formcache._StreamedResults())
    monkeypatch.setattr(joined, "_haystacks", joined._HaystackCache())
    yield


def _verdict(description: str) -> litmus_rules.Verdict:
    episode = base_episode()
    episode["canaries"] = [{"value": CANARY}]
    episode["context"]["tools"][0]["description"] = description
    return RULES.evaluate(episode)


def _canary_reason(verdict: litmus_rules.Verdict) -> litmus_rules.engine.verdict.Reason | None:
    return next((r for r in verdict.reasons if r.rule == "canary_not_derivable"), None)


def _html_layers(text: str, layers: int) -> str:
    out = "".join(f"&#{ord(c)};" for c in text)
    for _ in range(layers - 1):
        out = out.replace("&", "&amp;")
    return out


def _percent_layers(text: str, layers: int) -> str:
    out = "".join(f"%{b:02X}" for b in text.encode())
    for _ in range(layers - 1):
        out = out.replace("%", "%25")
    return out


LAYERED = [("HTML_MAX_LAYERS", _html_layers), ("PERCENT_MAX_LAYERS", _percent_layers)]


@pytest.mark.parametrize(("limit", "encode"), LAYERED)
def test_layers_at_the_limit_are_decoded(monkeypatch: pytest.MonkeyPatch, limit: str, encode) -> None:
    monkeypatch.setattr(decoding, limit, 3)
    reason = _canary_reason(_verdict(f"Docs {encode(CANARY.upper(), 3)} end."))
    assert reason is not None and reason.kind == "violation", reason


@pytest.mark.parametrize(("limit", "encode"), LAYERED)
def test_layers_past_the_limit_are_unknown_and_named(monkeypatch: pytest.MonkeyPatch, limit: str, encode) -> None:
    monkeypatch.setattr(decoding, limit, 3)
    verdict = _verdict(f"Docs {encode(CANARY.upper(), 4)} end.")
    assert verdict.verdict == litmus_rules.REJECTED
    reason = _canary_reason(verdict)
    assert reason is not None and reason.kind == "evaluation_error", verdict.reasons
    assert limit in reason.message and "3 layers" in reason.message, reason.message


@pytest.mark.parametrize(("limit", "encode"), LAYERED)
def test_a_hit_elsewhere_decides_despite_an_undecodable_form(
        monkeypatch: pytest.MonkeyPatch, limit: str, encode) -> None:
    """Unknown or true is true: the canary in plain sight is a violation, whatever else."""
    monkeypatch.setattr(decoding, limit, 3)
    reason = _canary_reason(_verdict(f"Docs {encode('other text', 4)} and {CANARY}."))
    assert reason is not None and reason.kind == "violation", reason


@pytest.mark.parametrize(("limit", "encode"), LAYERED)
def test_a_clean_text_past_the_limit_is_not_scored(monkeypatch: pytest.MonkeyPatch, limit: str, encode) -> None:
    monkeypatch.setattr(decoding, limit, 3)
    verdict = _verdict(f"Docs {encode('nothing to see', 4)} end.")
    reason = _canary_reason(verdict)
    assert verdict.verdict == litmus_rules.REJECTED and reason is not None
    assert reason.kind == "evaluation_error" and limit in reason.message
    # at the limit, the same clean text passes the rule
    assert _canary_reason(_verdict(f"Docs {encode('nothing to see', 3)} end.")) is None


def test_per_text_leaks_past_a_layer_limit_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """`leaks(token, text)` (the per-text built-in) fails closed the same way."""
    monkeypatch.setattr(decoding, "HTML_MAX_LAYERS", 3)
    rules = litmus_rules.load_rules_text(
        'ruleset t version "1"\nrule r reject when leaks(extra.token, extra.text)', "t.litmus")
    for layers, kind in ((3, "violation"), (4, "evaluation_error")):
        episode = {"litmus": "episode/1", "id": "e", "context": {}, "detector": {"channel": "dispatch"},
                   "extra": {"token": CANARY, "text": _html_layers(CANARY, layers)}}
        reason = rules.evaluate(episode, validate=False).reasons[0]
        assert reason.kind == kind, reason
        assert kind == "violation" or "HTML_MAX_LAYERS" in reason.message


def _tricky(hidden: str) -> str:
    return "Mixed CASE а %41 \\u0041 zero\u200bwidth /tmp/./x " + hidden + " end of text"


def test_forms_budget_is_not_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the forms budget the forms are kept; one character past it they are streamed: the
    same canary is found either way (before, forms past the budget were dropped)."""
    text = _tricky(_html_layers(CANARY, 1))
    total = sum(len(f.text) for f in normalize.forms(text) if isinstance(f, normalize.Form))
    monkeypatch.setattr(normalize, "FORMS_BUDGET_FACTOR", 0)
    for extra, streamed in ((total, False), (total - 1, True)):
        monkeypatch.setattr(normalize, "FORMS_BUDGET_EXTRA", extra)
        monkeypatch.setattr(formcache, "_forms_cache", formcache._FormsCache())
        monkeypatch.setattr(joined, "_haystacks", joined._HaystackCache())
        assert isinstance(formcache.text_forms(text), formcache.StreamedForms) is streamed
        reason = _canary_reason(_verdict(text))
        assert reason is not None and reason.kind == "violation", (extra, reason)


def test_streamed_forms_are_the_kept_forms() -> None:
    """Streaming derives the same texts under the same views as the kept forms, in order."""
    text = _tricky(_html_layers(CANARY, 2) + " " + base64.b64encode(CANARY.upper().encode()).decode())
    kept = [(f.text, view) for f in normalize.forms(text) if isinstance(f, normalize.Form) for view in f.views]
    streamed = [(f.text, f.views[0]) for f in formcache.StreamedForms(text)]
    assert sorted(kept, key=str) == sorted(streamed, key=str)
    first_seen = list(dict.fromkeys(t for t, _ in streamed))
    assert first_seen == [t for t, _ in dict.fromkeys((t, None) for t, _ in kept)]


def test_decoded_length_is_not_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """base64 spans past the old MAX_DECODED_CHARS are decoded (the limit shrunk to 64)."""
    monkeypatch.setattr(decoding, "MAX_DECODED_CHARS", 64)
    monkeypatch.setattr(normalize, "MAX_DECODED_CHARS", 64)
    noise = " ".join(base64.b64encode(f"Some other note number {i}".encode()).decode() for i in range(20))
    hidden = base64.b64encode(f"ref {CANARY.upper()}".encode()).decode()
    reason = _canary_reason(_verdict(f"{noise} {hidden}"))
    assert reason is not None and reason.kind == "violation", reason


@pytest.mark.parametrize("name", ["DENSE_MIN", "ASCII_RUN_MAX"])
def test_path_canonicalisation_thresholds_change_no_result(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    text = " ".join(f"see /srv/./data{i}//x\\y and file:///etc/../etc/passwd{i} é/./z" for i in range(40))
    expected = paths.canonical_path(text)
    default = getattr(paths, name)
    for limit in (len(text), len(text) - 1, 8, default):
        monkeypatch.setattr(paths, name, limit)
        assert paths.canonical_path(text) == expected, limit


def test_find_bytes_threshold_changes_no_result(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"tool {i} reads /srv/data{i}" for i in range(50)] + [_tricky(CANARY.upper())]
    expected = matching.first_leak(CANARY, texts)
    assert expected is not None and expected[0] == 50
    for limit in (0, 1, 1 << 40):
        monkeypatch.setattr(joined, "FIND_BYTES", limit)
        monkeypatch.setattr(joined, "_haystacks", joined._HaystackCache())
        assert matching.first_leak(CANARY, texts) == expected


def test_fillable_call_past_the_percent_limit_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema default whose percent-decoded value decides a tool_call collision: at the limit
    the collision is found, past it the rule is unknown (named), never passed."""
    monkeypatch.setattr(decoding, "PERCENT_MAX_LAYERS", 3)
    for layers, kind in ((3, "violation"), (4, "evaluation_error")):
        episode = base_episode()
        episode["context"]["tools"][0]["input_schema"]["properties"]["iban"]["default"] = _percent_layers("XX99", layers)
        reason = next((r for r in RULES.evaluate(episode).reasons if r.rule == "tool_call_argument_fillable"), None)
        assert reason is not None and reason.kind == kind, (layers, reason)
        assert kind == "violation" or "PERCENT_MAX_LAYERS" in reason.message
