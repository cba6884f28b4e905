"""Markup and line wraps inside a word, removed ("markup removed" in traces): what a renderer or a
reader does not see, so that a token split by it is still the token.

- an HTML tag or comment between two token characters (letters, digits, "_" and "-"):
  "lc-5f<b>0e9a</b>3b7d", "lc-5f<!-- x -->0e9a";
- Markdown emphasis, code or strike-through markers between two token characters:
  "lc-5f**0e9a**3b", "lc-`5f0e9a`3b", "lc-5f~~0e~~9a" (single "*" and "_" are left: "_" is part
  of identifiers);
- string literals concatenated, or written side by side, inside a token: "lc-5f" + "0e9a",
  'lc-5f' '0e9a' (the code of a payload that builds the token);
- a line broken after a hyphen, as text wrappers break long words ("lc-\\n    5f0e9a3b7d", Python's
  textwrap by default): the line break and the indentation around it.

Markup between words, or at a word's edge, is left as it is ("**bold** text" keeps its markers):
removing it would change nothing a token is looked for in. Linear time: the tags and comments it
removes are at most MARKUP_MAX characters long; `markup_hint` (RE2) finds, in a join of texts, every
text `unwrap_markup` changes (joined.py tells plain texts apart with it).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from litmus_rules.domain.textmemo import memo_large, re2_in, re2_module, re2_options

MARKUP_MAX = 64  # characters of a tag's attributes or a comment's text
_W = "[A-Za-z0-9_-]"  # the characters of a token
_MARK = (f"(?:<!--[^\\n\\x00]{{0,{MARKUP_MAX}}}?-->|</?[A-Za-z][A-Za-z0-9]{{0,16}}"
         f"(?:[ \\t][^<>\\n\\x00]{{0,{MARKUP_MAX}}})?/?>|\\*\\*|__|`|~~"
         f"|[\"'][ \\t]*\\+?[ \\t]*[\"'])+")
_WRAP = "[ \\t]*\\r?\\n[ \\t]*"
# `re`'s reading of the markers: "__" not next to another underscore (three or more in a row,
# "a___b", are a placeholder or part of a name, not a marker; the hint's reading is wider)
_MARK_EXACT = _MARK.replace("|__|", "|(?<!_)__(?!_)|")
# the markup alone, between a word character before it and one after it (lookarounds: `re`); the
# lookahead in front names the characters a match starts with, so `re` tries the lookbehinds only
# there (2-6x faster on a large text)
_MARKUP_RE = re.compile(f"(?=[<*_`~\"' \\t\\r\\n])(?:(?<={_W}){_MARK_EXACT}(?={_W})|(?<={_W}-){_WRAP}(?={_W}))")
# the same with the word characters around it (RE2 has no lookaround): a superset of the places
_HINT = f"{_W}{_MARK}{_W}|{_W}-{_WRAP}{_W}"


_MARKERS = ("<", "*", "_", "`", "~", "\n", '"', "'")  # a character of each kind of markup
# Past this many characters, RE2 looks for markup (`markup_hint`) before `re` removes it: `re` tries
# the lookbehind at every position (70 ms on 1 MB of base64 wrapped in lines, RE2 7 ms).
HINT_FIRST_MIN = 1 << 12


@memo_large
def unwrap_markup(text: str) -> str:
    """`text` without the markup and line wraps inside its words (see the module doc)."""
    if not any(map(text.__contains__, _MARKERS)):
        return text
    if len(text) >= HINT_FIRST_MIN:
        try:
            if not re2_in(markup_hint(), text):
                return text
        except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8; `re` decides
            pass
    return _MARKUP_RE.sub("", text)


@functools.cache
def markup_hint() -> Any:
    """The RE2 pattern that matches wherever `unwrap_markup` removes something."""
    return re2_module().compile(_HINT, re2_options())
