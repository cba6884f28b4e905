"""Path canonicalisation: every path-like token of a text in one canonical spelling.

`canonical_path(text)` ("path canonicalised" in traces; idempotent) turns file:///etc//passwd,
//etc/passwd, /etc/../etc/passwd, /etc/./passwd and \\etc\\passwd all into /etc/passwd, and leaves
other URLs (their "//authority") as they are. `path_changes(text)` asks only whether it would
change anything.

The tokens are what RE2 finds with `_PATH_PATTERN` (linear time). How they are found is chosen for
speed, never for the result: a text run by run (the stretches between token boundaries, which
no token crosses), only where something may change; a text of more than DENSE_MIN characters dense
with separators by one split into its runs that hold one (`_canonical_dense`), each distinct run
once. Short runs, and long ones on which `re` is linear, are read by `re` (`_PATH_RE_ASCII`);
non-ASCII runs on their ASCII stand-ins (path_roles.py); other texts by RE2 called on their
bytes. DENSE_MIN, ASCII_RUN_MAX, SCALAR_MAX and DENSE_PATHS only choose among these (same
result); the memos are bounded (RUN_MEMO_MAX, DENSE_MEMO_CHARS, DENSE_MEMO_RUNS).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections import deque
from collections.abc import Callable, Iterator
from itertools import accumulate, compress, repeat
from operator import is_, is_not, le, lt, ne, not_, or_
from typing import Any

from litmus_rules.domain.encoded import RUN_MEMO_ENTRIES
from litmus_rules.domain.lazyre import Patterns
from litmus_rules.domain.path_roles import originals, stand_ins, table_loaded
from litmus_rules.domain.textmemo import MEMO_MIN, ShortTextMemo, memo_large, re2_module, re2_options


def _spec(pattern: str, flags: int = 0) -> tuple[str, int]:
    return pattern, flags


_SURROGATE_SPEC = _spec("[\ud800-\udfff]")  # (RE2 reads UTF-8: a lone surrogate is replaced first)

# A path-like token: an optional file: scheme, an optional drive or ~ / . / .. prefix, then at
# least one separator followed by a segment; or a relative a/b. Other URLs are matched whole so
# that their "//authority" is left alone. RE2: linear time, and ~10x faster than `re` on prose.
_SEG = r"[\p{L}\p{N}_.~%$@+=-]+"
_PATH_BODY = (
    r"(?:\b(?i:file):(?://(?i:localhost)?)?)?(?:\b[A-Za-z]:|~|\.{1,2})?(?:[\\/]+" + _SEG + r")+[\\/]*"
    r"|\b" + _SEG + r"(?:[\\/]+" + _SEG + r")+[\\/]*"
)
_PATH_PATTERN = r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]*)|" + _PATH_BODY


@functools.cache
def _path_res() -> tuple[Any, Any]:
    """(the path-token pattern, the path body alone), compiled for RE2 on first use."""
    re2 = re2_module()
    return re2.compile(_PATH_PATTERN, re2_options()), re2.compile(_PATH_BODY, re2_options())


def __getattr__(name: str) -> Any:
    # every compiled pattern as a module attribute (`paths._PATH_RE`, `paths._DENSE_RUN`), built on
    # first use
    if name == "_PATH_RE":
        return _path_res()[0]
    if name == "_PATH_ONLY_RE":
        return _path_res()[1]
    if name[:1] == "_" and name[1:] in _RE.names():  # the `re` patterns
        return getattr(_RE, name[1:])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The same on ASCII text, for `re` (leftmost-first like RE2; \b and \s spelled as RE2 reads them):
# no RE2 wrapper overhead per call, for the many short runs of a long text (`canonical_path`);
# test_normalize compares the two.
_PATH_RE_ASCII_SPEC = _spec(
    (r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\t\n\f\r \"'<>`]*)|" + _PATH_BODY).replace(r"\p{L}\p{N}", "A-Za-z0-9"),
    re.ASCII,
)
_PATH_BODY_ASCII_SPEC = _spec(_PATH_BODY.replace(r"\p{L}\p{N}", "A-Za-z0-9"), re.ASCII)


def _canonical(p: str) -> str:
    if p[:5].lower() == "file:":
        p = p[5:]
        if p[:11].lower() == "//localhost":
            p = p[11:]
    p = p.replace("\\", "/")
    if p[:2] == "//":
        # normpath keeps a leading "//" (POSIX leaves its meaning open): make it one slash; normpath
        # folds the doubled slashes inside
        p = "/" + p.lstrip("/")
    return posixpath.normpath(p) if p else p


def _canonical_token(m: Any) -> str:
    p = m.group()
    if m.group(1) is None:
        return _canonical(p)
    # a URL: only file: URLs name a local path
    if p[:5].lower() == "file:":
        body = _RE.PATH_BODY_ASCII if p.isascii() else _path_res()[1]
        return body.sub(_canonical_match, p)  # type: ignore[no-any-return]
    return p


def _canonical_match(m: Any) -> str:
    return _canonical(m.group())


# Everything `_canonical` can change starts with one of these: a backslash, "./", a "." or ".."
# segment, a doubled or trailing slash, a file: scheme. Texts without any (most prose, most
# URLs) are returned as they are; `re` finds the leading characters quickly.
_PATH_MAY_CHANGE_SPEC = _spec(r"\\|\./|/(?:[./]|(?![\w~%$@+=-]))|[Ff][Ii][Ll][Ee]:")


# Path-like tokens never hold one of these (RE2's \s, and the characters that end a URL), so a
# path token lies inside one run of other characters, and canonicalising each run on its own is
# canonicalising the text: at a run's edges, as at the text's, \b sees a non-word character.
_TOKEN_BOUNDARY_SPEC = _spec("[\t\n\f\r \"'<>`]")
# A text longer than this that is dense with separators (DENSE_PATHS) is split into its runs at
# once (`_canonical_dense`); any other is canonicalised only in the runs where `_PATH_MAY_CHANGE`
# finds something. (Up to session 15 a text up to 4 KB was canonicalised whole, in one pass of the
# token pattern over it: 3-4x slower on short texts with a path among words, since the pattern is
# tried at every position, and a tool list's thousands of descriptions are such texts.)
DENSE_MIN = 256
# Short ASCII runs go through `_PATH_RE_ASCII` (~1 us a call, RE2's wrapper ~10-30 us); `re` may
# backtrack quadratically in a run ("a.a.a...": ~70 us at 64 characters), RE2 never does.
ASCII_RUN_MAX = 64
# `re` reads a longer ASCII run in linear time too when none of its runs of segment characters
# or of separators is longer than 64: a start that fails reads (and backtracks over) one of
# each at most, and a start that finds a token goes on to its end. "C:/C:/..." (a token every
# three characters, 300,000 in a MB) then costs one `re` pass, not one RE2 call a token.
_SHORT_SEGMENTS_SPEC = _spec(r"(?:[A-Za-z0-9_.~%$@+=-]{0,64}+[^A-Za-z0-9_.~%$@+=-]++)*+[A-Za-z0-9_.~%$@+=-]{0,64}+")
_SHORT_SEPARATORS_SPEC = _spec(r"(?:[\\/]{0,64}+[^\\/]++)*+[\\/]{0,64}+")


def _re_reads(run: str) -> bool:
    """Whether `re` canonicalises the ASCII `run` in linear time (see ASCII_RUN_MAX)."""
    return len(run) <= ASCII_RUN_MAX or (
        _RE.SHORT_SEGMENTS.fullmatch(run) is not None and _RE.SHORT_SEPARATORS.fullmatch(run) is not None)


# A non-ASCII text with at most this many separators (so as many tokens at most) goes through
# RE2's substitution, ~6 us a short token, which costs less than building the stand-in table
# (~0.1 s, once per process when the user's cache has not kept it) for a few paths in a sentence.
# But RE2 on non-ASCII text costs as much as its tokens are long (~1 us for 4 characters: the
# 190,000 random letters of a million `\\uXXXX` escapes, a backslash in every 40, took 0.30 s, and
# 0.13 s on the stand-in): so only until such texts add up to SUB_CHARS_BUDGET characters in a
# process, or the table is there anyway; then the table serves them all.
SUB_SEPARATORS_MAX = 64
SUB_CHARS_BUDGET = 1 << 16
_sub_chars = 0  # the characters of the texts given to RE2's substitution so far


def _substituted(text: str) -> bool:
    """Whether non-ASCII `text` goes through RE2's substitution (see SUB_SEPARATORS_MAX)."""
    global _sub_chars
    if (text.count("/") + text.count("\\") > SUB_SEPARATORS_MAX or _sub_chars + len(text) > SUB_CHARS_BUDGET
            or table_loaded()):
        return False
    _sub_chars += len(text)  # (a race between threads only moves the moment the table is built)
    return True


