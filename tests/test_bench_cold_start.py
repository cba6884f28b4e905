"""bench/cold_start.py runs end to end and prints every variant, the ratios and the target line
(its figures are read by people, not asserted: the machines are shared)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "cold_start.py"


@pytest.mark.skipif(not BENCH.exists(), reason="bench/ is not shipped with the package")
def test_cold_start_bench_prints_its_table() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--runs", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for variant in ("python -c pass", "plain Python (yaml)", "check (this)"):
        row = next(line for line in out.splitlines() if line.startswith(variant))
        assert len(re.findall(r"\d+\.\d{3}s", row)) == 4, row
    assert re.search(r"check / plain Python \(yaml\): wall \d+\.\d\dx, CPU \d+\.\d\dx", out)
    assert re.search(r"target: median wall <= 0\.3 s on an idle machine: \d\.\d{3} s, (met|not met)", out)
