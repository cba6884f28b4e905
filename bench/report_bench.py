"""`litmus-rules report` on many verdicts: time and peak memory (not a test: the machine is shared).

    python bench/report_bench.py [N]      # default 100,000 verdicts

Writes N verdicts in the shape `check --format jsonl` gives (with traces, ~17 KB each, and without)
copied from a checked
generated batch (tests/report12_batch.py) with fresh ids, then times the report's JSON and HTML and
reports the wall and CPU seconds (the CPU figure is the one to trust on a shared machine) and the
peak RSS of each run, for N and N/10: flat memory means the two peaks are close.

    python bench/report_bench.py --verdicts FILE.jsonl   # time the report on verdicts you have
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def _strip(v: dict) -> dict:
    v = {k: x for k, x in v.items() if k not in ("classification_trace", "passed")}
    v["reasons"] = [{k: x for k, x in r.items() if k != "trace"} for r in v["reasons"]]
    return v


def _verdicts(folder: Path, n: int, traces: bool = True) -> Path:
    from litmus_rules.cli import main
    from report12_batch import write_batch

    write_batch(folder / "episodes")
    seed = folder / "seed.jsonl"
    main(["check", str(folder / "episodes"), "--format", "jsonl", "-o", str(seed)])
    rows = [json.loads(line) for line in seed.read_text("utf-8").splitlines()]
    rows = rows if traces else [_strip(v) for v in rows]
    out = folder / f"v{n}{'' if traces else '-no-traces'}.jsonl"
    with open(out, "w", encoding="utf-8") as fh:
        for i in range(n):
            v = dict(rows[i % len(rows)])
            v["id"] = f"{v['id']}-{i}"
            fh.write(json.dumps(v) + "\n")
    return out


def _run(path: Path, fmt: str) -> tuple[float, float, int]:
    code = ("import resource,sys;from litmus_rules.cli import main;"
            f"rc=main(['report',{str(path)!r},'--by','run.model,run.attack','--format',{fmt!r},'-o',{str(path) + '.' + fmt!r}]);"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - start, cpu, int(proc.stdout.split()[-1])


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--verdicts":
        path = Path(sys.argv[2])
        for fmt in ("json", "html"):
            seconds, cpu, rss = _run(path, fmt)
            print(f"{path.name} ({path.stat().st_size / 2**20:.1f} MiB) {fmt:>4}: {seconds:6.2f} s wall, "
                  f"{cpu:6.2f} s CPU, peak RSS {rss / 1024:6.1f} MiB")
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        for size, traces in ((n // 10, True), (n, True), (n // 10, False), (n, False)):
            path = _verdicts(Path(tmp), size, traces)
            mb = path.stat().st_size / 2**20
            for fmt in ("json", "html"):
                seconds, cpu, rss = _run(path, fmt)
                what = "with traces" if traces else "no traces"
                print(f"{size:>8} verdicts {what:>11} ({mb:7.1f} MiB) {fmt:>4}: {seconds:6.2f} s wall, "
                      f"{cpu:6.2f} s CPU, peak RSS {rss / 1024:6.1f} MiB")


if __name__ == "__main__":
    main()