def _canonical_sub(text: str) -> str:
    """Every path token of `text` canonicalised (`_canonical_token`), whatever the text: its tokens
    found on its ASCII stand-in (path_roles.py; the text itself if ASCII) by one `re` pass where
    `re` is linear (`_re_reads`), else by RE2 called on the stand-in's bytes; RE2's substitution
    for a non-ASCII text with few separators before the table is built (`_substituted`) or with a
    lone surrogate."""
    path_re = _path_res()[0]
    stand_in: str | None = text
    if not text.isascii():
        table = None if _substituted(text) else stand_ins(text)
        stand_in = None if table is None else text.translate(table)
    if stand_in is not None:
        if "\n" not in text and _re_reads(stand_in):  # (`_canonical_ascii` joins its runs by newlines)
            return _canonical_ascii([text], None if stand_in is text else [stand_in])[0]
        tokens = _ascii_tokens(path_re, stand_in)
        if tokens is not None:
            return _canonical_spans(text, *tokens, None if stand_in is text else stand_in)
    try:
        return path_re.sub(_canonical_token, text)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        return path_re.sub(_canonical_token, _RE.SURROGATE.sub("\ufffd", text))  # type: ignore[no-any-return]


def _ascii_tokens(path_re: Any, text: str) -> tuple[list[int], list[int], list[bool]] | None:
    """The starts, ends and whether each is a URL of the path tokens of ASCII `text`, found by calling RE2 on its bytes
    directly: the wrapper's `sub` costs ~6 us a token in Python (a long run can hold 300,000), a
    direct call ~1.5 us. None where that entry point (the wrapper's, not public) is missing or does
    not give what the wrapper's own `finditer` gives (`_direct_calls_agree`): then `sub` is used."""
    if not _direct_calls_agree():
        return None
    return _direct_tokens(path_re, text)


