"""The Dask engine without a cluster: what `--engine dask` says when the extra is not installed,
misuse of its options, and the canary group-by's merge tree run in-process (any bucket count, any
fan-in: the owners a sequential pass over the units finds, in the same order)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules import load_rules
from litmus_rules.cli import main
from litmus_rules.engine import distributed as engine
from litmus_rules.errors import LitmusConfigError

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")


@pytest.fixture
def no_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the extra were not installed: importing dask or distributed fails."""
    for name in [m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "distributed", None)


@pytest.mark.parametrize("command", [["check", EXAMPLES], ["preflight", EXAMPLES, "--format", "jsonl"]])
def test_the_dask_engine_without_dask_says_how_to_install_it_in_one_line(
    command: list[str], no_dask: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*command, "--engine", "dask"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and 'pip install "litmus-rules[dask]"' in err


def test_evaluate_batch_on_dask_without_dask_says_how_to_install_it(no_dask: None) -> None:
    with pytest.raises(LitmusConfigError, match=r'pip install "litmus-rules\[dask\]"'):
        load_rules().evaluate_batch([], engine="dask")


@pytest.mark.parametrize("argv", [["--scheduler", "tcp://127.0.0.1:8786"], ["--unordered"]])
def test_dask_options_without_the_dask_engine_are_misuse(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", EXAMPLES, *argv]) == 2
    assert "apply to --engine dask" in capsys.readouterr().err


def test_standard_input_with_a_remote_scheduler_is_refused_before_reading_it(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    assert main(["check", "-", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot read standard input" in capsys.readouterr().err


def sequential(units: list[list[tuple[str, list[str]]]]) -> dict[str, list[str]]:
    """What the local engine computes (engine/batch.py check_inputs): one pass, in unit order."""
    owners: dict[str, list[str]] = {}
    for pairs in units:
        for owner, values in pairs:
            for value in values:
                ids = owners.setdefault(value, [])
                if owner not in ids:
                    ids.append(owner)
    return {value: ids for value, ids in owners.items() if len(ids) > 1}


def in_process(fn: Any, *args: Any, key: str) -> Any:
    return fn(*args)


ids = st.sampled_from([f"e{i}" for i in range(8)])
values = st.lists(st.sampled_from([f"c{i}" for i in range(6)]), max_size=3)
units = st.lists(st.lists(st.tuples(ids, values), max_size=4), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(units, st.integers(1, 4), st.integers(2, 4))
def test_the_merge_tree_finds_the_shared_owners_of_a_sequential_pass(
    units: list[list[tuple[str, list[str]]]], buckets: int, fan_in: int
) -> None:
    mapped = [engine.bucketed(pairs, buckets) for pairs in units]
    roots = engine.group_by(in_process, mapped, buckets, "t", fan_in)
    found: dict[str, list[str]] = {}
    for part in roots:
        assert not set(part) & set(found)  # a value lives in one bucket only
        found.update(part)
    assert found == sequential(units)  # the same owners, in the same (input) order
