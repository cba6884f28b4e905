"""End-to-end `litmus-rules check` on realistic episodes, and the rules against plain Python.

Realistic episodes (bench/realistic.py): 20 tools with nested schemas, 10 KB transcripts, 3
signals, about one in five contaminated. Prints, in one run:

1. `check` as users run it (a subprocess, JSONL in, JSONL out): episodes/s and the peak memory of
   any one process, with one process and with the pool, for growing batches (memory must stay flat).
2. The shipped rules through `RuleSet.evaluate` against `plain_rules.check`, a hand-written Python
   version of the same checks calling the same built-ins, on the same episodes: episodes/s and ratio.
3. One episode with a 400-tool manifest of about 1 MB: milliseconds per evaluation, both ways.

Peak memory is the largest resident size of any one process of the run (the pool's workers
included), so growing batch sizes show whether it stays flat.
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


def timed_check(*args: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of the largest process of one `litmus-rules check ARGS` run
    (its stdout: /dev/null); exit 0 or 1, else the run stops here with check's stderr."""
    cmd = [sys.executable, "-m", "litmus_rules", "check", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"check {' '.join(args)} failed with exit {code}: {err}")
    return elapsed, usage.ru_maxrss / 1024


def run_check(path: str, jobs: int) -> tuple[float, float]:
    return timed_check(path, "--format", "jsonl", "--jobs", str(jobs))


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

    # Every timed run gets episodes it has never seen (the built-ins cache the forms of texts they
    # have seen, as a real batch that shares a manifest would); the two implementations alternate.
    rules = litmus_rules.load_rules()
    check_set = realistic.episodes(args.n, seed=7)
    ours = [(v.verdict, sorted(r.rule for r in v.reasons)) for v in (rules.evaluate(e, validate=False) for e in check_set)]
    plain = [plain_rules.check(e) for e in check_set]
    if ours != plain:
        bad = next(i for i, (a, b) in enumerate(zip(ours, plain)) if a != b)
        raise SystemExit(f"the two implementations disagree on episode {bad}: rules={ours[bad]} plain={plain[bad]}")
    t_rules = t_plain = float("inf")
    for r in range(args.repeats):
        a, b = realistic.episodes(args.n, seed=100 + 2 * r), realistic.episodes(args.n, seed=101 + 2 * r)
        if r % 2:
            a, b = b, a
        t_rules = min(t_rules, best(lambda: [rules.evaluate(e, validate=False) for e in a], 1))
        t_plain = min(t_plain, best(lambda: [plain_rules.check(e) for e in b], 1))
    rejected = sum(v == "REJECTED" for v, _ in ours)
    print(f"\nin process, {args.n} new realistic episodes per run ({rejected} of {len(ours)} rejected), same built-ins:")
    print(f"  plain python:  {args.n / t_plain:8.1f} episodes/s")
    print(f"  litmus_rules:  {args.n / t_rules:8.1f} episodes/s   ratio={t_rules / t_plain:.2f}")

    bigs = [realistic.episode(0, random.Random(seed), n_tools=400, description_words=200) for seed in range(2 * args.repeats)]
    size = len(json.dumps(bigs[0])) / 2**20
    t_big = min(best(lambda: rules.evaluate(e, validate=False), 1) for e in bigs[::2])
    t_big_plain = min(best(lambda: plain_rules.check(e), 1) for e in bigs[1::2])
    print(f"\n400-tool manifest ({size:.2f} MiB, new each run): litmus_rules {t_big * 1000:.1f} ms, plain {t_big_plain * 1000:.1f} ms")


if __name__ == "__main__":
    main()
