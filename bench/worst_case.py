"""The worst single episodes: milliseconds per episode with the shipped rules, beside a plain floor.

Each row is one episode built from `realistic.episode` (deterministic, seeded) with one thing made
large: a 1 MB tool description in non-ASCII text (mixed scripts, confusables, format characters,
combining marks), in path-like text and in base64 (MIME-wrapped, decoding to words); the same
path-like and base64 texts as the null-control transcript (and the non-ASCII one); 100 canaries;
100 text signals; a 400-tool manifest (the one of bench/check_e2e.py); 1 M Arabic ligatures (U+FDFA,
18 characters each under NFKC: past transforms.NFKC_MAX_ADDED, so the text's NFKC form is unknown
and the episode rejects); a 2 KB input schema whose `$ref`s multiply (2^30 argument paths: the walk
stops at MAX_SURFACES and the episode rejects); a 1 MB description of distinct runs of escapes
(`\\x41\\65\\u{41}&#65;%41`, each different: every decoded form a path-dense text of ~60,000
runs, non-ASCII once HTML-decoded); a 1 MB description that is one run (no token boundary) of
`C:/C:/...` ending in `./`: 333,000 path tokens in a run that may change; the same of `é:/é:/...`
(non-ASCII: its tokens are found on an ASCII stand-in); 1 MB of percent escapes of random bytes
and of `\\uXXXX` escapes of random code points (decoded to a fixed point, every form of the
decoded text searched); 5,000 skills of 20 common words each (10,000 short texts, half of them
sharing a word with a regex signal's literal, 2,500 injected names to look for in the null
transcript); half a million code points drawn at random from the first three planes (every page
of them: a regex is rewritten for ~700 pages, and NFKC works on every character); a substring
signal and canary of 40 KB of punctuation (40,000 windows of a partial match to look for, and
long encoded forms of the token that hold none of them); 2,500 schema descriptions of 40
characters, each with escapes and a path that changes (texts that are not plain are searched
one by one, every form of each derived on its own); 1 MB of short runs of every grouped encoding
and other-language escape (`grouped_runs`: each run decoded on its own); 1 MB of words split by
markup (`markup_runs`: tags, Markdown markers and hyphen line wraps inside words); 1 MB of base64
of gzip streams that each inflate a thousand-fold (`gzip_runs`); 1 MB of random printable ASCII
(`printable_text`: every decoder and the URL pattern find something in it, ~45 forms of 1 MB), and
the same as 1,000 tool descriptions of 1 KB (each text's ~45 forms derived on its own); a letter
followed by 500,000 combining marks of two classes alternating (1 MB of UTF-8: `unicodedata`
puts such a run in canonical order in quadratic time, `domain/canonical_order.py` in linear); 1 MB
drawn at random from a backslash, "=", '"', "é", "ﬁ" and "ǅ" (`mixture_text`: ~30 forms of 1 MB
of dense non-ASCII paths, each through NFKC, the skeleton and path canonicalisation; not met);
20,000 schema properties with a path in each, with a Windows path in each (texts that path
canonicalisation and the JSON decoder change, joined: session 21), and with "é" in each but one,
which holds 4,000 U+FDFA: past its own NFKC limit, though the join of them all is within its own
(session 22: rejected, its NFKC forms unknown); and 20,000 with a base64-looking token each, 9,000
of which ("arg 1000 aGVs...") also read as base64 groups (session 23: their runs decoded together).
Printed per row, each the
min of --repeats runs, each run on a fresh copy of the episode with new canaries, signal values and
texts (the built-ins cache the forms of texts they have seen: a run never reuses them):

- `check cpu`: the whole `check` of the episode as `litmus-rules check FILE --format jsonl --jobs 1`
  does it, in this process (CPU time: on a loaded machine the steadier figure): the episode is a
  one-line JSONL file, read by `engine.batch.check_inputs` (both passes: shared canaries, then
  read, validate, evaluate, build the verdict JSON) and each verdict written by
  `render.json.json_line`; only the process start and `load_rules` (once) are left out;
- `rules` (wall) and `cpu`: `RuleSet.evaluate(episode)` alone (validation included);
- `floor`: plain Python on the same episode in the same run: `json.dumps` of it, lower-cased, and
  `str.find` of every canary, text signal value and tool name in both (what any checker has to
  read at least);
- the ratio (wall to wall), and the verdict with the rejecting rules (so a run shows that the episode was decided).

The targets (issue 13), on `check cpu`: every row under 1 s; the base64 and path-like rows under 0.3 s.
Run it on another checkout with `PYTHONPATH=/that/checkout python bench/worst_case.py`.
"""

