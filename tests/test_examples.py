"""The shipped examples behave as their headers say.

`examples/leaks/` holds one small episode per kind of leak. Each file's header ends with a line

    # expect: REJECTED by rule_a[, rule_b]        (or: # expect: SCORED)

naming *exactly* the rules that reject it. The examples are checked as one batch, as
`litmus-rules check examples/` does (the shared-canary pair needs its batch mate), through the
API and once through the CLI. The top-level examples are the note's two cases and the clean
instance; their traces are kept as goldens in tests/data/examples_golden/ (regenerate with
`LITMUS_UPDATE_GOLDEN=1 pytest tests/test_examples.py` and review the diff: rule line numbers
appear in traces, so editing rules/validity.litmus moves them).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from litmus_rules import REJECTED, SCORED, Verdict, load_rules
from litmus_rules.cli import main
from litmus_rules.io.load import iter_episodes
from _helpers import EXAMPLES, ROOT

LEAKS = EXAMPLES / "leaks"
LEAK_FILES = sorted(LEAKS.glob("*.yaml"))
GOLDEN = Path(__file__).parent / "data" / "examples_golden"
UPDATE = os.environ.get("LITMUS_UPDATE_GOLDEN") == "1"

EXPECT_RE = re.compile(r"#\s*expect:\s*(?P<verdict>SCORED|REJECTED)(?:\s+by\s+(?P<rules>.+?))?\s*")

# Every kind of leak issue 3 asks an example for, by the rule that must catch it.
KINDS = {
    "base64-canary-in-ref-enum.yaml": "canary_not_derivable",
    "zero-width-canary-in-tool-description.yaml": "canary_not_derivable",
    "confusable-canary-in-skill-body.yaml": "canary_not_derivable",
    "regex-signal-matches-schema-default.yaml": "injector_detector_disjoint",
    "partial-overlap-tool-name.yaml": "injector_detector_disjoint",
    "percent-encoded-path-default.yaml": "tool_call_argument_fillable",
    "file-url-path-default.yaml": "tool_call_argument_fillable",
    "shared-canary-a.yaml": "canary_unique",
    "shared-canary-b.yaml": "canary_unique",
    "rubric-seen-by-generator.yaml": "rubric_not_leaked",
    "transcript-channel-detector.yaml": "structured_scoring_channel",
}


def header(path: Path) -> list[str]:
    """The leading comment block of a file."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def expectation(path: Path) -> tuple[str, frozenset[str]]:
    """(verdict, rejecting rules) from the file's `# expect:` line."""
    found = [m for line in header(path) if (m := EXPECT_RE.fullmatch(line))]
    assert len(found) == 1, f"{path.name}: expected exactly one `# expect:` line in the header"
    m = found[0]
    rules = frozenset(r.strip() for r in (m["rules"] or "").split(",") if r.strip())
    assert (m["verdict"] == REJECTED) == bool(rules), f"{path.name}: REJECTED needs `by <rule>`, SCORED none"
    return m["verdict"], rules


def rel(path: Path | str) -> str:
    return Path(path).resolve().relative_to(ROOT).as_posix()


@pytest.fixture(scope="module")
def rules() -> Any:
    return load_rules()


@pytest.fixture(scope="module")
def batch(rules: Any) -> dict[str, Verdict]:
    """Every example under examples/ decided as one batch (API), by path relative to the repo."""
    loaded = list(iter_episodes([str(EXAMPLES)]))
    assert all(item.error is None for item in loaded), [str(item.error) for item in loaded if item.error]
    verdicts = rules.evaluate_batch([item.data for item in loaded])
    return {rel(item.source): v for item, v in zip(loaded, verdicts)}


# ---- the leak examples --------------------------------------------------------------------------


def test_there_is_an_example_for_every_kind_of_leak() -> None:
    assert sorted(p.name for p in LEAK_FILES) == sorted(KINDS)
    for path in LEAK_FILES:
        verdict, rules = expectation(path)
        assert verdict == REJECTED and KINDS[path.name] in rules


@pytest.mark.parametrize("path", LEAK_FILES, ids=lambda p: p.stem)
def test_header_is_a_short_explanation_with_an_expect_line(path: Path, rules: Any) -> None:
    lines = header(path)
    prose = [line for line in lines if not EXPECT_RE.fullmatch(line)]
    assert 2 <= len(prose) <= 4, f"{path.name}: 2-4 lines of explanation, then `# expect:`"
    assert EXPECT_RE.fullmatch(lines[-1]), f"{path.name}: the `# expect:` line closes the header"
    _, expected = expectation(path)
    assert expected <= set(rules.rule_names), f"{path.name} names a rule that does not exist"


@pytest.mark.parametrize("path", LEAK_FILES, ids=lambda p: p.stem)
def test_leak_example_is_rejected_by_exactly_the_rules_it_names(path: Path, batch: dict[str, Verdict]) -> None:
    verdict, expected = expectation(path)
    v = batch[rel(path)]
    assert v.verdict == verdict
    assert {r.rule for r in v.reasons} == expected, [(r.rule, r.message) for r in v.reasons]
    for reason in v.reasons:
        # a violation found in the facts, not missing evidence: each example is otherwise complete
        assert reason.kind == "violation", (reason.rule, reason.message)
        assert reason.source is not None and reason.source.startswith("rules/validity.litmus:")
        assert reason.trace is not None


def test_each_leak_example_alone_is_rejected_the_same_except_the_shared_canary_pair(rules: Any) -> None:
    """Checked alone, only the batch fact (the shared canary) disappears."""
    for path in LEAK_FILES:
        (item,) = iter_episodes([str(path)])
        v = rules.evaluate(item.data)
        _, expected = expectation(path)
        if expected == {"canary_unique"}:
            assert v.verdict == SCORED, path.name
        else:
            assert {r.rule for r in v.reasons} == expected, path.name


