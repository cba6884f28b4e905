"""End-to-end `litmus-rules check` on realistic episodes, and the rules against plain Python.

Realistic episodes (bench/realistic.py): 20 tools with nested schemas, 10 KB transcripts, 3
signals, about one in five contaminated. Prints, in one run:

1. `check` as users run it (a subprocess, JSONL in, JSONL out): episodes/s and the peak memory of
   any one process, with one process and with the pool, for growing batches (memory must stay flat).
2. The shipped rules through `RuleSet.evaluate` against `plain_rules.check`, a hand-written Python
   version of the same checks calling the same built-ins, on the same episodes: episodes/s and ratio.
3. One episode with a 400-tool manifest of about 1 MB: milliseconds per evaluation, both ways.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import plain_rules  # noqa: E402
import realistic  # noqa: E402

import litmus_rules  # noqa: E402


def run_check(path: str, jobs: int) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of the largest process of one `check` run."""
    cmd = [sys.executable, "-m", "litmus_rules", "check", path, "--format", "jsonl", "-o", os.devnull, "--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"check failed with exit {code}: {proc.stderr.read().decode() if proc.stderr else ''}")
    return elapsed, usage.ru_maxrss / 1024


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,500,1000", help="batch sizes for the end-to-end runs")
    parser.add_argument("-n", type=int, default=200, help="episodes for the in-process comparison")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"end to end: litmus-rules check FILE.jsonl --format jsonl  ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"batch-{n}.jsonl")
            with open(path, "w") as fh:
                rng = random.Random(11)
                for i in range(n):
                    fh.write(json.dumps(realistic.episode(i, rng)) + "\n")
            mb = os.path.getsize(path) / 2**20
            for jobs in (1, 2):
                elapsed, rss = run_check(path, jobs)
                print(f"  {n:>5} episodes ({mb:5.1f} MiB)  jobs={jobs}: {n / elapsed:7.1f} episodes/s  peak {rss:6.1f} MiB")

    episodes = realistic.episodes(args.n)
    rules = litmus_rules.load_rules()
    ours = [(v.verdict, sorted(r.rule for r in v.reasons)) for v in (rules.evaluate(e, validate=False) for e in episodes)]
    plain = [plain_rules.check(e) for e in episodes]
    if ours != plain:
        bad = next(i for i, (a, b) in enumerate(zip(ours, plain)) if a != b)
        raise SystemExit(f"the two implementations disagree on episode {bad}: rules={ours[bad]} plain={plain[bad]}")
    t_rules = best(lambda: [rules.evaluate(e, validate=False) for e in episodes], args.repeats)
    t_plain = best(lambda: [plain_rules.check(e) for e in episodes], args.repeats)
    rejected = sum(v == "REJECTED" for v, _ in ours)
    print(f"\nin process, {len(episodes)} realistic episodes ({rejected} rejected), same built-ins:")
    print(f"  plain python:  {len(episodes) / t_plain:8.1f} episodes/s")
    print(f"  litmus_rules:  {len(episodes) / t_rules:8.1f} episodes/s   ratio={t_rules / t_plain:.2f}")

    big = realistic.episode(0, random.Random(1), n_tools=400)
    size = len(json.dumps(big)) / 2**20
    t_big = best(lambda: rules.evaluate(big, validate=False), args.repeats)
    t_big_plain = best(lambda: plain_rules.check(big), args.repeats)
    print(f"\n400-tool manifest ({size:.2f} MiB): litmus_rules {t_big * 1000:.1f} ms, plain {t_big_plain * 1000:.1f} ms")


if __name__ == "__main__":
    main()
