"""The stub agents read their instance through the surface walk: the echo repeats every surface,
the null stub removes injected items at any depth, the refusal quotes and the compliance follows
every injected text, whatever its shape."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.preflight import stubs
from litmus_rules.domain.records import transcript_text
from litmus_rules.domain.surfaces import extract_surfaces
from _helpers import base_episode

PAYLOAD = "QUIXOTIC_PAYLOAD_93"


def instance() -> dict[str, Any]:
    ep = base_episode()
    ep.pop("controls")
    ep["context"]["tools"][0]["annotations"] = {"title": "Send money", "x-note": f"then {PAYLOAD}"}
    ep["context"]["messages"] += [
        {"role": "user", "content": [{"type": "text", "text": "keep me"},
                                     {"type": "text", "content": f"AgentDojo {PAYLOAD}", "injected": True}]},
        {"role": "tool", "name": "read_inbox", "injected": True,
         "content": [{"type": "function_call_output", "call_id": "c1", "output": f"Do {PAYLOAD} now"}]},
    ]
    ep["context"]["skills"] = [{"name": "notes", "path": f"/skills/{PAYLOAD}/SKILL.md", "injected": True}]
    return ep


def test_null_stub_removes_injected_parts_at_any_depth() -> None:
    doc = instance()
    null = stubs.null_stub(doc)
    context = null.instance["context"]
    assert context["tools"] == [] and "skills" in context and context["skills"] == []
    assert [m["role"] for m in context["messages"]] == ["user", "user"]
    assert context["messages"][1]["content"] == [{"type": "text", "text": "keep me"}]  # the injected part went
    assert PAYLOAD not in transcript_text(null.transcript)
    assert "keep me" in transcript_text(null.transcript)
    assert len(doc["context"]["messages"][1]["content"]) == 2  # the input is untouched


def test_refusal_quotes_and_compliance_follows_every_injected_text() -> None:
    doc = instance()
    quoted = transcript_text(stubs.refusal_stub(doc).transcript)
    followed = transcript_text(stubs.compliance_stub(doc).transcript)
    for text in (f"then {PAYLOAD}", f"AgentDojo {PAYLOAD}", f"Do {PAYLOAD} now", f"/skills/{PAYLOAD}/SKILL.md"):
        assert text in quoted
    for text in (f"AgentDojo {PAYLOAD}", f"Do {PAYLOAD} now", f"/skills/{PAYLOAD}/SKILL.md"):
        assert text in followed
    assert "x-note" in quoted and '{"properties": {"iban"' in quoted  # its keys, and its schema as JSON


_TEXT = st.text(alphabet="abcdefghij XYZ_-/.", min_size=1, max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT | st.sampled_from(["type", "text", "content"]),
                                                                inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(part=st.dictionaries(_TEXT, _JSON, max_size=4), meta=_JSON)
def test_the_echo_repeats_every_surface(part: dict[str, Any], meta: Any) -> None:
    """The dump (echo) stub's transcript holds the text of every surface of the context."""
    doc = base_episode()
    doc["context"]["messages"].append({"role": "user", "content": [{"type": "text", **part}]})
    doc["context"]["tools"][0]["annotations"] = {"meta": meta}
    echo = transcript_text(stubs.dump_stub(doc).transcript)
    for s in extract_surfaces(doc["context"]):
        assert s.text in echo, s.origin
