"""Differential fuzzing of the joined search (domain/joined.py) against text by text (not run in CI).

    python bench/joined_differential.py --seconds 300 [--seed 1]

The joined search must answer as testing each text in turn does: the same first leak and first
collision (substring and regex signals), or the same limit met. The unit tests hold this on short
generated texts; this script draws lists of texts at the limits, where a join can differ from its
texts: NFKC growth around transforms.NFKC_MAX_ADDED (U+FDFA runs of 3,000-5,000 among 30 KB
fillers: session 22 found a short text past its own limit inside a join within the join's limit,
searched as if known), HTML and percent escapes nested around their layer limits, JSON escapes
nested, random stacks of encodings (which can grow to tens of MB; session 23: hex and the grouped
encodings too), large non-ASCII fillers around textmemo.MEMO_MIN, and plain, path, fullwidth,
upper-case and grouped-looking decoys; a list holds 2 to 30 texts. Each case is run with every
memo cleared, both ways inside one regex budget scope (as an evaluation has), and a difference is
printed with the texts pickled to /tmp. Two outcomes that both run out of a regex's budget count as
one: the message counts the searches made, and the joined search makes fewer.
"""

from __future__ import annotations

import argparse
import base64
import pickle
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _helpers import first_one_by_one, forget_searches, search_outcome  # noqa: E402

from litmus_rules.domain.matching import collides, first_collision, first_leak, leaks  # noqa: E402
from litmus_rules.domain.regexes import regex_budget  # noqa: E402

TOKEN = "lc-5f0e9a1d7c3b"


def _html_layers(text: str, layers: int) -> str:
    for _ in range(layers):
        text = text.replace("&", "&amp;")
    return text


def _percent_layers(text: str, layers: int) -> str:
    text = "".join("%%%02x" % ord(c) for c in text)
    for _ in range(layers - 1):
        text = text.replace("%", "%25")
    return text


def _json_layers(text: str, layers: int) -> str:
    text = "".join("\\u%04x" % ord(c) for c in text)
    for _ in range(layers - 1):
        text = text.replace("\\", "\\\\")
    return text


def _stacked(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 9)):
        kind = rng.choice(["html", "percent", "json", "base64", "hex", "groups"])
        if kind == "html":
            text = text.replace("&", "&amp;") if "&" in text else "".join("&#%d;" % ord(c) for c in text)
        elif kind == "percent":
            text = "".join("%%%02x" % ord(c) for c in text) if rng.random() < 0.5 else text.replace("%", "%25")
        elif kind == "json":
            text = "".join("\\u%04x" % ord(c) for c in text)
        elif kind == "base64":
            text = base64.b64encode(text.encode()).decode()
        elif kind == "hex":
            text = text.encode().hex()
        else:
            text = _grouped(text, rng)
    return text


def _grouped(text: str, rng: random.Random) -> str:
    """`text` in one of the encodings grouped.py reads: base64 or hex in groups, decimal codes,
    spelt out a character at a time."""
    data = text.encode()
    kind = rng.choice(["base64", "hex", "decimal", "spaced"])
    if kind == "base64":
        encoded = base64.b64encode(data).decode()
        return " ".join(encoded[k:k + 4] for k in range(0, len(encoded), 4))
    if kind == "hex":
        return rng.choice([":", " ", "-"]).join(f"{b:02x}" for b in data)
    if kind == "decimal":
        return ", ".join(map(str, data))
    return " ".join(text)


def text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return "\ufdfa" * rng.choice([3000, 3855, 3856, 3900, 4000, 5000]) + rng.choice(["", " " + TOKEN])
    if roll < 0.3:
        return "x " + _html_layers("&#108;&#99;-5f0e9a1d7c3b", rng.choice([6, 7, 8, 9])) + " y"
    if roll < 0.45:
        return "x " + _percent_layers(TOKEN, rng.choice([14, 15, 16, 17])) + " y"
    if roll < 0.55:
        return "x " + _json_layers(TOKEN, rng.choice([1, 2, 3, 4])) + " y"
    if roll < 0.7:
        return "x " + _stacked(TOKEN, rng) + " y"
    if roll < 0.75:
        return rng.choice(["arg ", "", "1000 "]) + _grouped(rng.choice([TOKEN, TOKEN[:6], "hello world"]), rng)
    if roll < 0.85:
        return "é" * rng.choice([10, 3000, 20000, 30000, 33000]) + rng.choice(["", "a", " " + TOKEN])
    return rng.choice(["plain", "C:\\dir\\x", "a/../b", "1000 say", "&amp;", "%41", "\\u0041", TOKEN.upper(),
                       "arg 1000 aGVsbG8gd29ybGQ0 y", "6c:63:2d", "QUFf MDAw",
                       "ｌｃ－５ｆ０ｅ９ａ１ｄ７ｃ３ｂ"])


def _both(one: Callable[[str], Any], many: Callable[[list[str]], Any], texts: list[str]) -> tuple[Any, Any]:
    forget_searches()
    with regex_budget():
        expected = search_outcome(lambda: first_one_by_one(one, texts))
    forget_searches()
    with regex_budget():
        got = search_outcome(lambda: many(texts))
    budget = all(isinstance(x, tuple) and x[:2] == ("raises", "RegexUnknown") for x in (expected, got))
    return expected, expected if budget else got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    substring = {"id": "s", "kind": "substring", "value": TOKEN}
    regex = {"id": "r", "kind": "regex", "value": r"lc-[0-9a-f]{12}"}
    checks: list[tuple[str, Callable[[str], Any], Callable[[list[str]], Any]]] = [
        ("leak", lambda t: leaks(TOKEN, t), lambda ts: first_leak(TOKEN, ts)),
        ("substring", lambda t: collides(substring, t), lambda ts: first_collision(substring, ts)),
        ("regex", lambda t: collides(regex, t), lambda ts: first_collision(regex, ts)),
    ]
    began, cases, differences = time.monotonic(), 0, 0
    while time.monotonic() - began < args.seconds:
        # (lists of 8 texts or more: the decoders decode many texts at once, encoded_spans.py)
        texts = [text(rng) for _ in range(rng.randint(2, 9) if rng.random() < 0.7 else rng.randint(10, 30))]
        for name, one, many in checks:
            expected, got = _both(one, many, texts)
            if expected != got:
                differences += 1
                where = Path(f"/tmp/joined_differential_{args.seed}_{differences}.pkl")
                where.write_bytes(pickle.dumps(texts))
                print(f"DIFFERENT ({name}): text by text {str(expected)[:300]}\n  joined {str(got)[:300]}\n"
                      f"  texts {[(len(t), t[:40]) for t in texts]} -> {where}", flush=True)
        cases += 1
    print(f"seed {args.seed}: {cases} lists of texts, {differences} differences")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
