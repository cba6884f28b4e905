"""Rule folders are untrusted too: a FIFO or device named like a rule file is refused without being
opened for a blocking read, and so is an oversized one; the command says which file."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

import litmus_rules
from litmus_rules.engine import stages as engine
from litmus_rules.cli import main
from litmus_rules.errors import LitmusConfigError

RULE = 'ruleset t version "1"\nrule r\n  reject when false\n  because "never"\n'


def test_a_fifo_named_like_a_rule_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    (tmp_path / "a.litmus").write_text(RULE)
    os.mkfifo(tmp_path / "b.litmus")
    with pytest.raises(LitmusConfigError, match=r"b\.litmus.*not a regular file"):
        litmus_rules.load_rules(tmp_path)


def test_fmt_and_lint_refuse_a_fifo_rule_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "b.litmus")
    assert main(["fmt", "--check", str(tmp_path / "b.litmus")]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_rule_file_past_the_read_limit_is_refused_before_it_is_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.litmus"
    path.write_text(RULE)
    monkeypatch.setattr(engine, "RULE_FILE_READ_LIMIT", len(RULE.encode()))
    assert litmus_rules.load_rules(path).name == "t"  # at the limit
    monkeypatch.setattr(engine, "RULE_FILE_READ_LIMIT", len(RULE.encode()) - 1)
    with pytest.raises(LitmusConfigError, match="limit for a rule file"):
        litmus_rules.load_rules(path)


def test_a_yaml_stream_with_a_lone_surrogate_is_an_error_for_that_input() -> None:
    (loaded,) = list(litmus_rules.read_episodes(["-"], stdin=io.StringIO("\n\n\udce8")))
    assert loaded.data is None and loaded.error is not None
    assert loaded.error.code.startswith("L3")
