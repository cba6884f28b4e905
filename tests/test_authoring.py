"""`litmus-rules lint`, `fmt` and `rules info`, and the static knowledge behind them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import litmus_rules
from litmus_rules.authoring import lint as authoring
from litmus_rules._resources import default_rules_dir
from litmus_rules.authoring.evidence import Evidence as Knowledge
from litmus_rules.authoring.lint import STYLE_CODES, lint_path
from litmus_rules.lang.checker import CODES
from litmus_rules.cli import main
from litmus_rules.lang.syntax import parse, parse_expression

HEAD = 'ruleset t.lint version "1"\n\n'
CLEAN = HEAD + """\
param limit = 1

rule too_many
  "More signals than the limit."
  cite "T1"
  reject when any s in detector.signals: len(s.id) > limit
  because "signal {s.id} is too long"

classify decision
  "How the agent decided."
  "executed" when any d in episode.dispatch: d.decision == "execute"
  "none" otherwise
"""


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, text: str, name: str = "r.litmus") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def codes(tmp_path: Path, text: str) -> list[str]:
    return [d.code for d in lint_path(write(tmp_path, text)).diagnostics]


# ---- lint ----------------------------------------------------------------------------------------


def test_a_clean_formatted_ruleset_has_no_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert codes(tmp_path, CLEAN) == []
    code, out, _ = cli(capsys, "lint", str(tmp_path / "r.litmus"))
    head, tail = out.strip().splitlines()[0], out.strip().splitlines()[-1]  # the ruleset line heads the output
    assert code == 0 and tail == "0 error(s), 0 warning(s)" and head.startswith("ruleset t.lint version 1 (sha256:")


@pytest.mark.parametrize(
    "code, rule",
    [
        ("L401", 'rule r\n  cite "c"\n  reject when detector.channel == "x"\n  because "{detector.channel}"\n'),
        ("L402", 'rule r\n  "d"\n  reject when detector.channel == "x"\n  because "{detector.channel}"\n'),
        ("L403", 'rule r\n  "d"\n  cite "c"\n  reject when detector.channel == "x"\n'),
        ("L404", 'rule r\n  "d"\n  cite "c"\n  reject when any s in detector.signals: s.id == "x"\n  because "{detector.channel}"\n'),
        ("L404", 'rule r\n  "d"\n  cite "c"\n  reject when detector.channel == "x"\n  because "no value"\n'),
        ("L405", 'rule r\n  "d"\n  cite "c"\n  reject unless detector.channel == "dispatch"\n  because "{detector.channel}"\n'),
        ("L406", 'classify k\n  "a" when detector.channel == "x"\n  "b" otherwise\n'),
        ("L407", 'param p = true\n\nrule r\n  "d"\n  cite "c"\n  reject when p\n  because "{p}"\n'),
        ("L408", 'rule r\n  "d"\n  cite "c"\n  reject when default(detector.channel, "x") == "x"\n  because "{detector.channel}"\n'),
        ("L409", 'rule   r "d" cite "c" reject when detector.channel == "x" because "{detector.channel}"\n'),
    ],
)
def test_each_style_warning_fires_on_its_example(tmp_path: Path, code: str, rule: str) -> None:
    found = codes(tmp_path, HEAD + rule)
    assert code in found
    assert all(c in STYLE_CODES for c in found)  # and nothing else is wrong with the example


def test_style_codes_are_one_documented_table_outside_the_checkers_range() -> None:
    assert not set(STYLE_CODES) & set(CODES)
    assert all(code.startswith("L4") and severity == "warning" for code, (severity, _, _) in STYLE_CODES.items())
    docs = (Path(__file__).resolve().parent.parent / "docs" / "authoring.md").read_text(encoding="utf-8")
    assert all(f"`{code}`" in docs for code in STYLE_CODES)


def test_loader_diagnostics_come_through_unchanged_with_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, HEAD + 'param unused = 1\n\nrule r\n  "d"\n  cite "c"\n  reject when detector.chanel == "x"\n  because "{detector.channel}"\n')
    code, out, _ = cli(capsys, "lint", str(tmp_path), "--format", "json")
    doc = json.loads(out)
    assert code == 2  # an error: these rules do not load
    by_code = {d["code"]: d for d in doc["diagnostics"]}
    unused_param = next(c for c, (_, name) in CODES.items() if name == "unused-param")
    assert {"L202", unused_param} <= set(by_code)
    assert by_code["L202"]["line"] == 8 and by_code["L202"]["column"] == 15
    assert by_code["L202"]["file"].endswith("r.litmus") and by_code["L202"]["help"] == "did you mean `detector.channel`?"
    assert doc["summary"]["errors"] == 1


def test_a_syntax_error_in_any_file_is_reported_with_its_location(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, CLEAN, "a.litmus")
    write(tmp_path, HEAD + "rule r reject when (\n", "b.litmus")
    code, out, _ = cli(capsys, "lint", str(tmp_path))
    assert code == 2
    assert "b.litmus:4:1: error[L100]:" in out or "b.litmus:3:" in out


def test_files_of_one_ruleset_must_share_the_header(tmp_path: Path) -> None:
    write(tmp_path, CLEAN, "a.litmus")
    write(tmp_path, 'ruleset other version "1"\n\nlet x = 1\n', "b.litmus")
    assert "L215" in [d.code for d in lint_path(tmp_path).diagnostics]


def test_lint_warnings_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, HEAD + 'rule r\n  "d"\n  reject when detector.channel == "x"\n  because "{detector.channel}"\n')
    code, out, _ = cli(capsys, "lint", str(tmp_path))
    assert code == 1
    assert "r.litmus:3:6: warning[L402]: rule `r` cites nothing" in out
    assert "= help:" in out


def test_the_shipped_rules_have_no_lint_errors() -> None:
    report = lint_path(default_rules_dir())
    assert report.errors == 0


# ---- what can be unknown -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, unknown",
    [
        ("detector.channel", False),  # required by the episode schema
        ("detector.scope", True),
        ("context.tools", True),
        ("default(context.tools, [])", False),
        ("known(provenance)", False),
        ("surfaces", False),  # derived by the engine
        ("any s in surfaces: s.injected", False),
        ("any c in shared_canaries: len(c.other_ids) > 0", False),
        ("any s in detector.signals: s.kind == \"regex\"", True),
        ("[t.name for t in default(context.tools, [])]", False),  # a tool always has a name
        ("xs[0]", True),
        ("1 + 2 == 3", False),
    ],
)
def test_knowledge_says_which_values_may_be_unknown(expr: str, unknown: bool) -> None:
    know = Knowledge(parse('ruleset k version "1"'))
    assert know.may_be_unknown(parse_expression(expr)) is unknown


def test_knowledge_follows_lets_and_params() -> None:
    rs = parse('ruleset k version "1"\nparam p = 1\nlet a = default(context.tools, [])\nlet b = provenance\n')
    know = Knowledge(rs)
    assert not know.may_be_unknown(parse_expression("len(a) > p"))
    assert know.may_be_unknown(parse_expression("b.payload_generator"))
    assert not know.reads_facts(parse_expression("p + 1")) and know.reads_facts(parse_expression("a"))


# ---- fmt -----------------------------------------------------------------------------------------

UGLY = HEAD + "let   x=[ 1,2 ]   # keep me\n"


def test_fmt_check_reports_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, UGLY)
    code, out, err = cli(capsys, "fmt", "--check", str(tmp_path))
    assert code == 1 and "would reformat" in out and path.read_text() == UGLY
    assert "1 file(s) would be reformatted" in err


def test_fmt_diff_shows_the_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, UGLY)
    code, out, _ = cli(capsys, "fmt", "--diff", str(tmp_path))
    assert code == 1
    assert "-let   x=[ 1,2 ]   # keep me" in out and "+let x = [1, 2]  # keep me" in out


def test_fmt_rewrites_in_place_then_has_nothing_left_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, UGLY)
    assert cli(capsys, "fmt", str(path))[0] == 0
    assert path.read_text() == HEAD + "let x = [1, 2]  # keep me\n"
    assert cli(capsys, "fmt", "--check", str(path))[0] == 0


def test_fmt_reads_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(UGLY))
    code, out, _ = cli(capsys, "fmt", "-")
    assert code == 0 and out == HEAD + "let x = [1, 2]  # keep me\n"


def test_fmt_of_a_file_that_does_not_parse_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, HEAD + "let x = (\n")
    code, _, err = cli(capsys, "fmt", str(path))
    assert code == 2 and "r.litmus:" in err
    assert path.read_text() == HEAD + "let x = (\n"


def test_fmt_of_a_missing_path_is_misuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "fmt", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


# ---- rules info ----------------------------------------------------------------------------------


def test_rules_info_lists_rules_citations_params_and_the_hash(capsys: pytest.CaptureFixture[str]) -> None:
    loaded = litmus_rules.load_rules()
    code, out, _ = cli(capsys, "rules", "info")
    assert code == 0
    assert f"ruleset {loaded.name} version {loaded.version}" in out and loaded.info.hash in out
    for rule in loaded.ast.rules:
        assert rule.name in out and (rule.cite or "") in out
    code, out, _ = cli(capsys, "rules", "info", "--format", "json")
    doc = json.loads(out)
    assert doc["hash"] == loaded.info.hash and [r["name"] for r in doc["rules"]] == loaded.rule_names
    by_name = {r["name"]: r for r in doc["rules"]}
    assert by_name["injector_detector_disjoint"]["params"] == ["min_partial_len", "common_word_zipf"]


def test_rules_info_finds_params_through_lets(tmp_path: Path) -> None:
    write(tmp_path, HEAD + 'param p = 1\nlet a = len(detector.signals) > p\n\nrule r\n  "d"\n  cite "c"\n  reject when a\n  because "{detector.channel}"\n')
    info = authoring.ruleset_info(tmp_path)
    assert info["rules"][0]["params"] == ["p"] and info["params"][0]["default"] == "1"
    assert info["name"] == "t.lint" and info["hash"].startswith("sha256:")


def test_rules_info_on_rules_that_do_not_load_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, HEAD + "rule r reject when nope\n")
    code, _, err = cli(capsys, "rules", "info", str(tmp_path))
    assert code == 2 and "L201" in err
