"""Issue 13's per-episode shortcuts give what the long way gives.

- The loader's size check of a document decoded from JSON text (`load._decoded_size_problem`: bounds
  from the text's length and bracket count, then a walk over containers only) finds exactly the
  problem the full walk (`load._size_problem`) finds.
- A batch that only writes verdicts as JSON (`RuleSet.evaluate(json_traces=...)`) records fewer
  classification traces, and writes the same JSON.
- `in` with a string on its left and a list on its right (list's own `in`, in C) is the JSON
  equality of the element-by-element loop, whatever the list holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import litmus_rules
from litmus_rules.io import load
from litmus_rules.lang.evaluate._runtime import _member, _strict_eq

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# JSON values whose strings are full of brackets (which the bracket count cannot tell from real ones)
_text = st.text(alphabet="[]{}ab\"\\", max_size=6)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=40,
)


def _chain(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"k": leaf}
    return leaf


@settings(max_examples=150, deadline=None)
@given(value=_json, depth=st.integers(0, 9), max_depth=st.integers(1, 8), max_values=st.integers(1, 60),
       indent=st.sampled_from([None, 1]))
def test_decoded_size_check_agrees_with_the_full_walk(
    value: Any, depth: int, max_depth: int, max_values: int, indent: int | None
) -> None:
    """Under small limits (so that random documents cross them, both ways), for the text as any
    JSON writer may lay it out: the same problem (message and path), and JSON types vouched for."""
    data = {"doc": _chain(depth, value)}
    text = json.dumps(data, indent=indent)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(load, "MAX_DEPTH", max_depth)
        mp.setattr(load, "MAX_VALUES", max_values)
        decoded = json.loads(text)
        assert load._decoded_size_problem(decoded, text, 0, len(text)) == load._size_problem(decoded)


def test_decoded_size_check_at_the_real_limits(tmp_path: Path) -> None:
    """200 nested containers pass and 201 fail, through the loader, whatever brackets the strings
    hold; a document with more brackets than MAX_DEPTH in its strings alone is still read."""
    minimal = {"litmus": "episode/1", "id": "m", "context": {}, "detector": {"channel": "dispatch"}}
    lines = [
        json.dumps({**minimal, "extra": _chain(199, "[" * 300)}),  # 200 levels with "extra"'s own
        json.dumps({**minimal, "extra": _chain(200, 1)}),
        json.dumps({**minimal, "extra": "{[" * 500}),
    ]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "d.json").write_text("[" + ",\n".join(lines) + "]")
    for name in ("d.jsonl", "d.json"):
        items = list(load.iter_episodes([str(tmp_path / name)]))
        codes = [e.error.code if e.error else None for e in items]
        assert codes[0] != load.LIMIT and codes[2] != load.LIMIT, [e.error for e in items]
        assert codes[1] == load.LIMIT and items[1].error is not None
        assert items[1].error.message == "document nests deeper than 200 levels"


def _episodes() -> list[dict[str, Any]]:
    items = [e for e in load.iter_episodes([str(EXAMPLES)]) if e.data is not None]
    assert len(items) >= 10
    return [e.data for e in items]


@pytest.mark.parametrize(("explain", "with_traces"), [("fails", True), ("fails", False), ("full", True)])
def test_json_traces_write_the_same_verdict_json(explain: str, with_traces: bool) -> None:
    rules = litmus_rules.load_rules()
    episodes = _episodes()
    scored_with_cells = 0
    for episode in episodes:
        whole = rules.evaluate(episode, explain=explain, validate=False)
        lean = rules.evaluate(episode, explain=explain, validate=False, json_traces=with_traces)
        assert lean.to_json(with_traces) == whole.to_json(with_traces)
        assert (lean.verdict, lean.classification, lean.classifications) == (
            whole.verdict, whole.classification, whole.classifications)
        if whole.scored and any(t.outcome == "not matched" for t in whole.classification_traces):
            scored_with_cells += 1
            if explain == "fails":  # what that JSON leaves out was not recorded
                assert len(lean.classification_traces) < len(whole.classification_traces)
    assert scored_with_cells > 0  # the examples do exercise cells that did not match


_scalars = st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=True) | st.sampled_from(["", "a", "1", "True", "lc-1"])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["", "a", "1", "True", "lc-1", "b"]),
       st.lists(_scalars | st.lists(_scalars, max_size=2) | st.dictionaries(st.sampled_from(["a", "1"]), _scalars, max_size=2),
                max_size=6))
def test_a_string_in_a_list_is_the_element_loops_answer(item: str, container: list[Any]) -> None:
    assert _member(item, container, None) is any(_strict_eq(item, x) for x in container)  # type: ignore[arg-type]