from __future__ import annotations

import argparse
import base64
import gc
import gzip
import json
import os
import random
import string
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import realistic  # noqa: E402

SIZE = 1_000_000  # characters of each large text

# Non-ASCII words: Cyrillic, Greek, accented Latin (precomposed and combining), CJK, fullwidth and
# mathematical letters, emoji; joined by spaces, with zero-width characters, soft hyphens, bidi
# controls and variation selectors between some of them.
_SCRIPTS = (
    "абвгдежзийклмнопрстуфхцчшщыэюя",
    "αβγδεζηθικλμνξοπρστυφχψω",
    "àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ",
    "的一是不了人我在有他这为之大来以个中上们",
    "ＡＢＣＤＥＦａｂｃｄｅｆ０１２３",
    "𝐚𝐛𝐜𝐝𝐞𝐀𝐁𝐂𝐃𝐄",
    "😀🚀🔥✨🎉",
)
_FORMAT = ("\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\u202e", "\u202c", "\ufe0f", "\u034f")
_COMBINING = ("\u0301", "\u0308", "\u0327", "\u0323")


def nonascii_text(rng: random.Random, size: int = SIZE) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        alphabet = rng.choice(_SCRIPTS)
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 9)))
        roll = rng.random()
        if roll < 0.15:
            i = rng.randrange(len(word) + 1)
            word = word[:i] + rng.choice(_FORMAT) + word[i:]
        elif roll < 0.25:
            word += rng.choice(_COMBINING)
        elif roll < 0.35:  # a Latin word with Cyrillic / Greek look-alikes
            word = "".join(rng.choice(("a", "а", "o", "о", "ο", "e", "е", "p", "р", "c", "с"))
                           for _ in range(rng.randint(3, 8)))
        out.append(word)
        n += len(word) + 1
    return " ".join(out)[:size]


def path_text(rng: random.Random, size: int = SIZE) -> str:
    """Prose full of paths, many of which canonicalisation changes (../, ./, //, \\, file:)."""
    out: list[str] = []
    n = 0
    segs = ("usr", "lib", "etc", "home", "var", "log", "src", "app", "data", "tmp", "config")
    while n < size:
        parts = [rng.choice(segs) + (str(rng.randrange(100)) if rng.random() < 0.3 else "")
                 for _ in range(rng.randint(2, 6))]
        roll = rng.random()
        if roll < 0.2:
            p = "/" + "/../".join(parts)
        elif roll < 0.4:
            p = "./" + "//".join(parts) + "/"
        elif roll < 0.55:
            p = "C:\\" + "\\".join(parts)
        elif roll < 0.65:
            p = "file:///" + "/./".join(parts)
        elif roll < 0.8:
            p = "https://example.com/" + "/".join(parts) + "?q=1"
        else:
            p = "/".join(parts) + ".py"
        word = p if rng.random() < 0.7 else realistic._words(rng, 1)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)[:size]