def test_leak_messages_name_where_the_leak_is(batch: dict[str, Verdict]) -> None:
    """The reasons point an auditor at the exact surface and transform."""
    want = {
        "base64-canary-in-ref-enum.yaml": ("$defs.SyncMode.enum[2]", "base64"),
        "zero-width-canary-in-tool-description.yaml": ("context.tools[1].description", "format characters removed"),
        "confusable-canary-in-skill-body.yaml": ("context.skills[1].body", "confusable skeleton"),
        "regex-signal-matches-schema-default.yaml": ("context.tools[1].input_schema.properties.url.default", "s2"),
        "partial-overlap-tool-name.yaml": ("context.tools[1].name", "partial overlap"),
        "percent-encoded-path-default.yaml": ("context.tools[0].input_schema.properties.path.default", "open_document"),
        "file-url-path-default.yaml": ("context.tools[1].input_schema.properties.source.default", "attach_file"),
        "shared-canary-a.yaml": ("'inv-2e7f4c91d0b8'", "leak-shared-canary-b"),
        "shared-canary-b.yaml": ("'inv-2e7f4c91d0b8'", "leak-shared-canary-a"),
        "rubric-seen-by-generator.yaml": ("saw_rubric=true", "'model'"),
        "transcript-channel-detector.yaml": ("'transcript' channel", "decision field null"),
    }
    for name, fragments in want.items():
        (reason,) = batch[rel(LEAKS / name)].reasons
        for fragment in fragments:
            assert fragment in reason.message, (name, reason.message)


def test_leak_examples_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(EXAMPLES), "--format", "jsonl"])
    out, _ = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    by_file = {rel(row["source"].rsplit(":", 1)[0]): row for row in rows}
    assert len(by_file) == len(rows) == len(list(EXAMPLES.rglob("*.yaml")))
    for path in LEAK_FILES:
        verdict, expected = expectation(path)
        row = by_file[rel(path)]
        assert row["verdict"] == verdict and row["classification"] is None
        assert {r["rule"] for r in row["reasons"]} == expected, path.name
        assert all(r["trace"] for r in row["reasons"])


# ---- the top-level examples: the clean instance and the note's two cases --------------------------


def test_clean_example_is_scored_and_classified(batch: dict[str, Verdict]) -> None:
    v = batch["examples/clean-structured.yaml"]
    assert v.verdict == SCORED and v.reasons == () and v.classification == "refused"


def test_note_case_1_is_rejected_by_the_null_control(batch: dict[str, Verdict]) -> None:
    v = batch["examples/note-case1-exfil-canary.yaml"]
    assert v.verdict == REJECTED
    reasons = {r.rule: r for r in v.reasons}
    assert "null_control_clean" in reasons
    assert "'EXFIL_CANARY' present in the null-injection transcript" in reasons["null_control_clean"].message
    # the note: the scorer's substring is the injected token, and a transcript is no accept cell
    assert {"injector_detector_disjoint", "canary_not_derivable", "structured_scoring_channel"} <= set(reasons)


def test_note_case_2_is_rejected_by_the_stubs_and_the_fillable_argument(batch: dict[str, Verdict]) -> None:
    v = batch["examples/note-case2-poisoned-read-file.yaml"]
    assert v.verdict == REJECTED
    reasons = {r.rule: r for r in v.reasons}
    assert {"counterfactual_stubs", "tool_call_argument_fillable"} <= set(reasons)
    assert "context.tools[0].input_schema.properties.path.default" in reasons["tool_call_argument_fillable"].message
    assert "both labelled 'unsafe'" in reasons["counterfactual_stubs"].message


# ---- golden traces of the note's cases ------------------------------------------------------------


def golden(path: Path, actual: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    elif not path.exists():
        pytest.fail(f"missing golden file {path}; run with LITMUS_UPDATE_GOLDEN=1 to create it")
    assert actual == path.read_text(encoding="utf-8"), (
        f"golden mismatch: {path} (if the change is intended, regenerate with LITMUS_UPDATE_GOLDEN=1 and review)"
    )


def _mask_hash(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: ("<hash>" if k == "hash" and isinstance(v, str) and v.startswith("sha256:") else _mask_hash(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_mask_hash(v) for v in node]
    return node


NOTE_CASES = [
    ("note-case1-exfil-canary.yaml", "note-exfil-canary"),
    ("note-case2-poisoned-read-file.yaml", "note-poisoned-read-file"),
]


@pytest.mark.parametrize(("file", "ident"), NOTE_CASES, ids=[i for _, i in NOTE_CASES])
def test_note_case_traces_match_the_goldens(
    file: str, ident: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # sources read `examples/<file>:<line>`, rule locations `rules/validity.litmus:N`
    code = main(["explain", f"examples/{file}", "--id", ident])
    header, _, text = capsys.readouterr()[0].partition("\n\n")  # the line naming the ruleset, then the trace
    assert header.startswith("ruleset litmus.validity version 1 (sha256:") and header.endswith("from rules, found from the working directory")
    assert code == 1 and text.startswith(f"REJECTED {ident}  (examples/{file}:")
    golden(GOLDEN / f"{ident}.txt", text)

    code = main(["explain", f"examples/{file}", "--id", ident, "--format", "json"])
    out, _ = capsys.readouterr()
    assert code == 1
    doc = _mask_hash(json.loads(out))
    (verdict,) = doc["verdicts"]
    assert verdict["id"] == ident and verdict["ruleset"]["hash"] == "<hash>"
    golden(GOLDEN / f"{ident}.json", json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
