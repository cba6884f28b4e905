"""Scaling `check` past one process: the local engine and the Dask engine (1 and 2 workers).

Generates N episodes (bench/realistic.py's, lighter: 5 tools, 2 KB transcripts; unique ids and
canaries, and one canary planted by two episodes in every 1,000, so the group-by has work), then
runs `litmus-rules check FILE --format jsonl --no-traces -o OUT` as users run it:

- local, --jobs 1 and --jobs 2 (the process pool);
- dask, on a LocalCluster of 1 and then 2 single-threaded workers started here (and warmed up on a
  few episodes, so that a run measures checking, not starting a cluster), with `--scheduler`.

For each: episodes/s, the peak RSS of the client process (the `check` process: with --scheduler
it has no child, so this is the client alone; the local engine's figure is its largest process),
and the scaling ratio (2 workers / 1). The outputs of all runs are compared: they must be the same
bytes. Usage: python bench/scale.py [-n 10000 [100000 ...]] [--workers 1 2] [--local-jobs 1 2]
(on this 2-core machine, about 100 episodes/s a core when idle: 1M takes hours).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_e2e  # noqa: E402
import realistic  # noqa: E402

from litmus_rules.render.report.provenance import sha256_file  # noqa: E402

TEMPLATES = 200


def generate(path: str, n: int, seed: int = 16) -> None:
    """n episodes from TEMPLATES distinct ones, each with its own id and canary."""
    rng = random.Random(seed)
    templates = []
    for i in range(TEMPLATES):
        doc = realistic.episode(i, rng, n_tools=5, transcript_chars=2000, description_words=12)
        templates.append((json.dumps(doc), doc["id"], doc["canaries"][0]["value"]))
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            text, ident, canary = templates[i % TEMPLATES]
            # every 1000th episode plants the canary of the one before it: a pair the group-by must find
            mine = f"lc-scale-{(i - 1 if i % 1000 == 999 else i):09d}"
            fh.write(text.replace(ident, f"scale-{i:09d}").replace(canary, mine) + "\n")


def run_check(path: str, out: str, *options: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `check` run (the process and any child it waited for)."""
    return check_e2e.timed_check(path, "--format", "jsonl", "--no-traces", "-o", out, *options)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, nargs="+", default=[10_000], help="batch sizes (default 10000)")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="Dask worker counts (default 1 2)")
    parser.add_argument("--local-jobs", type=int, nargs="*", default=[1, 2],
                        help="local engine --jobs values (default 1 2; none: skip the local engine)")
    args = parser.parse_args()

    from distributed import Client

    from litmus_rules.engine.distributed import local_cluster

    print(f"litmus-rules check --format jsonl --no-traces  ({os.cpu_count()} cores)")
    print(f"{'episodes':>9} {'engine':<16} {'seconds':>8} {'episodes/s':>11} {'client peak RSS':>16}")
    with tempfile.TemporaryDirectory(prefix="litmus-scale-") as tmp:
        warm = os.path.join(tmp, "warm.jsonl")
        generate(warm, 20, seed=1)
        for n in args.n:
            path = os.path.join(tmp, f"batch-{n}.jsonl")
            generate(path, n)
            mib = os.path.getsize(path) / 2**20
            rates: dict[str, float] = {}
            digests: dict[str, str] = {}

            def report(name: str, elapsed: float, rss: float, out: str) -> None:
                rates[name] = n / elapsed
                digests[name] = sha256_file(Path(out))
                os.unlink(out)
                print(f"{n:>9} {name:<16} {elapsed:8.1f} {n / elapsed:11.1f} {rss:12.1f} MiB", flush=True)

            print(f"  ({mib:.0f} MiB of JSONL)")
            for jobs in args.local_jobs:
                out = os.path.join(tmp, "out.jsonl")
                report(f"local jobs={jobs}", *run_check(path, out, "--jobs", str(jobs)), out)
            for workers in args.workers:
                with local_cluster(workers) as cluster, Client(cluster) as client:
                    address = client.scheduler.address
                    run_check(warm, os.devnull, "--engine", "dask", "--scheduler", address)
                    out = os.path.join(tmp, "out.jsonl")
                    report(f"dask workers={workers}", *run_check(path, out, "--engine", "dask", "--scheduler", address),
                           out)
            same = len(set(digests.values())) == 1
            print(f"  outputs identical across engines: {'yes' if same else 'NO: ' + json.dumps(digests)}")
            if "dask workers=1" in rates and "dask workers=2" in rates:
                ratio = rates["dask workers=2"] / rates["dask workers=1"]
                print(f"  dask scaling, 2 workers / 1: {ratio:.2f}x;  per-core rate (1 worker): "
                      f"{rates['dask workers=1']:.1f} episodes/s")
            if not same:
                raise SystemExit(1)


if __name__ == "__main__":
    main()
