"""The report's statistics against known values: Wilson intervals, the chi-square survival
function and the test of independence."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.render.report.stats import chi2_independence, chi2_sf, gamma_q, wilson


@pytest.mark.parametrize(
    "k, n, lo, hi",
    [
        (0, 10, 0.000, 0.278),
        (5, 10, 0.237, 0.763),
        (10, 10, 0.722, 1.000),
        (1, 10, 0.018, 0.404),  # Newcombe (1998), table I
        (81, 263, 0.2553, 0.3662),  # Agresti & Coull (1998) example
    ],
)
def test_wilson_known_values(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson(k, n)
    assert got is not None
    digits = 3 if round(lo, 3) == lo else 4
    assert round(got[0], digits) == pytest.approx(lo) and round(got[1], digits) == pytest.approx(hi)


def test_wilson_no_trials_and_bad_counts() -> None:
    assert wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(3, 2)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate_and_is_symmetric(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = wilson(k, n)  # type: ignore[misc]
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    lo2, hi2 = wilson(n - k, n)  # type: ignore[misc]
    assert lo == pytest.approx(1 - hi2, abs=1e-12) and hi == pytest.approx(1 - lo2, abs=1e-12)


@pytest.mark.parametrize(
    "x, dof, p",
    [
        (3.841458820694124, 1, 0.05),
        (5.991464547107979, 2, 0.05),
        (6.634896601021214, 1, 0.01),
        (10.0, 4, 0.040427681994512805),
        (1.0, 3, 0.8012519569012008),
        (30.0, 10, 0.0008566412106150362),
        (0.5, 20, 0.9999999999999),  # deep in the left tail: series branch
        (200.0, 50, 3.9e-20),
    ],
)
def test_chi2_survival_known_values(x: float, dof: int, p: float) -> None:
    assert chi2_sf(x, dof) == pytest.approx(p, rel=2e-2 if p < 1e-10 else 1e-9)


def test_gamma_q_closed_forms() -> None:
    # Q(1, x) = exp(-x); Q(1/2, x) = erfc(sqrt(x))
    for x in (0.1, 1.0, 2.5, 7.0, 40.0):
        assert gamma_q(1.0, x) == pytest.approx(math.exp(-x), rel=1e-12)
        assert gamma_q(0.5, x) == pytest.approx(math.erfc(math.sqrt(x)), rel=1e-9)
    assert gamma_q(3.0, 0.0) == 1.0


def test_independence_on_a_textbook_table() -> None:
    # 2x2: [[10, 20], [30, 40]]: chi2 = 0.7937 (no continuity correction), p = 0.3730
    result = chi2_independence([[10, 20], [30, 40]])
    assert result is not None
    assert result["statistic"] == pytest.approx(0.79365079, rel=1e-6)
    assert result["dof"] == 1
    assert result["p_value"] == pytest.approx(0.37299, rel=1e-3)
    # in a 2x2 table every adjusted residual is +-sqrt(chi2)
    for row in result["residuals"]:  # type: ignore[union-attr]
        for r in row:
            assert abs(r) == pytest.approx(math.sqrt(result["statistic"]), rel=1e-9)  # type: ignore[arg-type]


def test_independence_drops_empty_rows_and_columns() -> None:
    assert chi2_independence([[5, 0], [7, 0]]) is None  # one outcome only
    assert chi2_independence([[5, 3]]) is None  # one group only
    with_empty = chi2_independence([[10, 0, 20], [30, 0, 40], [0, 0, 0]])
    plain = chi2_independence([[10, 20], [30, 40]])
    assert with_empty is not None and plain is not None
    assert with_empty["statistic"] == pytest.approx(plain["statistic"]) and with_empty["dof"] == 1
    assert chi2_independence([[50, 0], [0, 50]])["p_value"] < 1e-20  # type: ignore[index,operator]
