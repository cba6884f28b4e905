"""Validation and JSON decoding per episode, old way against new, in one run (issue 13, items 2-3).

For the small episodes (the examples, as JSON) and the realistic ones of `bench/realistic.py`:
- schema validation, µs per episode: jsonschema alone (the path before) against the loader's path
  now (`episode_schema.schema_problem` with the compiled validator); and the one-time compile cost;
- JSON decoding, ms per episode: a plain `json.loads` against the loader's `jsontext.decode` (with
  the duplicate-key check) and the stdlib hook path (`jsontext._exact`, the path before).
Each figure is the best of `--repeat` rounds of CPU time; ratios are within this run.

    python bench/validation.py [--realistic 40] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realistic  # noqa: E402

from litmus_rules.io import episode_schema, jsontext, wire  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def small_episodes() -> list[dict[str, Any]]:
    out = []
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and "litmus" in doc:
                out.append(json.loads(json.dumps(doc)))  # JSON-shaped, as a decoder makes it
    return out


def best(fn: Callable[[Any], Any], items: list[Any], repeat: int) -> float:
    """Best CPU seconds per item over `repeat` rounds."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for item in items:
            fn(item)
        times.append((time.process_time() - start) / len(items))
    return min(times)


def jsonschema_only(doc: dict[str, Any]) -> Any:
    return episode_schema.schema_problem(doc, json_typed=False)


def compiled(doc: dict[str, Any]) -> Any:
    return episode_schema.schema_problem(doc, json_typed=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realistic", type=int, default=40, help="realistic episodes (default 40)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best is kept (default 5)")
    args = parser.parse_args()

    start = time.process_time()
    for version in (wire.VERSION_1, wire.VERSION_1_1):
        episode_schema._compiled(version)
    print(f"compile both schemas once per process: {(time.process_time() - start) * 1e3:.0f} ms CPU")
    print(f"fast JSON path (jiter) installed: {jsontext._accelerator() is not None}")
    print()
    sets = {"small": small_episodes(), "realistic": realistic.episodes(args.realistic)}
    print(f"{'episodes':10} {'n':>4} {'jsonschema µs':>14} {'compiled µs':>12} {'ratio':>6}   "
          f"{'json.loads ms':>13} {'checked ms':>10} {'over':>6}   {'hook path ms':>12} {'over':>6}")
    for name, docs in sets.items():
        assert all(compiled(d) is None and jsonschema_only(d) is None for d in docs), name
        old = best(jsonschema_only, docs, args.repeat)
        new = best(compiled, docs, args.repeat)
        texts = [json.dumps(d) for d in docs]
        plain = best(json.loads, texts, args.repeat)
        checked = best(lambda t: jsontext.decode(t, 0, 200), texts, args.repeat)
        hook = best(lambda t: jsontext._exact(t, 0, 200), texts, args.repeat)
        print(f"{name:10} {len(docs):>4} {old * 1e6:>14.0f} {new * 1e6:>12.0f} {old / new:>5.1f}x   "
              f"{plain * 1e3:>13.3f} {checked * 1e3:>10.3f} {checked / plain - 1:>+6.0%}   "
              f"{hook * 1e3:>12.3f} {hook / plain - 1:>+6.0%}")


if __name__ == "__main__":
    main()
