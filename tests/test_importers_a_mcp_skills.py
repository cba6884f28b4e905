"""The MCP and Agent Skills importers on captures and skill folders we write ourselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers_a_fixtures import SKILL_MD, mcp_session, write_skill
from litmus_rules.io.importers import ImportProblemError, iter_records, make_options, format_module, read

DETECTOR = {"channel": "dispatch", "decision_field": "decision"}


def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "owl.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in mcp_session()), encoding="utf-8")
    return path


def test_mcp_session_maps_tools_instructions_and_call_results(tmp_path: Path) -> None:
    [episode] = read("mcp", session_file(tmp_path), detector=DETECTOR)
    assert episode["id"] == "mcp:owl-server"
    assert episode["run"] == {"server": "owl-server", "server_version": "0.3", "protocol": "2025-06-18"}
    assert episode["context"]["system_prompt"] == "Use owl tools for notes."
    first, second = episode["context"]["tools"]  # both pages of tools/list, in order
    assert first == {
        "name": "post_note", "title": "Post note", "description": "Post a note.",
        "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": False},
        "execution": {"taskSupport": "forbidden"}, "icons": [{"src": "https://example.invalid/i.svg"}],
        "_meta": {"vendor": "owl"},
        "input_schema": {"type": "object", "properties": {"sort": {"type": "string", "default": "newest"}}},
    }
    assert second["name"] == "read_note"
    assert episode["context"]["messages"] == [{
        "role": "tool", "name": "read_note", "tool_call_id": "c7", "step": 0,
        "content": [{"type": "text", "text": "note: buy milk"},
                    {"type": "structuredContent", "structuredContent": {"note": "buy milk"}}]}]
    assert {"/canaries", "/episode", "/controls"} <= {u["path"] for u in episode["unknowns"]}


def test_mcp_bare_results_side_by_side(tmp_path: Path) -> None:
    session = mcp_session()
    path = tmp_path / "capture.json"
    path.write_text(json.dumps({"command": ["owl"], "initialize_result": session[1]["result"],
                                "tools_list_result": session[3]["result"]}), encoding="utf-8")
    [episode] = read("mcp", path, detector=DETECTOR, injected="post_note")
    assert [t["name"] for t in episode["context"]["tools"]] == ["post_note"]
    assert episode["context"]["tools"][0]["injected"] is True
    assert "messages" not in episode["context"]


def test_mcp_problems(tmp_path: Path) -> None:
    with pytest.raises(ImportProblemError, match="not a tool of this server"):
        list(read("mcp", session_file(tmp_path), detector=DETECTOR, injected="nope"))
    empty = tmp_path / "empty.json"
    empty.write_text("{\"hello\": 1}", encoding="utf-8")
    with pytest.raises(ImportProblemError, match="no MCP result"):
        list(read("mcp", empty, detector=DETECTOR))


def test_a_skill_folder_with_references(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "owl-notes", references={"guide.md": "Guide: owls are birds.", "b.txt": "B"})
    [episode] = read("skills", folder, detector=DETECTOR, injected="true")
    [skill] = episode["context"]["skills"]
    assert skill["name"] == "owl-notes" and skill["description"].startswith("Summarise owl notes")
    assert skill["path"] == "owl-notes/SKILL.md" and skill["injected"] is True
    # the whole file as the agent reads it (every frontmatter key), then each reference, sorted
    assert skill["body"] == SKILL_MD + "\n\n--- references/b.txt ---\n\nB\n\n--- references/guide.md ---\n\nGuide: owls are birds."
    assert episode["id"] == "skills:owl-notes" and episode["run"] == {"skill": "owl-notes"}


def test_a_folder_of_skills_and_a_bad_one(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills" / "a")
    write_skill(tmp_path / "skills" / "b", text="no frontmatter here\n")
    write_skill(tmp_path / "skills" / "c", text=SKILL_MD.replace("name: owl-notes", "name: owl-c"))
    write_skill(tmp_path / "skills" / "d", text="---\nname: [unclosed\n---\nbody\n")
    records = list(iter_records("skills", [tmp_path / "skills"], make_options(format_module("skills"), DETECTOR)))
    assert [(r.position, r.episode is not None) for r in records] == [
        ("a/SKILL.md", True), ("b/SKILL.md", False), ("c/SKILL.md", True), ("d/SKILL.md", False)]
    assert "frontmatter" in (records[1].message or "") and "not valid YAML" in (records[3].message or "")


def test_a_single_skill_file(tmp_path: Path) -> None:
    path = tmp_path / "owl.SKILL.md"
    path.write_text(SKILL_MD, encoding="utf-8")
    [episode] = read("skills", path, detector=DETECTOR)
    assert episode["context"]["skills"][0]["path"] == "owl.SKILL.md"
    assert "injected" not in episode["context"]["skills"][0]
