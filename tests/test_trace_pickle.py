"""A verdict that crosses a process boundary (the Dask engine's `evaluate_batch`) keeps its traces:
the recorded values are keyed by this process's AST nodes, so a trace pickles as what it shows."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from litmus_rules import load_rules
from litmus_rules.io.load import iter_episodes
from litmus_rules.render.text import render_verdict

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("explain", ["fails", "full"])
def test_a_pickled_verdict_gives_the_same_json_and_text(explain: str) -> None:
    rules = load_rules()
    episodes = [loaded.data for loaded in iter_episodes([str(EXAMPLES)]) if loaded.data is not None]
    assert len(episodes) > 10
    for episode in episodes:
        verdict = rules.evaluate(episode, explain=explain)
        copy = pickle.loads(pickle.dumps(verdict))
        assert json.dumps(copy.to_json(), default=str) == json.dumps(verdict.to_json(), default=str), verdict.id
        assert render_verdict(copy, explain) == render_verdict(verdict, explain), verdict.id
        if verdict.reasons and verdict.reasons[0].trace is not None:
            condition = copy.reasons[0].trace.to_json()["condition"]  # type: ignore[union-attr]
            assert condition is not None and condition["evaluated"] is True
