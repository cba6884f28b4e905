"""Cold start: wall and CPU time of one `litmus-rules check one.yaml`, against plain Python.

    python bench/cold_start.py [--runs 10] [--baseline REV] [EPISODE]

Each run is a fresh process, as a user's shell starts it: `python -m litmus_rules check EPISODE`
(default: examples/clean-structured.yaml; output to the runner's /dev/null). Measured in the same
run, alternating with it so that load on the machine falls on every variant alike:

- `python -c pass`: the interpreter's own start, which no command can go under;
- plain Python: start, import PyYAML, read the episode with its safe loader (the C one, as `check`
  reads YAML) and print one line: the least a checker that reads YAML does;
- `--baseline REV`: the same command from a commit checked out with `git worktree add`.

A warm-up run first writes the bytecode (into a temporary PYTHONPYCACHEPREFIX) and the rule cache,
as an installed package has them. Prints min and median wall and CPU (user + system) per variant and
the ratios of the medians. Target (issue 13): `check one.yaml` in at most 0.3 s of wall time on an
idle machine. Wall time counts whatever else the machine runs: read it with the CPU column and the
interpreter's own figure beside it.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from e2e import environment  # noqa: E402

TARGET_WALL = 0.3

PLAIN = ("import sys, yaml\n"
         "with open(sys.argv[1], encoding='utf-8') as fh:\n"
         "    doc = yaml.load(fh, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))\n"
         "print(doc.get('id'), 'read')\n")


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run, in a neutral folder (see e2e.cpu_of)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=env["LITMUS_RULES_CACHE_DIR"])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: the episode was REJECTED, a verdict like any other
        raise SystemExit(f"{' '.join(cmd)} failed with exit {done.returncode}: {done.stderr[-500:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("episode", nargs="?", default=str(ROOT / "examples" / "clean-structured.yaml"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", default="", help="a commit to compare with (default: none)")
    args = parser.parse_args()
    episode = str(Path(args.episode).resolve())
    check = [sys.executable, "-m", "litmus_rules", "check", episode]

    with tempfile.TemporaryDirectory(prefix="litmus-cold-") as tmp:
        scratch = Path(tmp)
        variants = [
            ("python -c pass", environment(str(ROOT), scratch, "bare"), [sys.executable, "-c", "pass"]),
            ("plain Python (yaml)", environment(str(ROOT), scratch, "plain"), [sys.executable, "-c", PLAIN, episode]),
            ("check (this)", environment(str(ROOT), scratch, "this"), check),
        ]
        baseline_tree = None
        if args.baseline:
            baseline_tree = scratch / "baseline"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(baseline_tree),
                            args.baseline], check=True)
            variants.append((f"check ({args.baseline})", environment(str(baseline_tree), scratch, "baseline"), check))
        try:
            for _, env, cmd in variants:
                timed(cmd, env)  # warm-up: bytecode and the rule cache
            figures: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in variants}
            for _ in range(args.runs):
                for name, env, cmd in variants:  # alternating: load falls on every variant alike
                    figures[name].append(timed(cmd, env))
        finally:
            if baseline_tree is not None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline_tree)],
                               check=False)
                shutil.rmtree(baseline_tree, ignore_errors=True)

    print(f"one fresh process per run, {args.runs} runs each, alternating; {Path(episode).name}")
    print(f"{'variant':24} {'wall min':>9} {'wall median':>12} {'CPU min':>9} {'CPU median':>11}")
    medians = {}
    for name, runs in figures.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        medians[name] = (statistics.median(walls), statistics.median(cpus))
        print(f"{name:24} {min(walls):>8.3f}s {medians[name][0]:>11.3f}s {min(cpus):>8.3f}s {medians[name][1]:>10.3f}s")
    this = medians["check (this)"]
    for name in medians:
        if name != "check (this)":
            print(f"check / {name}: wall {this[0] / medians[name][0]:.2f}x, CPU {this[1] / medians[name][1]:.2f}x")
    verdict = "met" if this[0] <= TARGET_WALL else "not met"
    print(f"target: median wall <= {TARGET_WALL} s on an idle machine: {this[0]:.3f} s, {verdict}")


if __name__ == "__main__":
    main()