def _direct_tokens(path_re: Any, text: str) -> tuple[list[int], list[int], list[bool]]:
    match = path_re._regexp.Match
    unanchored = type(path_re._regexp).Anchor.UNANCHORED
    data = text.encode("ascii")
    n = len(data)
    starts: list[int] = []
    ends: list[int] = []
    urls: list[bool] = []
    pos = 0
    while pos < n:  # (a token is never empty: it holds a separator and a segment)
        spans = match(unanchored, data, pos, n)
        start, pos = spans[0]
        if start < 0:
            break
        starts.append(start)
        ends.append(pos)
        urls.append(spans[1][0] >= 0)
    return starts, ends, urls


@functools.cache
def _direct_calls_agree() -> bool:
    """Whether `_direct_tokens` finds what the wrapper finds, asked once per process of a text
    with every kind of token (paths, drives, file: and other URLs, dot segments)."""
    probe = "see C:\\a/./b, ~/c and ../d//e at file:///x//y or http://h/a/../b; /f/ g/h\\"
    path_re = _path_res()[0]
    try:
        found = _direct_tokens(path_re, probe)
    except (AttributeError, TypeError, ValueError, IndexError):  # pragma: no cover - another google-re2 layout
        return False
    return list(zip(*found)) == [(m.start(), m.end(), m.group(1) is not None) for m in path_re.finditer(probe)]


def _changes(tokens: list[str], urls: list[bool],
             originals: Callable[[list[int]], list[str]] | None = None) -> tuple[list[int], list[str]]:
    """Which of the path tokens change, and to what, as `_canonical_token` changes them (`urls`:
    whether each is a URL): the paths all at once (`_canonical_paths`), file: URLs too
    (`_canonical_urls`), other URLs not. `originals`: the text's own tokens at some of those
    places, when `tokens` were found in its ASCII stand-in (path_roles.py). A token changes
    exactly where its stand-in does (canonicalising reads separators, dots and an ASCII file: or
    //localhost prefix, which the stand-in keeps, and a segment with any other character in it
    stays a segment), so only those are canonicalised again from the text. The loops over the
    tokens (300,000 in a long run) are calls into C."""
    paths = list(compress(range(len(tokens)), map(not_, urls)))
    found = list(map(tokens.__getitem__, paths))
    canonical = _canonical_paths(found)
    differs = list(map(ne, canonical, found))
    at, new = list(compress(paths, differs)), list(compress(canonical, differs))
    if originals is not None and at:
        new = _canonical_paths(originals(at))
    files = [k for k in compress(range(len(tokens)), urls) if tokens[k][:5].lower() == "file:"]
    if files:  # only file: URLs name a local path: their path tokens, as those of the text
        in_files = [tokens[k] for k in files]
        replaced = dict(zip(at, new))
        replaced.update(zip(files, _canonical_urls(in_files) if originals is None
                            else _canonical_urls(originals(files), in_files)))
        at = sorted(replaced)
        new = list(map(replaced.__getitem__, at))
    return at, new


def _canonical_spans(text: str, starts: list[int], ends: list[int], urls: list[bool], stand_in: str | None = None,
                     tokens: list[str] | None = None) -> str:
    """`text` with the path tokens from `starts` to `ends` that change put back changed
    (`_changes`); with its ASCII `stand_in`, the tokens were found there. `tokens`: the tokens as
    they are there, when the caller has them."""
    if not starts:
        return text
    if tokens is None:
        tokens = list(map((text if stand_in is None else stand_in).__getitem__, map(slice, starts, ends)))

    def originals(at: list[int]) -> list[str]:
        return list(map(text.__getitem__, map(slice, map(starts.__getitem__, at), map(ends.__getitem__, at))))

    at, new = _changes(tokens, urls, None if stand_in is None else originals)
    if not at:
        return text
    pieces = [""] * (2 * len(at) + 1)  # the text between the tokens put back, and each of them
    pieces[0::2] = map(text.__getitem__, map(slice, [0, *map(ends.__getitem__, at)], [*map(starts.__getitem__, at), len(text)]))
    pieces[1::2] = new
    return "".join(pieces)