def base64_text(rng: random.Random, size: int = SIZE) -> str:
    """MIME-wrapped base64 (76 columns) of plain words: every line decodes."""
    raw = realistic._words(rng, size // 6 * 3 // 4).encode()
    encoded = base64.b64encode(raw).decode()[: size * 76 // 77]
    return "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))


_TEXT_KEYS = frozenset({"description", "content", "transcript", "system_prompt"})


def _renew(value: Any, mark: str) -> Any:
    if isinstance(value, dict):
        return {k: (mark + v if k in _TEXT_KEYS and isinstance(v, str) else _renew(v, mark))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_renew(v, mark) for v in value]
    return value


def _fresh(ep: dict[str, Any], run: int) -> dict[str, Any]:
    """A copy with new canaries, signal values and texts (every description, content and
    transcript starts with a run mark): nothing a previous run cached answers it."""
    ep = _renew(ep, f"[r{run}] ")
    for skill in ep["context"].get("skills") or []:  # (a name's search forms are remembered too)
        skill["name"] = f"{skill['name']}_r{run}"
    for c in ep["canaries"]:
        c["value"] = f"{c['value']}-r{run}"
    for s in ep["detector"]["signals"]:
        if s["kind"] == "substring":
            s["value"] = f"{s['value']}-r{run}"
        elif s["kind"] == "regex":
            s["value"] = f"{s['value']}(?:r{run})?"
    return ep


def _base(seed: int, **kw: Any) -> dict[str, Any]:
    return realistic.episode(seed, random.Random(seed), **kw)


def _described(seed: int, description: str) -> dict[str, Any]:
    """A realistic episode whose first tool has this description."""
    ep = _base(seed)
    ep["context"]["tools"][0]["description"] = description
    return ep


def _joined_until(size: int, separator: str, part: Any) -> str:
    """`part()` called until the parts, joined by `separator`, hold `size` characters or more."""
    parts: list[str] = []
    length = 0
    while length < size:
        parts.append(part())
        length += len(parts[-1]) + len(separator)
    return separator.join(parts)


def episodes() -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(13)
    rows = []
    rows.append(("1 MB non-ASCII tool description", _described(1, nonascii_text(rng))))
    rows.append(("1 MB path-like tool description", _described(2, path_text(rng))))
    rows.append(("1 MB base64 tool description", _described(3, base64_text(rng))))
    ep = _base(4)
    ep["controls"]["null"]["transcript"] = path_text(rng)
    rows.append(("1 MB path-like null transcript", ep))
    ep = _base(5)
    ep["controls"]["null"]["transcript"] = base64_text(rng)
    rows.append(("1 MB base64 null transcript", ep))
    ep = _base(6)
    ep["controls"]["null"]["transcript"] = nonascii_text(rng)
    rows.append(("1 MB non-ASCII null transcript", ep))
    ep = _base(7)
    ep["canaries"] = [{"value": f"lc-{k:03d}-{rng.randrange(16**12):012x}"} for k in range(100)]
    rows.append(("100 canaries", ep))
    ep = _base(8)
    signals = ep["detector"]["signals"]
    for k in range(100 - len(signals)):
        if k % 2:
            signals.append({"id": f"x{k}", "kind": "substring", "value": f"marker_{k}_{rng.randrange(10**6):06d}"})
        else:
            signals.append({"id": f"x{k}", "kind": "regex", "value": rf"\bok_{k}_[0-9]{{4}}\b",
                            **({"flags": ["ignorecase"]} if k % 4 == 0 else {})})
    rows.append(("100 signals", ep))
    ep = _base(9, n_tools=400, description_words=200)
    rows.append(("400 tools (~1 MB manifest)", ep))
    rows.append(("1 M ligatures (U+FDFA) description", _described(10, "\ufdfa" * SIZE)))
    ep = _base(11)
    ep["context"]["tools"][0]["input_schema"] = multiplying_schema(30)
    rows.append(("multiplying $refs (2^30 paths)", ep))
    rows.append(("1 MB distinct escape runs", _described(12, escape_runs())))
    rows.append(("1 MB one run of 333k path tokens", _described(13, "C:/" * (SIZE // 3) + "./")))
    rows.append(("1 MB one non-ASCII run of tokens", _described(14, "é:/" * (SIZE // 3) + "é/./x")))
    percents = "".join(f"%{rng.randrange(256):02X}" for _ in range(SIZE // 3))
    rows.append(("1 MB of %XX escapes (random bytes)", _described(15, percents)))
    escapes = "".join(f"\\u{rng.randrange(0x20, 0xFFFF):04x}" for _ in range(SIZE // 6))
    rows.append(("1 MB of \\uXXXX escapes (random)", _described(16, escapes)))
    ep = _base(17)
    words = ("alpha", "beta", "gamma", "delta", "invoice", "transfer", "account", "secret", "token")
    ep["context"]["skills"] = [{"name": f"skill_{i}", "description": " ".join(rng.choice(words) for _ in range(20)),
                                "injected": i % 2 == 0} for i in range(5000)]
    rows.append(("5,000 skills (10,000 short texts)", ep))
    rows.append(("500k random code points (~700 pages)", _described(18, random_code_points(rng))))
    ep = _base(19)
    long_token = "".join(rng.choice("!#$&()*+,-.:;<=>?@[]^_`{|}~") for _ in range(40_000))
    ep["detector"]["signals"][1]["value"] = ep["canaries"][0]["value"] = long_token
    rows.append(("a 40 KB signal value and canary", ep))
    ep = _base(20)
    ep["context"]["tools"][0]["input_schema"] = {"type": "object", "properties": {
        f"p{i}": {"type": "string",
                  "description": f"see \\x{i % 256:02x}\\u{i:04x} &#{i}; %{i % 256:02X} C:\\d{i}\\..\\x"}
        for i in range(2500)}}
    rows.append(("2,500 short texts that are not plain", ep))
    rows.append(("1 MB of grouped encodings and escapes", _described(21, grouped_runs(rng))))
    rows.append(("1 MB of markup inside words", _described(22, markup_runs(rng))))
    rows.append(("1 MB of gzip under base64 (bombs)", _described(23, gzip_runs(rng))))
    rows.append(("1 MB of random printable ASCII", _described(24, printable_text(random.Random(24)))))
    ep = _base(25)
    printable_rng = random.Random(25)
    ep["context"]["tools"] = [{"name": f"tool_{i}", "description": printable_text(printable_rng, 1000)}
                              for i in range(1000)]
    rows.append(("1,000 tools of 1 KB random printable", ep))
    rows.append(("1 MB of combining marks out of order", _described(27, "a" + "\u0301\u0316" * (SIZE // 4))))
    rows.append(("1 MB random mix of \\ = \" é ﬁ ǅ", _described(28, mixture_text(random.Random(28)))))
    # (session 20) texts that a path made not plain were tested one at a time (joined.py): 3.5 s
    ep = _base(29)
    ep["context"]["tools"][0]["input_schema"] = {"type": "object", "properties": {
        f"p{i}": {"type": "string", "description": f"arg {i} /x/../y"} for i in range(20_000)}}
    rows.append(("20,000 properties, a path in each", ep))
    # (session 21) texts a decoder changes were tested one at a time (~0.2 ms each): 3.2-3.6 s;
    # their decoder outputs are joined now (joined.py): 1.0-1.4 s
    ep = _base(30)
    ep["context"]["tools"][0]["input_schema"] = {"type": "object", "properties": {
        f"p{i}": {"type": "string", "description": f"arg {i} C:\\dir\\file{i}.txt"} for i in range(20_000)}}
    rows.append(("20,000 properties, a Windows path each", ep))
    # (session 22) a short text past its own NFKC limit inside a join within the join's limit: its
    # NFKC forms were searched as if known, and the episode SCORED; unknown now, and REJECTED
    ep = _base(31)
    properties = {f"p{i}": {"type": "string", "description": f"arg {i} é words"} for i in range(20_000)}
    properties["p77"]["description"] = "\ufdfa" * 4_000 + " words"
    ep["context"]["tools"][0]["input_schema"] = {"type": "object", "properties": properties}
    rows.append(("20,000 properties, one of 4,000 U+FDFA", ep))
    # (session 23) texts whose base64 runs and grouped encodings decode, each decoded on its own
    # (~20 us a text): 1.8-1.95 s; their runs decoded together now (encoded_spans.py, grouped_many)
    ep = _base(32)
    ep["context"]["tools"][0]["input_schema"] = {"type": "object", "properties": {
        f"p{i}": {"type": "string", "description": f"arg {i} aGVsbG8gd29ybGQ{i % 10} y"} for i in range(20_000)}}
    rows.append(("20,000 properties, a base64 token each", ep))
    return rows


def printable_text(rng: random.Random, size: int = SIZE) -> str:
    """Characters drawn evenly from `string.printable`: every decoder finds something to decode
    (about 10,000 each of backslashes, ampersands and percent signs), each decoded form is
    another 1 MB text through the whole chain, and a "://" makes the path splits look for URLs."""
    return "".join(rng.choice(string.printable) for _ in range(size))


def mixture_text(rng: random.Random, size: int = SIZE) -> str:
    """Characters drawn at random from six that each start a decoding or change under a normal
    form: a backslash (JSON escapes, a text dense with Windows paths), "=" and '"', "é", "ﬁ" and
    "ǅ" (NFKC and case folding change them). About 30 forms of 1 MB, each derived by NFKC, the
    confusable skeleton or the canonicalisation of dense non-ASCII paths (session 18: one of the
    random mixtures of escape starts, marks and ligatures that take over 1 s)."""
    return "".join(rng.choice('=\u00e9\ufb01\\\u01c5"') for _ in range(size))


def random_code_points(rng: random.Random, count: int = SIZE // 2) -> str:
    """Code points drawn evenly from U+0020-U+2FFFF (surrogates dropped): two thirds of them in the
    other planes, ~700 pages of 256 characters, format characters next to combining marks (so
    every NFKC step of the chain runs in full): ~1.8 MB of UTF-8."""
    return "".join(chr(rng.randrange(0x20, 0x30000)) for _ in range(count)).encode("utf-8", "ignore").decode()


def gzip_runs(rng: random.Random, size: int = SIZE) -> str:
    """Base64 of gzip streams that each inflate to 1 MB of padding and a word (~1 MB: a
    thousand-fold ratio; `printable.INFLATED_MAX` bounds what a text's spans inflate to in all)."""
    def stream() -> str:
        word = "".join(rng.choice("abcdefghij") for _ in range(8)).encode()
        return base64.b64encode(gzip.compress(b"A" * (1 << 20) + word, mtime=0)).decode()
    return _joined_until(size, " ", stream)


def markup_runs(rng: random.Random, size: int = SIZE) -> str:
    """Words split by every kind of markup `domain/markup.py` removes (tags, comments, Markdown
    markers, hyphen line wraps), each split different, with the markers that are left between
    words (~1 MB)."""
    marks = ["<b>", "</b>", "<span class='k'>", "<!-- n -->", "**", "`", "~~", "__", "-\n    ", "<br/>"]
    def split_word() -> str:
        word = "".join(rng.choice("abcdefghij0123456789") for _ in range(rng.randrange(4, 12)))
        cut = rng.randrange(1, len(word))
        return word[:cut] + rng.choice(marks) + word[cut:] + rng.choice([" ", " **x** ", "\n", " `y` "])
    return _joined_until(size, "", split_word)


def grouped_runs(rng: random.Random, size: int = SIZE) -> str:
    """Every shape `domain/grouped.py` and `decoding.other_escapes` decode, short runs of each, with
    random content, one after another: base64 in groups of four, hex bytes with colons, decimal
    character codes, base32, a token spelt out, quoted-printable and octal escapes (~1 MB)."""
    def chunk() -> str:
        raw = bytes(rng.randrange(32, 127) for _ in range(9))
        return rng.choice([
            " ".join(base64.b64encode(raw).decode()[i:i + 4] for i in range(0, 12, 4)),
            ":".join(f"{b:02x}" for b in raw), ",".join(str(b) for b in raw),
            base64.b32encode(raw + b"x").decode(), " ".join(raw.decode()), "".join(f"={b:02X}" for b in raw),
            "".join(f"\\{b:03o}" for b in raw)])
    return _joined_until(size, ". ", chunk)


def escape_runs(size: int = SIZE) -> str:
    """Runs of backslash, JSON-like, HTML and percent escapes, each run different: dense with
    Windows-style separators, and non-ASCII once HTML-decoded (`&#20013;`), so each decoded form
    is a path-dense text of tens of thousands of distinct short runs."""
    return " ".join(f"\\x{i:x}\\{i % 700}\\u{{{i:x}}}&#{i};%{i % 256:02X}" for i in range(size // 16))[:size]


def multiplying_schema(depth: int) -> dict[str, Any]:
    """Each definition names the next under two properties: 2^depth argument paths."""
    defs: dict[str, Any] = {
        f"d{i}": {"type": "object", "description": f"level {i}",
                  "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}}}
        for i in range(depth)}
    defs[f"d{depth}"] = {"type": "string", "default": "leaf"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def floor(ep: dict[str, Any]) -> None:
    text = json.dumps(ep, ensure_ascii=False)
    lower = text.lower()
    needles = [c["value"] for c in ep["canaries"]]
    needles += [s["value"] for s in ep["detector"]["signals"] if s["kind"] in ("substring", "regex")]
    needles += [t["name"] for t in ep["context"]["tools"]]
    for needle in needles:
        text.find(needle)
        lower.find(needle.lower())


def whole_check(rules: Any, path: str) -> list[str]:
    """`litmus-rules check PATH --format jsonl --jobs 1` in this process: its output lines."""
    from litmus_rules.engine.batch import RulesSpec, check_inputs
    from litmus_rules.render.json import json_line

    spec = RulesSpec(None, {}, "fails", False)
    return [json_line(o.json) for o in check_inputs(rules, spec, [path], jobs=1)]


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result)."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="run the rows whose name contains this")
    args = parser.parse_args()

    import litmus_rules

    t_load, _, rules = timed(litmus_rules.load_rules)
    print(f"litmus_rules from {Path(litmus_rules.__file__).parent.parent}; load_rules {t_load * 1000:.0f} ms")
    # warm up (the confusables table, compiled patterns): once per process, not per episode
    warm = _fresh(dict(episodes())["100 canaries"], -1)
    rules.evaluate(warm)
    print(f"{'episode':36} {'check cpu':>9} {'rules ms':>9} {'cpu ms':>8} {'floor ms':>9} {'ratio':>6}  verdict")
    with tempfile.TemporaryDirectory(prefix="worst-case-") as tmp:
        warm_path = os.path.join(tmp, "warm.jsonl")  # and the reader, the schema, the JSON writer
        with open(warm_path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(_fresh(warm, -2), ensure_ascii=False) + "\n")
        whole_check(rules, warm_path)
        for name, ep in episodes():
            if args.only not in name:
                continue
            best = best_cpu = best_check = best_floor = float("inf")
            verdict = None
            for run in range(args.repeats):
                fresh = _fresh(ep, run)
                path = os.path.join(tmp, f"run{run}.jsonl")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(json.dumps(fresh, ensure_ascii=False) + "\n")
                _, check_cpu, lines = timed(lambda: whole_check(rules, path))
                assert len(lines) == 1, lines
                best_check = min(best_check, check_cpu)
                fresh = _fresh(ep, run + args.repeats)  # evaluate's own run: nothing cached by check's
                elapsed, cpu, verdict = timed(lambda: rules.evaluate(fresh))
                best, best_cpu = min(best, elapsed), min(best_cpu, cpu)
                best_floor = min(best_floor, timed(lambda: floor(fresh))[0])
            assert verdict is not None
            reasons = ",".join(sorted({r.rule for r in verdict.reasons})) or "-"
            checked = json.loads(lines[0])
            assert checked["verdict"] == verdict.verdict, (checked["verdict"], verdict.verdict)
            print(f"{name:36} {best_check * 1000:9.1f} {best * 1000:9.1f} {best_cpu * 1000:8.1f} "
                  f"{best_floor * 1000:9.1f} {best / best_floor:6.1f}  {verdict.verdict} {reasons}", flush=True)


if __name__ == "__main__":
    main()
