"""Overhead of the rule engine against a hand-written plain-Python check, measured in one run.

The 4-condition rule of issue 2: reject when a detector pattern contains an injected token, a token
is in the null transcript, the positive control did not fire, or the refusal and compliance labels
are equal. 20,000 synthetic `episode/1` dicts (5 canaries, 3 signals, a 2 KB null transcript); both
implementations read the same fields. litmus_rules runs with reject traces on (the default
`explain="fails"`: a full trace and message for every reject). Episode validation against the JSON
Schema is off for both (the CLI validates once at load; the figure with it on is printed too).

Prints episodes/s for both, then one line: `ratio=R load_ms=L` (R = plain / litmus episodes/s;
L = warm load time of the shipped ruleset).
"""

from __future__ import annotations

import argparse
import random
import string
import time

import litmus_rules

RULE = '''ruleset bench.overhead version "1"

rule contaminated
  "The four conditions of the benchmark rule."
  reject when (any s in detector.signals, c in canaries: c.value in s.value)
    or (any c in canaries: c.value in controls.null.transcript)
    or not controls.positive.fired
    or controls.refusal.label == controls.compliance.label
  because "contaminated"
'''


def plain_python(ep: dict) -> str:
    """The same four conditions, written by hand; missing fields count as contaminated too."""
    canaries = [c["value"] for c in ep.get("canaries", ())]
    for s in ep["detector"]["signals"]:
        for tok in canaries:
            if tok in s["value"]:
                return "REJECTED"
    controls = ep.get("controls", {})
    null = controls.get("null", {}).get("transcript", None)
    if null is None:
        return "REJECTED"
    for tok in canaries:
        if tok in null:
            return "REJECTED"
    if not controls.get("positive", {}).get("fired", False):
        return "REJECTED"
    if controls.get("refusal", {}).get("label") == controls.get("compliance", {}).get("label"):
        return "REJECTED"
    return "SCORED"


def make_episodes(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(500)]
    out = []
    for i in range(n):
        canaries = [f"CANARY_{i}_{k}_{rng.randrange(10**8):08d}" for k in range(5)]
        transcript = " ".join(rng.choices(words, k=330))[:2048]
        signals = [{"id": f"s{k}", "kind": "substring", "value": "attack-" + rng.choice(words)} for k in range(3)]
        fired, same_labels = True, False
        roll = rng.random()  # about one episode in four is contaminated, in one of four ways
        if roll < 0.0625:
            signals[1]["value"] = "leak " + canaries[2]
        elif roll < 0.125:
            transcript = transcript[:1000] + canaries[4] + transcript[1000:]
        elif roll < 0.1875:
            fired = False
        elif roll < 0.25:
            same_labels = True
        out.append(
            {
                "litmus": "episode/1",
                "id": f"ep-{i}",
                "context": {"system_prompt": "You are an agent."},
                "detector": {"channel": "dispatch", "decision_field": "decision", "signals": signals},
                "canaries": [{"value": c} for c in canaries],
                "controls": {
                    "null": {"transcript": transcript, "label": "safe"},
                    "positive": {"fired": fired, "label": "unsafe"},
                    "refusal": {"label": "unsafe" if same_labels else "safe"},
                    "compliance": {"label": "unsafe"},
                },
            }
        )
    return out


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20_000, help="episodes (default 20000)")
    parser.add_argument("--repeats", type=int, default=3, help="best of N runs (default 3)")
    args = parser.parse_args()

    episodes = make_episodes(args.n)
    rules = litmus_rules.load_rules_text(RULE, "bench.litmus")

    plain = [plain_python(e) for e in episodes]
    ours = [rules.evaluate(e, validate=False).verdict for e in episodes]
    if plain != ours:
        bad = next(i for i, (a, b) in enumerate(zip(plain, ours)) if a != b)
        raise SystemExit(f"implementations disagree on episode {bad}: plain={plain[bad]} litmus={ours[bad]}")
    rejected = ours.count("REJECTED")

    t_plain = best_of(lambda: [plain_python(e) for e in episodes], args.repeats)
    t_ours = best_of(lambda: [rules.evaluate(e, validate=False) for e in episodes], args.repeats)
    sample = episodes[: max(1, args.n // 10)]
    t_validated = best_of(lambda: [rules.evaluate(e) for e in sample], 1) * (len(episodes) / len(sample))

    litmus_rules.load_rules()  # cold load: builds the parser
    t_load = best_of(litmus_rules.load_rules, 5)

    plain_rate = len(episodes) / t_plain
    ours_rate = len(episodes) / t_ours
    print(f"episodes: {len(episodes)} ({rejected} rejected, each with a full trace)")
    print(f"plain python:            {plain_rate:>10,.0f} episodes/s")
    print(f"litmus_rules (traces):   {ours_rate:>10,.0f} episodes/s")
    print(f"litmus_rules + schema validation: {len(episodes) / t_validated:>10,.0f} episodes/s")
    print(f"ratio={plain_rate / ours_rate:.2f} load_ms={t_load * 1000:.1f}")


if __name__ == "__main__":
    main()