# Runs up to this long are remembered (a long text repeats its paths, and its decoded and
# normalised forms hold the same runs again). A memo of a pure function: when it holds
# RUN_MEMO_ENTRIES runs it is emptied, and a run is canonicalised again.
RUN_MEMO_MAX = 256
_canonical_memo: dict[str, str] = {}
# Up to this many short ASCII runs are canonicalised one by one, more in one joined pass: the
# same results (test_normalize_worst13 sets it to 0).
SCALAR_MAX = 8


def _canonical_many(runs: list[str], stand_in: list[str] | None = None) -> list[str]:
    """Each run canonicalised (a run holds no token boundary). The short ASCII runs all at once:
    joined by newlines, split at their path tokens by one `re` pass, the tokens canonicalised
    together (`_canonical_paths`), and the long ASCII runs on which `re` is linear with them
    (`_re_reads`); the short non-ASCII runs so too, from their ASCII stand-ins (path_roles.py;
    `stand_in`: each run's, when the caller has them); any other long run, or a few non-ASCII
    ones, by `_canonical_sub`."""
    out = list(map(_canonical_memo.get, runs))
    short: list[int] = []  # the runs not remembered, sorted: ASCII ones `re` reads,
    wide: list[int] = []  # non-ASCII ones (long ones only among many); the others at once
    if len(runs) <= SCALAR_MAX:  # (most calls: one run of a sparse text)
        for i, run in enumerate(runs):
            if out[i] is None:
                if run.isascii() and _re_reads(run):
                    short.append(i)
                elif len(run) > ASCII_RUN_MAX:
                    out[i] = _canonical_sub(run)
                else:
                    wide.append(i)
    else:  # in C: a path-dense text has tens of thousands of runs
        todo = list(compress(range(len(runs)), map(is_, out, repeat(None))))
        todo_runs = list(map(runs.__getitem__, todo))
        too_long = list(map(lt, repeat(ASCII_RUN_MAX), map(len, todo_runs)))
        is_ascii = list(map(str.isascii, todo_runs))
        short = list(compress(todo, map(lt, too_long, is_ascii)))  # not too long, ASCII
        wide = list(compress(todo, map(is_, map(or_, too_long, is_ascii), repeat(False))))  # not too long, non-ASCII
        for i in compress(todo, too_long):
            if not runs[i].isascii():
                wide.append(i)  # with the short ones, if `re` reads its stand-in in linear time
            elif _re_reads(runs[i]):
                short.append(i)
            else:
                out[i] = _canonical_sub(runs[i])
    if wide:
        wide_in: list[str] | None = None
        if stand_in is not None:
            wide_in = [stand_in[i] for i in wide]
        elif len(wide) > SCALAR_MAX:
            joined = "\n".join(map(runs.__getitem__, wide))
            table = stand_ins(joined)
            wide_in = None if table is None else joined.translate(table).split("\n")
        if wide_in is not None:
            # (a long run whose stand-in `re` would not read in linear time: RE2 on its bytes)
            slow = [k for k in compress(range(len(wide)), map(lt, repeat(ASCII_RUN_MAX), map(len, wide_in)))
                    if not _re_reads(wide_in[k])]
            for k in reversed(slow):
                out[wide[k]] = _canonical_sub(runs[wide[k]])
                del wide[k], wide_in[k]
            for i, canonical in zip(wide, _canonical_ascii([runs[i] for i in wide], wide_in)):
                out[i] = canonical
        else:
            for i in wide:
                out[i] = _canonical_sub(runs[i])
    if len(short) > SCALAR_MAX or any(len(runs[i]) > ASCII_RUN_MAX for i in short):
        for i, canonical in zip(short, _canonical_ascii([runs[i] for i in short])):
            out[i] = canonical
    else:  # a few runs (most texts): one at a time costs less than the joined pass
        for i in short:
            m = _RE.PATH_RE_ASCII.match(runs[i])
            if m is not None and m.end() == len(runs[i]):  # the run is one token: what sub() would replace
                out[i] = _canonical_token(m)
            else:
                out[i] = _RE.PATH_RE_ASCII.sub(_canonical_token, runs[i])
    if len(_canonical_memo) + len(runs) > RUN_MEMO_ENTRIES:
        _canonical_memo.clear()
    for run, canonical in zip(runs, out):
        if len(run) <= RUN_MEMO_MAX:
            _canonical_memo[run] = canonical  # type: ignore[assignment]
    return out  # type: ignore[return-value]


