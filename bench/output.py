"""The cost of the verdict JSON: building it (`Verdict.to_json`) and writing it (`render.json`).

For (a) the shipped examples, re-id'd into many episodes, and (b) the realistic episodes of
bench/realistic.py, prints per episode: ms to build the verdict dicts; ms to write them as JSONL
lines with `render.json.json_line` (orjson when importable, with the repairs); ms with the standard
library path of `render.json` (its fallback without orjson); ms with a plain
`json.dumps(ensure_ascii=False)` of the same dicts (the baseline, measured in the same run); and the
bytes of verdict JSON. Evaluation is not timed: each repetition evaluates fresh verdicts first (a
trace caches what it built), then times only the output. CPU time, min over the repetitions.

Runs against an older checkout too (`PYTHONPATH=<checkout> python bench/output.py`), for the figures
before a change; the columns that checkout lacks print as "-".

    python bench/output.py [--examples N] [--realistic N] [--repeats R] [--explain fails|full]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import realistic  # noqa: E402

import litmus_rules  # noqa: E402
from litmus_rules.io.load import iter_episodes  # noqa: E402
from litmus_rules.render import json as render_json  # noqa: E402


def example_episodes(n: int) -> list[dict[str, Any]]:
    """`n` episodes cycled from examples/ (every document that loads), each with a new id and
    canary values of its own, so that none is a batch mate of another."""
    base = [e.data for e in iter_episodes([str(HERE.parent / "examples")]) if e.data is not None]
    out = []
    for i in range(n):
        episode = copy.deepcopy(base[i % len(base)])
        episode["id"] = f"{episode.get('id', 'ex')}-{i:05d}"
        for canary in episode.get("canaries") or ():
            if isinstance(canary, dict) and isinstance(canary.get("value"), str):
                canary["value"] += f"-{i:05d}"
        out.append(episode)
    return out


def measure(rules: Any, episodes: list[dict[str, Any]], repeats: int, explain: str) -> dict[str, float]:
    timings: dict[str, list[float]] = {"build": [], "write": [], "stdlib": [], "json.dumps": []}
    stdlib = getattr(render_json, "stdlib_dumps", None)
    size = 0

    def timed(key: str, fn: Callable[[], Any]) -> Any:
        start = time.process_time()
        out = fn()
        timings[key].append(time.process_time() - start)
        return out

    for _ in range(repeats):
        verdicts = [rules.evaluate(e, explain=explain) for e in episodes]
        dicts = timed("build", lambda: [v.to_json() for v in verdicts])
        lines = timed("write", lambda: [render_json.json_line(d) for d in dicts])
        if stdlib is not None:
            timed("stdlib", lambda: [stdlib(d) + "\n" for d in dicts])
        timed("json.dumps", lambda: [json.dumps(d, ensure_ascii=False) + "\n" for d in dicts])
        size = sum(len(line.encode("utf-8")) for line in lines)
    n = len(episodes)
    out = {key: min(ts) * 1000 / n if ts else float("nan") for key, ts in timings.items()}
    out["bytes"] = size / n
    out["scored"] = sum(v.verdict == "SCORED" for v in verdicts) / n
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--realistic", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--explain", choices=("fails", "full"), default="fails")
    args = parser.parse_args()
    rules = litmus_rules.load_rules()
    orjson = getattr(render_json, "orjson_available", lambda: False)()
    print(f"orjson: {'yes' if orjson else 'no'}; explain={args.explain}; "
          f"CPU ms per episode, min of {args.repeats}")
    print(f"{'input':<12} {'episodes':>8} {'SCORED':>7} {'build':>8} {'write':>8} {'stdlib':>8} "
          f"{'json.dumps':>10} {'build+write':>11} {'bytes':>8}")
    for name, episodes in (("examples", example_episodes(args.examples)),
                           ("realistic", realistic.episodes(args.realistic))):
        m = measure(rules, episodes, args.repeats, args.explain)
        stdlib = "-" if m["stdlib"] != m["stdlib"] else f"{m['stdlib']:.3f}"
        print(f"{name:<12} {len(episodes):>8} {m['scored']:>7.0%} {m['build']:>8.3f} {m['write']:>8.3f} "
              f"{stdlib:>8} {m['json.dumps']:>10.3f} {m['build'] + m['write']:>11.3f} {m['bytes']:>8.0f}")


if __name__ == "__main__":
    main()
