"""The two statistics the report needs: a Wilson score interval for a proportion, and Pearson's
chi-square test of independence with its p-value.

The p-value is the chi-square survival function, the regularized upper incomplete gamma function
Q(k/2, x/2), computed here by its series and continued fraction (Numerical Recipes 6.2) rather than
by taking on SciPy (tens of MB) for one function; tests/test_report12_stats.py checks it against
tabulated values. Both are exact enough for a report (relative error below 1e-10).
"""

from __future__ import annotations

import math
from typing import Sequence

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile: a two-sided 95% interval


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `successes` out of `trials` (None when there are no trials)."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within 0..{trials}, got {successes}")
    p = successes / trials
    z2 = z * z
    denom = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # at 0 and n the bound is exactly 0 (or 1); rounding would leave it a hair off
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == trials else min(1.0, centre + half)
    return lo, hi


def _gamma_series(a: float, x: float) -> float:
    """P(a, x) by its series; converges fast for x < a + 1."""
    term = total = 1.0 / a
    ap = a
    for _ in range(10_000):
        ap += 1
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz); converges fast for x >= a + 1."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 1.0
    if x < a + 1:
        return max(0.0, 1.0 - _gamma_series(a, x))
    return _gamma_fraction(a, x)


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X chi-square distributed with `dof` degrees of freedom."""
    return gamma_q(dof / 2, statistic / 2)


def chi2_independence(table: Sequence[Sequence[int]]) -> dict[str, object] | None:
    """Pearson's test of independence on a table of counts (rows: groups; columns: outcomes).

    Rows and columns that are all zero are left out. None when fewer than two rows or columns
    remain (nothing to compare). Besides the statistic and p-value, the adjusted standardized
    residual of every cell (Agresti 2013, 2.4.5): about standard normal under independence, so a
    group with |residual| > 1.96 on an outcome lost (or kept) unevenly many episodes there.
    """
    rows_all = [list(r) for r in table]
    keep_cols = [j for j in range(len(rows_all[0]) if rows_all else 0) if any(r[j] for r in rows_all)]
    keep_rows = [i for i, r in enumerate(rows_all) if any(r[j] for j in keep_cols)]
    if len(keep_rows) < 2 or len(keep_cols) < 2:
        return None
    rows = [[rows_all[i][j] for j in keep_cols] for i in keep_rows]
    total = sum(map(sum, rows))
    row_sums = [sum(r) for r in rows]
    col_sums = [sum(r[j] for r in rows) for j in range(len(keep_cols))]
    statistic = 0.0
    residuals = [[0.0] * len(rows_all[0]) for _ in rows_all]
    min_expected = math.inf
    for i, r in enumerate(rows):
        for j, observed in enumerate(r):
            expected = row_sums[i] * col_sums[j] / total
            min_expected = min(min_expected, expected)
            statistic += (observed - expected) ** 2 / expected
            scale = expected * (1 - row_sums[i] / total) * (1 - col_sums[j] / total)
            residuals[keep_rows[i]][keep_cols[j]] = (observed - expected) / math.sqrt(scale) if scale > 0 else 0.0
    dof = (len(rows) - 1) * (len(keep_cols) - 1)
    return {
        "statistic": statistic,
        "dof": dof,
        "p_value": chi2_sf(statistic, dof),
        "residuals": residuals,
        # Cochran's rule: the chi-square approximation is doubtful when an expected count is below 5
        "min_expected": min_expected,
    }
