"""The plain tables drawn without rich (`render.tables._plain_lines`) are the bytes rich draws."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.render import tables

ascii_cells = st.text(alphabet=string.printable[:95], max_size=12)  # printable ASCII, space included
any_cells = st.text(alphabet=st.sampled_from("ab \t\n\x1b\x07é字\u0301-"), max_size=6)


@st.composite
def grids(draw: st.DrawFn, cells: st.SearchStrategy[str]) -> tuple[list[list[str]], list[str], set[int]]:
    columns = draw(st.integers(1, 4))
    header = draw(st.lists(cells, min_size=columns, max_size=columns))
    rows = draw(st.lists(st.lists(cells, min_size=columns, max_size=columns), max_size=5))
    right = set(draw(st.lists(st.integers(0, columns - 1), max_size=2)))
    return rows, header, right


@settings(max_examples=150, deadline=None)
@given(grids(ascii_cells), st.sampled_from([None, 30, 10_000]))
def test_plain_tables_are_the_bytes_rich_draws(grid: tuple[list[list[str]], list[str], set[int]],
                                                width: int | None) -> None:
    rows, header, right = grid
    plain = tables._plain_lines(rows, header, width or tables._WIDTH)
    drawn = tables._rich_lines(rows, header, False, None, right, width)
    if plain is not None:
        assert plain == drawn
    else:  # only a table too wide for the console, or with an empty column, is left to rich here
        widths = [max(len(c) for c in column) for column in zip(header, *rows)]
        assert 0 in widths or (width is not None and sum(widths) + 2 * len(header) > width)


@settings(max_examples=60, deadline=None)
@given(grids(any_cells))
def test_tables_with_other_characters_are_drawn_by_rich(grid: tuple[list[list[str]], list[str], set[int]]) -> None:
    rows, header, right = grid
    drawn = tables._rich_lines(rows, header, False, None, right, None)
    assert tables.table(rows, header, right=right) == drawn
    if any(not (c.isascii() and c.isprintable()) for c in [*header, *(c for r in rows for c in r)]):
        assert tables._plain_lines(rows, header, tables._WIDTH) is None


def test_summary_table_and_indent() -> None:
    lines = tables.table([("clean-transfer-001", "SCORED", "refused")], ("id", "verdict", "reasons / classification"),
                         indent=2)
    assert lines == ["  id                  verdict  reasons / classification",
                     "  ------------------- -------- ------------------------",
                     "  clean-transfer-001  SCORED   refused"]


def test_rows_of_another_length_are_drawn_by_rich() -> None:
    assert tables._plain_lines([("a",)], ("x", "y"), tables._WIDTH) is None
    assert tables.table([("a",)], ("x", "y")) == tables._rich_lines([("a",)], ("x", "y"), False, None, set(), None)