# `_PATH_RE_ASCII` with the whole token as group 1 (the URL is group 2): `split` keeps both
_PATH_SPLIT_ASCII_SPEC = _spec("(" + _PATH_RE_ASCII_SPEC[0] + ")", re.ASCII)


def _canonical_ascii(runs: list[str], stand_in: list[str] | None = None) -> list[str]:
    """`_PATH_RE_ASCII.sub(_canonical_token, run)` of each ASCII run (no newline in any). Joined
    by newlines they are one text whose tokens are each run's: a newline is a token boundary, and
    \\b sees it as it sees a run's edges. `split` returns the pieces between the tokens, each token
    and its URL group, in C; the tokens that change (`_changes`) are put back in their places.
    With their ASCII stand-ins (`stand_in`, path_roles.py), the runs may be non-ASCII: the tokens
    are found in the stand-ins, and put back in the runs by the pieces' lengths."""
    joined = "\n".join(runs)
    searched = joined if stand_in is None else "\n".join(stand_in)
    parts: list[Any] = _RE.PATH_SPLIT_ASCII.split(searched)
    tokens, urls = parts[1::3], list(map(is_not, parts[2::3], repeat(None)))
    if stand_in is None:
        at, new = _changes(tokens, urls)
        if not at:
            return list(runs)
        _put(tokens, at, new)
        parts[1::3] = tokens
        del parts[2::3]
        out = "".join(parts)
    else:
        lengths = [0] * (2 * len(tokens) + 1)  # each piece between tokens, each token
        lengths[0::2], lengths[1::2] = map(len, parts[0::3]), map(len, tokens)
        ends = list(accumulate(lengths))
        out = _canonical_spans(joined, ends[0:-1:2], ends[1::2], urls, searched, tokens)
        if out is joined:
            return list(runs)
    lines = out.split("\n")
    assert len(lines) == len(runs)  # no token holds a newline, and canonicalising makes none
    return lines


_PATH_BODY_SPLIT_ASCII_SPEC = _spec("(" + _PATH_BODY_ASCII_SPEC[0] + ")", re.ASCII)


def _canonical_urls(urls: list[str], stand_in: list[str] | None = None) -> list[str]:
    """`_PATH_BODY_ASCII.sub(_canonical_match, url)` of each ASCII URL (no boundary character);
    with their ASCII stand-ins, of non-ASCII URLs, as `_canonical_ascii`."""
    joined = "\n".join(urls)
    parts = _RE.PATH_BODY_SPLIT_ASCII.split(joined if stand_in is None else "\n".join(stand_in))
    if stand_in is not None:
        parts = originals(parts, joined, 2)
    parts[1::2] = _canonical_paths(parts[1::2])
    out = "".join(parts).split("\n")
    assert len(out) == len(urls)
    return out


# Each path's start is a newline in the joined text: a literal that `re` searches for quickly (a
# "^" in MULTILINE mode is tried at every position).
_FILE_PREFIX_SPEC = _spec(r"\n[Ff][Ii][Ll][Ee]:(?://[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt])?")
_LEADING_SLASHES_SPEC = _spec(r"\n//+")
try:  # posixpath.normpath of a str is `_path_normpath(path) or "."`: the C part, without the call around it
    from posix import _path_normpath  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - not CPython 3.11+ on POSIX
    _path_normpath = posixpath.normpath


def _canonical_paths(paths: list[str]) -> list[str]:
    """`_canonical` of each path (no newline in any; its prefixes and separators are ASCII, and
    any other character is part of a segment): each step once, on all of them joined by
    newlines, then normpath (C) of each."""
    joined = "\n" + "\n".join(paths)
    if ":" in joined:
        joined = _RE.FILE_PREFIX.sub("\n", joined)
    joined = _RE.LEADING_SLASHES.sub("\n/", joined.replace("\\", "/"))
    parts = joined.split("\n")
    del parts[0]
    if len(parts) != len(paths):  # (not seen: the runs hold no newline)
        return [_canonical(p) for p in paths]
    out = list(map(_path_normpath, parts))
    if "" in out:  # normpath gives "." where the C part gives "", but of "" (kept as it is)
        out = [q or ("." if p else p) for p, q in zip(parts, out)]
    return out


