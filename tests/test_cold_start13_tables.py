"""Plain tables are drawn without rich (render/tables.py `_plain`), character for character as rich
draws them: compared with rich itself on generated tables."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.render import tables

ASCII = st.text(string.printable[:95], max_size=12)  # printable ASCII, space included
ANY = st.text(max_size=6)  # anything: wide, combining and control characters, line breaks


@st.composite
def grids(draw: st.DrawFn, cells: st.SearchStrategy[str]) -> tuple[list[str], list[list[str]]]:
    columns = draw(st.integers(1, 4))
    header = draw(st.lists(cells, min_size=columns, max_size=columns))
    rows = draw(st.lists(st.lists(cells, min_size=columns, max_size=columns), max_size=5))
    return header, rows


def _both(header: list[str], rows: list[list[str]], **kw: object) -> tuple[list[str], list[str]]:
    ours = tables.table(rows, header, **kw)  # type: ignore[arg-type]
    theirs = tables._rich_table(rows, header, color=False, styles=None,  # noqa: SLF001
                                **{"right": (), "indent": 0, "width": None, **kw})  # type: ignore[arg-type]
    return ours, theirs


@settings(max_examples=150, deadline=None)
@given(grids(ASCII), st.integers(0, 4), st.sets(st.integers(0, 3)), st.one_of(st.none(), st.integers(5, 60)))
def test_a_plain_table_is_drawn_as_rich_draws_it(grid: tuple[list[str], list[list[str]]], indent: int,
                                                 right: set[int], width: int | None) -> None:
    header, rows = grid
    ours, theirs = _both(header, rows, indent=indent, right=right, width=width)
    assert ours == theirs


@settings(max_examples=60, deadline=None)
@given(grids(ANY))
def test_any_other_table_is_still_rich_s(grid: tuple[list[str], list[list[str]]]) -> None:
    header, rows = grid
    ours, theirs = _both(header, rows)
    assert ours == theirs


def test_the_summary_tables_of_a_check_are_plain() -> None:
    lines = tables.table([("tool_call_argument_fillable", "1"), ("x", "22")], ("reject reason", "episodes"),
                         right=(1,))
    assert lines == ["reject reason                episodes",
                     "---------------------------- --------",
                     "tool_call_argument_fillable  1",
                     "x                            22"]
