"""`x in list` for a long list goes through the set of the list's strings (kept for the last list
asked about, within one evaluation): the same answers as the list's own `in`."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.lang.evaluate import _runtime
from litmus_rules.lang.evaluate._runtime import SET_MIN, Env, _member

_ITEMS = st.one_of(st.text(max_size=3), st.integers(-2, 2), st.booleans(), st.none(), st.floats(allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(st.lists(_ITEMS, min_size=SET_MIN - 2, max_size=3 * SET_MIN), st.lists(_ITEMS, max_size=10))
def test_membership_is_the_lists_own(container: list[Any], items: list[Any]) -> None:
    Env({}, {}, 0, 0, 1000)
    for item in items + container[:5]:
        expected = item in container if item.__class__ is str else any(
            _runtime._strict_eq(item, x) for x in container)
        assert _member(item, container, None) == expected  # type: ignore[arg-type]


def test_a_list_changed_between_two_evaluations_is_read_again() -> None:
    tokens = [f"t{i}" for i in range(2 * SET_MIN)]
    Env({}, {}, 0, 0, 1000)
    assert _member("new", tokens, None) is False  # type: ignore[arg-type]
    tokens.append("new")  # a harness reusing its facts
    Env({}, {}, 0, 0, 1000)  # the next evaluation
    assert _member("new", tokens, None) is True  # type: ignore[arg-type]
