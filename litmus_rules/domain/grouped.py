"""Base64 and hex written in groups: the encodings a person or a dump tool spaces out, which the
run decoders of encoded.py (one unbroken run of the alphabet each) do not read whole.

- base64 in groups of four characters separated by spaces or tabs ("bGMt NWYw ZTlh"), three
  groups or more (the last may be short, and padded);
- hex bytes with one separator throughout: "6c:63:2d", "6c 63 2d", "6c-63-2d" (five bytes or
  more), "0x6c, 0x63" (four or more), xxd's pairs "6c63 2d35" (four pairs or more).

Each group run is joined without its separators and decoded as encoded.py decodes a run (every
alignment, kept when mostly printable UTF-8), so a token anywhere inside it is found. Prose is full
of group runs ("Send your data here", "at 12 30 45 60 75"), so a run is decoded only when it looks
encoded, and what it decodes to is kept only when it reads as text:

- a base64 run holds a group with an upper-case letter, a digit, "+" or "/" past its first
  character (nearly every group of real base64 does; "Read your mail" has none);
- a decoded span has MIN_DECODED characters or more, three quarters of them ASCII letters, digits,
  spaces or "-_./:@" (a run that only looks encoded gives bytes of punctuation, if printable).

Linear: RE2 scans find the group runs; `grouped_hint` finds, in a join of texts, every text that
may give a span (joined.py tells plain texts apart with it).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from litmus_rules.domain.encoded import _decode_b64_many, _hex_found
from litmus_rules.domain.textmemo import memo_large, re2_module, re2_options

_B = "[A-Za-z0-9+/_-]"
_SPACE = "[ \\t]+"
_WORD_START = "(?:^|[^A-Za-z0-9+/_=-])"
# a base64 group that looks encoded: a character past its first that prose words seldom hold there
_X = f"(?:{_B}[A-Z0-9+/]{_B}{{2}}|{_B}[a-z_-][A-Z0-9+/]{_B}|{_B}[a-z_-]{{2}}[A-Z0-9+/])"
# a base64 group run, from where a word starts (group 1): three groups or more
_B64_RUN = rf"{_WORD_START}({_B}{{4}}(?:{_SPACE}{_B}{{4}})+{_SPACE}{_B}{{2,4}}={{0,2}})"
# A hex group run (group 1): from where a word starts, five bytes or more, one separator throughout
# ("2022-02-17 09:00:00" mixes three and is no run), or four 0x-prefixed bytes, or xxd's pairs.
_H = "[0-9A-Fa-f]{2}"
_HEX_SEPARATORS = (":", "-", r"\.", ",", ";", ", ", " ", r"\t")
_HEX_RUN = ("(?:^|[^0-9A-Za-z])("
            + "|".join(f"{_H}(?:{sep}{_H}){{4,}}" for sep in _HEX_SEPARATORS)
            + f"|0[xX]{_H}(?:,?[ \\t]*0[xX]{_H}){{3,}}|[0-9A-Fa-f]{{4}}(?: [0-9A-Fa-f]{{4}}){{3,}}(?: {_H})?)")
# Every base64 run decoded holds a match of the first two alternatives: its looking group, at the
# start of a group, and the group after it or before it (a run has three); every hex run decoded is
# a match of the third.
_HINT = f"{_WORD_START}{_X}{_SPACE}{_B}{{2}}|{_WORD_START}{_B}{{4}}{_SPACE}{_X}|{_HEX_RUN}"
MIN_DECODED = 6
# what a decoded span's characters are counted against (`_reads_as_text`)
_NOT_WORDISH = re.compile(r"[^A-Za-z0-9 \-_./:@]")


@functools.cache
def _patterns() -> tuple[Any, Any, Any]:
    re2 = re2_module()
    return (re2.compile(_B64_RUN, re2_options()), re2.compile(_HEX_RUN, re2_options()),
            re2.compile(_X, re2_options()))


@functools.cache
def grouped_hint() -> Any:
    """The RE2 pattern that matches wherever `grouped_text` finds a run it decodes."""
    return re2_module().compile(_HINT, re2_options())


def _runs(pattern: Any, text: str) -> list[str]:
    try:
        return [m.group(1) for m in pattern.finditer(text)]
    except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8; search the text without them
        return [m.group(1) for m in pattern.finditer(text.encode("utf-8", "replace").decode("utf-8"))]


def _reads_as_text(span: str) -> bool:
    return len(span) >= MIN_DECODED and 4 * len(_NOT_WORDISH.findall(span)) <= len(span)


def _looks_encoded(run: str, looking: Any) -> bool:
    return any(len(group) == 4 and looking.fullmatch(group) for group in run.split())


@memo_large
def grouped_text(text: str) -> str:
    """The decoded spans of the base64 and hex group runs of `text`, one a line ("" if none)."""
    try:
        if grouped_hint().search(text) is None:
            return ""
    except UnicodeEncodeError:  # lone surrogates: look at the runs (below)
        pass
    b64, hexes, looking = _patterns()
    runs = ["".join(run.split()) for run in _runs(b64, text) if _looks_encoded(run, looking)]
    hex_runs = [re.sub(r"0[xX]|[^0-9A-Fa-f]", "", run) for run in _runs(hexes, text)]
    spans = _decode_b64_many(runs) + _hex_found(hex_runs)
    return "\n".join(span for span in spans if span is not None and _reads_as_text(span))