def _canonical_runs(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, canonicalised) for the parts of `text` that canonicalisation may change: the
    runs between token boundaries where `_PATH_MAY_CHANGE` finds something. The rest of the text
    is left as it is."""
    if "/" not in text and "\\" not in text:
        return
    hit = _RE.PATH_MAY_CHANGE.search(text)
    if hit is None:
        return
    n = len(text)
    done = 0
    backwards = text[::-1]  # a run's start: the first boundary before a hit, searched backwards
    spans = []
    while hit is not None:
        pos = hit.start()
        before = _RE.TOKEN_BOUNDARY.search(backwards, n - pos, n - done)
        start = n - before.start() if before is not None else done
        boundary = _RE.TOKEN_BOUNDARY.search(text, pos)
        end = boundary.start() if boundary is not None else n
        spans.append((start, end))
        done = end
        hit = _RE.PATH_MAY_CHANGE.search(text, end)
    # all at once: a text of random letters can hold thousands such runs
    for (start, end), canonical in zip(spans, _canonical_many([text[start:end] for start, end in spans])):
        yield start, end, canonical


# A long text with more than one slash or backslash in DENSE_PATHS characters is canonicalised
# run by run from one split into its runs that hold a separator (`_DENSE_RUN`, each run looked at
# once); a sparser one by searching for the runs that may change (prose: one scan, few runs).
DENSE_PATHS = 64
# A run that `_PATH_MAY_CHANGE` finds something in, unless it starts with a URL other than file:
# (the URL is then the run's one token, up to its end, and is left as it is).
_RUN_MAY_CHANGE_SPEC = _spec(r"(?!(?![Ff][Ii][Ll][Ee]:)[A-Za-z][A-Za-z0-9+.-]*://).*?(?:" + _PATH_MAY_CHANGE_SPEC[0] + ")",
                             re.DOTALL)
# The runs of a dense text that may change (canonicalisation changes nothing else), found by one
# `split`, each with the character before it (the text is given a leading newline): a character
# that no path token holds (a charset that `re` scans for quickly), then the run, taken whole. A
# run is what lies between token boundaries (`_TOKEN_BOUNDARY`) if it holds a URL, and otherwise a
# finer one: a path token that is not a URL holds only segment characters, separators and ":" (a
# drive, a file: scheme), and `\b` sees any other ASCII character as it sees a text's edge, so
# that each is a token boundary too (a non-ASCII character is kept in the run, whatever it is:
# the runs are then at most longer, never cut inside a token); and only the runs with a separator
# may change. Finer runs are shorter and repeat more (`\x41\65&#65;` holds the run `\x41\65`), and
# most are one whole path token, which `_canonical_lines` sorts out in one pass. Linear: a run is
# read from its start only (once more, for "://", in a text that has a URL: `_DENSE_URL_RUN`).
_PATH_CHARS = r"A-Za-z0-9_.~%$@+=:\\/\u0080-\U0010ffff-"
_SEG_OR_COLON = r"A-Za-z0-9_.~%$@+=:\u0080-\U0010ffff-"
_DENSE_RUN_SPEC = _spec(rf"([^{_PATH_CHARS}])([{_SEG_OR_COLON}]*+[\\/][{_PATH_CHARS}]*+)")
_DENSE_URL_RUN_SPEC = _spec(
    rf"([^{_PATH_CHARS}])((?<=[\t\n\f\r \"'<>`])(?=(?:[^\t\n\f\r \"'<>`:]++|:(?!//))*+://)[^\t\n\f\r \"'<>`]++"
    rf"|[{_SEG_OR_COLON}]*+[\\/][{_PATH_CHARS}]*+)")
# The characters a URL run of `_DENSE_URL_RUN` lies between (`_dense_parts`), none a path character.
_URL_DELIMITERS = "\t\n\f\r \"'<>`"
_URL_DELIMITER_SPEC = _spec(f"[{_URL_DELIMITERS}]")

# One line (a run of an ASCII text, its boundaries made newlines) sorted by what `findall` gives:
# - the run, when it is one path token from its first character to its last, so that its
#   canonical form is `_canonical(run)` (done for all of them at once by `_canonical_paths`).
#   Only shapes where `_PATH_RE_ASCII`'s first match at the run's start is certain to span it: no
#   ":" past a drive (so no URL, no file: but in the last alternative), and either a word
#   character starting `_PATH_BODY`'s second branch, or its first branch's prefix (a drive not
#   followed by "//", which would make a URL; "~"; "." or ".."; none) followed by separators and
#   a segment character; what follows is segments and separators, which the token's greedy tail
#   takes to the end. Or a file: run (URL or not) when `_PATH_BODY` itself, committed to its
#   first match (an atomic group: no other way through it), spans the line;
# - the run and its newline, for any other run where `_PATH_MAY_CHANGE` finds something (as
#   `_RUN_MAY_CHANGE`, its lazy scan spelled as a possessive loop over the characters where no
#   change can start: 3x faster in `re`);
# - "" for the rest (first, in one scan, the runs without a separator), left as they are.
# Every match starts at a line's start and ends with its newline: one match per line, no position
# inside a line tried on its own. Linear: possessive loops, one atomic group at one position.
# One group, so `findall` returns strings: tuples or match objects, one per run, would wake the
# garbage collector, which then walks the whole heap of the process.
_SEG_ASCII = "A-Za-z0-9_.~%$@+=-"  # "-" last in every class it is put in: not a range
_DENSE_LINE_SPEC = _spec(
    r"[^\n\\/]*+\n"  # no separator: no path token (most words), in one scan
    rf"|((?:(?:[A-Za-z0-9_][{_SEG_ASCII}]*+|[A-Za-z]:(?!//)|~|\.\.?|)[\\/]++[{_SEG_ASCII}][\\/{_SEG_ASCII}]*+"
    rf"|(?=[Ff][Ii][Ll][Ee]:)(?>{_PATH_BODY_ASCII_SPEC[0]}))(?=\n)"
    r"|(?!(?![Ff][Ii][Ll][Ee]:)[A-Za-z][A-Za-z0-9+.-]*+://)"
    r"(?=(?:[^\n\\./Ff]++|\.(?!/)|/(?=[A-Za-z0-9_~%$@+=-])|[Ff](?![Ii][Ll][Ee]:))*+"
    rf"(?:{_PATH_MAY_CHANGE_SPEC[0]}))[^\n]*+\n)(?:(?<=\n)|\n)"
    r"|[^\n]*+\n",
    re.ASCII,
)


# The runs of dense texts, with their canonical forms (a run that does not change: itself): a
# text's decoded forms (JSON, HTML, percent) repeat most of its runs, and so do the texts of the
# next episodes. A memo of a pure function, of runs up to RUN_MEMO_MAX characters: emptied when
# it would hold more than DENSE_MEMO_RUNS runs or DENSE_MEMO_CHARS characters of them (a text
# with more is not remembered): ~10 MB at most.
DENSE_MEMO_CHARS = 1 << 22
DENSE_MEMO_RUNS = 1 << 16
_dense_memo: ShortTextMemo[str] = ShortTextMemo(DENSE_MEMO_RUNS, DENSE_MEMO_CHARS)


def _canonical_dense(text: str) -> str:
    """`canonical_path` of a text dense with paths: each distinct run that may change (`_DENSE_RUN`)
    from the memo or `_canonical_lines`, put back between the rest of the text. The loops over
    the runs (tens of thousands) are calls into C (map, compress, zip): no Python bytecode per run."""
    table = None
    if not text.isascii():  # the tokens of its runs found on their ASCII stand-ins (path_roles.py)
        table = stand_ins(text)
        if table is None:
            return _canonical_dense_runs(text)
    parts = _dense_parts("\n" + text)
    runs = parts[2::3]
    found: dict[str, Any] = dict.fromkeys(runs)  # each run once: a text repeats its runs (a path, an escape)
    distinct = list(found)
    known = list(map(_dense_memo.get, distinct))
    missed = list(compress(distinct, map(is_, known, repeat(None))))
    found.update(zip(distinct, known))
    if missed:
        joined = "\n".join(missed)
        stand_in = None if table is None or joined.isascii() else joined.translate(table).split("\n")
        canonical = _canonical_lines(missed, stand_in)
        _remember(missed, canonical)
        found.update(zip(missed, canonical))
    out = list(map(found.__getitem__, runs))
    if out == runs:
        return text
    parts[2::3] = out
    return "".join(parts)[1:]


# How many URL runs a text may hold for `_dense_parts` to split it around them.
DENSE_URL_STRETCHES_MAX = 64


def _dense_parts(text: str) -> list[str]:
    """`_DENSE_URL_RUN.split(text)` (`text` starts with a newline), with `_DENSE_RUN`'s cheaper
    split wherever no URL is. A URL run is a whole stretch between two delimiters
    (`_URL_DELIMITERS`, none of them a path character) that holds "://", and `_DENSE_URL_RUN`
    matches it from the delimiter before it to the next one; no other match crosses a delimiter,
    and where no stretch holds "://" the two patterns match alike. So the text is split stretch by
    stretch: a few URLs in a large text no longer make every run of it tried as a URL (2x the
    time). Past DENSE_URL_STRETCHES_MAX such stretches, the one split of the whole text."""
    at = text.find("://")
    if at < 0:
        return _RE.DENSE_RUN.split(text)
    stretches: list[tuple[int, int]] = []
    done = 0
    while at >= 0:
        if len(stretches) == DENSE_URL_STRETCHES_MAX:
            return _RE.DENSE_URL_RUN.split(text)
        # the delimiter before it: at `done` at least (the newline in front, or the one that
        # ended the stretch before)
        start = max(text.rfind(c, done, at) for c in _URL_DELIMITERS)
        after = _RE.URL_DELIMITER.search(text, at)
        end = after.start() if after is not None else len(text)
        stretches.append((start, end))
        done = end
        at = text.find("://", end)
    parts = [""]
    done = 0
    for start, end in stretches:
        between = _RE.DENSE_RUN.split(text[done:start])
        parts[-1] += between[0]
        parts.extend(between[1:])
        parts += [text[start], text[start + 1 : end], ""]
        done = end
    rest = _RE.DENSE_RUN.split(text[done:])
    parts[-1] += rest[0]
    parts.extend(rest[1:])
    return parts


def _remember(runs: list[str], canonical: list[str]) -> None:
    """Put the runs up to RUN_MEMO_MAX characters and their canonical forms in the dense memo,
    emptied first if they would not fit (none if they cannot)."""
    if max(map(len, runs)) > RUN_MEMO_MAX:
        short = list(map(le, map(len, runs), repeat(RUN_MEMO_MAX)))
        runs, canonical = list(compress(runs, short)), list(compress(canonical, short))
    _dense_memo.keep(runs, canonical)


def _put(out: list[Any], at: list[int], values: list[Any]) -> None:
    """out[at[k]] = values[k] for each k, in C."""
    deque(map(out.__setitem__, at, values), maxlen=0)


def _canonical_lines(runs: list[str], stand_in: list[str] | None = None) -> list[str]:
    """`_canonical_many(runs)` of ASCII runs, sorted by one pass (`_DENSE_LINE`) into whole path
    tokens, canonicalised together (`_canonical_paths`), other runs that may change
    (`_canonical_many`) and the rest, left as they are. With their ASCII stand-ins (`stand_in`,
    path_roles.py) the runs may be non-ASCII: they are sorted by the stand-ins."""
    kinds = _RE.DENSE_LINE.findall("\n".join(runs if stand_in is None else stand_in) + "\n")
    if len(kinds) != len(runs):  # pragma: no cover - one match per line, by construction
        return _canonical_many(runs)
    # a whole token is given without its newline, another run that may change with it
    ends = list(map(str.endswith, kinds, repeat("\n")))
    whole = list(compress(range(len(runs)), map(lt, ends, map(bool, kinds))))
    other = list(compress(range(len(runs)), ends))
    del kinds, ends
    out = runs.copy()
    if whole:
        _put(out, whole, _canonical_paths(list(map(runs.__getitem__, whole))))
    if other:
        _put(out, other, _canonical_many(list(map(runs.__getitem__, other)),
                                         None if stand_in is None else list(map(stand_in.__getitem__, other))))
    return out


def _canonical_dense_runs(text: str) -> str:
    """`canonical_path` of a (non-ASCII) text dense with paths: split once at its token
    boundaries, the runs that may change found by one pass over them all, canonicalised together
    (`_canonical_many`), and put back between the untouched stretches of the text."""
    runs = _RE.TOKEN_BOUNDARY.split(text)
    changing = list(compress(range(len(runs)), map(_RE.RUN_MAY_CHANGE.match, runs)))
    if not changing:
        return text
    # run i starts after the runs before it and one boundary character each
    starts = list(accumulate(map(len, runs), initial=0))
    pieces = []
    done = 0
    for i, canonical in zip(changing, _canonical_many([runs[i] for i in changing])):
        start = starts[i] + i
        pieces.append(text[done:start])
        pieces.append(canonical)
        done = start + len(runs[i])
    pieces.append(text[done:])
    return "".join(pieces)


def dense_with_separators(text: str) -> bool:
    """More than one slash or backslash in DENSE_PATHS characters (`_canonical_dense`)."""
    return (text.count("/") + text.count("\\")) * DENSE_PATHS > len(text)


@memo_large
def canonical_path(text: str) -> str:
    """Canonicalise every path-like token: file:///etc//passwd, //etc/passwd, /etc/../etc/passwd,
    /etc/./passwd and \\etc\\passwd all become /etc/passwd. Idempotent."""
    if len(text) > DENSE_MIN and dense_with_separators(text):
        return _canonical_dense(text)
    pieces = []
    done = 0
    for start, end, canonical in _canonical_runs(text):
        pieces.append(text[done:start])
        pieces.append(canonical)
        done = end
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def path_changes(text: str) -> bool:
    """canonical_path(text) != text, stopping at the first change (a large text: its kept
    canonical form, textmemo.memo_large)."""
    if len(text) >= MEMO_MIN:
        return canonical_path(text) != text
    return any(canonical != text[start:end] for start, end, canonical in _canonical_runs(text))


# Every `re` pattern of this module, compiled on first use (lazyre): a check of a clean episode uses
# one or two of them, and compiling all at import was half of this module's import time.
_RE = Patterns(**{name[1:-5]: spec for name, spec in list(globals().items()) if name.endswith("_SPEC")})
