"""Coverage-guided fuzzing of the rule parser and the episode loader with atheris (not run in CI).

    pip install atheris            # or: pip install -e '.[fuzz]'
    python bench/fuzz.py parser --seconds 60
    python bench/fuzz.py loader --seconds 60 [-- extra libFuzzer flags, e.g. -dict=... corpus_dir]

`parser`: any text through `parse` and the checker (`load_rules_text`); `loader`: any bytes as an
episode stream on stdin (`read_episodes(["-"])`: JSONL, JSON or YAML sniffed), each document
evaluated by the shipped rules. Only `LitmusError` may come out; anything else is a finding, and
libFuzzer stops with the input that caused it. Prints the number of inputs run and their rate.
"""

from __future__ import annotations

import argparse
import atexit
import io
import sys
import tempfile
import time
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import litmus_rules
    from litmus_rules import LitmusError, load_rules_text
    from litmus_rules.lang.syntax import parse

RUNS = [0]
_RULES: list[litmus_rules.RuleSet] = []


def _text(data: bytes) -> str | None:
    try:  # rule files are read as UTF-8: the seeds stay rule text, and mutations stay close to it
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def fuzz_parser(data: bytes) -> None:
    RUNS[0] += 1
    text = _text(data)
    if text is None:
        return
    try:
        parse(text, "fuzz.litmus")
        load_rules_text(text, "fuzz.litmus")
    except LitmusError:
        pass


def fuzz_loader(data: bytes) -> None:
    RUNS[0] += 1
    if not _RULES:
        _RULES.append(litmus_rules.load_rules())
    try:  # the CLI decodes its input strictly; undecodable bytes are an input ERROR before this point
        stream = io.StringIO(data.decode("utf-8"))
    except UnicodeDecodeError:
        return
    for loaded in litmus_rules.read_episodes(["-"], stdin=stream):
        if loaded.data is not None:
            verdict = _RULES[0].evaluate(loaded.data, validate=False)
            verdict.to_json()


def _seed_corpus(target: str) -> str:
    """The shipped rule files (parser) or the example episodes (loader): a start that already parses."""
    root = Path(__file__).resolve().parent.parent
    corpus = Path(tempfile.mkdtemp(prefix=f"litmus-fuzz-{target}-"))
    if target == "parser":
        seeds = sorted((root / "rules").glob("*.litmus")) + sorted((root / "rules").glob("**/*.litmus"))
    else:
        seeds = [p for p in sorted((root / "examples").rglob("*")) if p.suffix in (".yaml", ".yml", ".json", ".jsonl")]
    for i, seed in enumerate(seeds[:50]):
        (corpus / f"seed{i}").write_bytes(seed.read_bytes()[:100_000])
    return str(corpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=["parser", "loader"])
    parser.add_argument("--seconds", type=int, default=60, help="fixed time budget (libFuzzer -max_total_time)")
    parser.add_argument("--runs", type=int, default=0, help="fixed number of inputs instead (libFuzzer -runs)")
    args, rest = parser.parse_known_args()
    budget = [f"-runs={args.runs}"] if args.runs else [f"-max_total_time={args.seconds}"]
    target = fuzz_parser if args.target == "parser" else fuzz_loader
    extra = [a for a in rest if a != "--"]
    if not any(not a.startswith("-") for a in extra):  # no corpus given: seed one from the project
        extra.append(_seed_corpus(args.target))
    atheris.Setup([sys.argv[0], *budget, "-rss_limit_mb=2048", *extra], target)
    start = time.perf_counter()

    def report() -> None:  # libFuzzer ends the process itself at the end of its budget
        elapsed = time.perf_counter() - start
        print(f"{args.target}: {RUNS[0]} inputs in {elapsed:.1f} s ({RUNS[0] / max(elapsed, 1e-9):,.0f}/s)", flush=True)

    atexit.register(report)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
