"""Leak and collision tests: does a token or a scoring signal reappear in what the agent receives?

- `leaks(token, text)`: a canary occurs in a text under any normalisation or encoding (DESIGN,
  "Reading the note" 4-5).
- `collides(signal, text)`: a text signal (substring/regex) matches a text or a derived form of it,
  or partially overlaps it (point 2).
- `tool_call_collisions(signal, tools)` (signals.py): a tool_call signal's argument value is one
  the harness fills in itself: a default, const or one-value enum (point 3).
- `first_leak(token, texts)`, `first_collision(signal, texts)`: the first of many texts (an
  episode's surfaces) that a token leaks into or a signal collides with, as if each text were
  tested in order, but in one pass over all the texts for the common case (joined.py);
  witnesses.py collects and ranks the witnesses of many texts the same way.
- `regex_search` (regexes.py): bounded-time regex search; a regex that cannot be settled raises
  `RegexUnknown`, which the rules treat as unknown (fail closed).

Texts are searched through `normalize.forms`; the forms of a text are cached (texts are reused
across many tokens and signals), as are the needles derived from a token. The forms of a text
too large to keep them are derived again, one at a time, for each search (`StreamedForms`):
complete either way. A form that cannot be derived within a limit (decoding.LimitUnknown) makes
a search that finds nothing else unknown: it raises LimitUnknown, which the built-ins turn into
an explained reject.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.errors import EvaluationError
from litmus_rules.domain.formcache import (  # noqa: F401 - re-exported: part of this module's API
    Forms,
    StreamedForms,
    answer,
    text_forms,
)
from litmus_rules.domain.joined import first_match
from litmus_rules.domain.probes import EVERY_TEXT, KEY_FORM, PagedPattern, Probe
from litmus_rules.domain.normalize import (
    CASEFOLDED_KEYS,
    KEYS,
    Form,
    Undecodable,
    blank,
    distinct_forms,
    encoded_forms,
)
from litmus_rules.lang.records import record
from litmus_rules.domain.partial import COMMON_WORD_ZIPF, _shares_gram, grams, overlap_in
from litmus_rules.domain.regexes import (  # noqa: F401 - re-exported: part of this module's API
    MAX_PATTERN_LEN,
    REGEX_TIMEOUT,
    RegexUnknown,
    _compile,
    budget_scope,
    _flag_prefix,
    _regex_literals,
    joinable,
    regex_literals,
    regex_absent,
    regex_probe,
    regex_probe_on,
    regex_search,
)
from litmus_rules.domain.signals import (  # noqa: F401 - re-exported: part of this module's API
    Signal,
    _is_ignorecase,
    _text_signal,
    tool_call_collisions,
)

MATCHED_MAX = 120


@record
class Witness:
    """Where and how a match was found: `offset` is into the text derived by `transform`."""

    transform: str
    offset: int
    matched: str
    kind: str = "full"  # "full": the signal or token itself; "partial": a distinctive shared text

    def to_fact(self) -> dict[str, Any]:
        return {"transform": self.transform, "offset": self.offset, "matched": self.matched,
                "kind": self.kind}

    def rank(self, injected: bool) -> int:
        """How strong a witness this is, 1 (strongest) to 5 (DESIGN, "Reading the note" 2):
        1 verbatim in an injected surface, 2 decoded or normalised in an injected surface,
        3 verbatim elsewhere, 4 decoded elsewhere, 5 partial."""
        if self.kind == "partial":
            return 5
        return (1 if self.transform == "raw" else 2) + (0 if injected else 2)


def _clip(s: str) -> str:
    return s if len(s) <= MATCHED_MAX else s[: MATCHED_MAX - 1] + "…"


def _name(form: str, label: str) -> str:
    if not label:
        return form
    return label if form == "raw" else f"{form} > {label}"


# --- searching forms ---------------------------------------------------------------------------


_NEEDLE = operator.itemgetter(1)  # of a (label, needle) pair


@functools.lru_cache(maxsize=512)  # tokens are mostly per-episode canaries: a small cache suffices
def _needles(token: str, key: str, transposed: bool = False) -> tuple[tuple[str, str], ...]:
    """(label, needle) pairs to look for in a form with this key; label "" = the plain token.
    `transposed` (a leak, not a collision): the token backwards and in ROT13 too (`_transposed`)."""
    fn = KEYS[key]
    needle = fn(token)
    if key == "skeleton-casefold":
        # "I" and "i" have different skeletons ("l" vs "i"); try the token in both cases so a
        # lower-case homoglyph of an upper-case token is still found.
        return tuple(distinct_forms([("", needle), ("", fn(token.lower())), ("", fn(token.upper()))]))
    more = _transposed(needle) if transposed and key in ("raw", "normalised") else []
    if key == "raw":
        return tuple(distinct_forms([("", needle), *encoded_forms(token), *more]))
    return tuple(distinct_forms([("", needle), *more]))


# A token this long or longer is looked for backwards and in ROT13 too, when leaked (a canary the
# payload spells so is one the agent can derive); a shorter one would be found by chance.
TRANSPOSED_MIN = 8
_ROT13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                       "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")


def _transposed(needle: str) -> list[tuple[str, str]]:
    if len(needle.strip()) < TRANSPOSED_MIN:
        return []
    return [("reversed token", needle[::-1]), ("rot13 token", needle.translate(_ROT13))]


@functools.lru_cache(maxsize=4096)
def _plan(value: str, views: tuple[tuple[str, str], ...], casefold_ok: bool,
          transposed: bool = False) -> tuple[tuple[str, str], ...]:
    """(witness name, needle) pairs to try on a form with these views, first match wins.

    Forms of different texts share view tuples (every ASCII text has the same ones), so the
    plan is computed once per token and view shape rather than per text.
    """
    plan: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, key in views:
        if not casefold_ok and key in CASEFOLDED_KEYS:
            continue
        for label, needle in _needles(value, key, transposed):
            if needle not in seen:
                seen.add(needle)
                plan.append((_name(name, label), needle))
    return tuple(plan)


def _unknown(undecodable: Undecodable) -> LimitUnknown:
    return LimitUnknown(f"its {undecodable.name} form is unknown: {undecodable.reason}")


def _find(value: str, derived: Iterable[Form | Undecodable], *, casefold_ok: bool,
          missed: list[Undecodable] | None = None, transposed: bool = False) -> Witness | None:
    """The first match of `value` in the forms. A form that could not be derived
    (Undecodable) makes "no match" unknown: LimitUnknown is raised then, or, given a `missed`
    list, the form is added to it (the caller settles)."""
    unsettled: list[Undecodable] = [] if missed is None else missed
    for form in derived:
        if form.__class__ is Undecodable:
            unsettled.append(form)  # type: ignore[arg-type]
            continue
        haystack = form.text  # type: ignore[union-attr]
        for name, needle in _plan(value, form.views, casefold_ok, transposed):  # type: ignore[union-attr]
            i = haystack.find(needle)
            if i >= 0:
                return Witness(name, i, _clip(haystack[i : i + len(needle)]))
    if unsettled and missed is None:
        raise _unknown(unsettled[0])
    return None


def _require_text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise EvaluationError(f"{what} expects text, got {type(text).__name__}")
    return text


def leaks(token: str, text: str) -> Witness | None:
    """Does `token` occur in `text` under any normalisation or encoding?

    Both sides are normalised the same way (case, format characters, unicode tags, NFKC,
    confusables), every decoded form of the text is searched (JSON/HTML/percent escapes, base64,
    hex, path canonicalisation), and encoded forms of the token are searched in the raw text; a
    token of 8+ characters is looked for backwards and in ROT13 too (raw and normalised forms).
    A token that is empty or only whitespace or invisible characters (after normalisation)
    leaks nowhere: it returns None, since it would be found in almost any text (the rules'
    `leak` and `leaks` built-ins treat such a token as unknown: builtins._visible_token).
    Raises LimitUnknown when it is not found and a form of the text could not be derived.
    """
    _require_text(token, "leaks()")
    _require_text(text, "leaks()")
    if blank(token):
        return None
    return _leak_in(token, text)


def _leak_in(token: str, text: str) -> Witness | None:
    return answer(("leak", token), text, text_forms(text), lambda derived: _leak_in_forms(token, text, derived))


# A text up to JOINED_TEXT_MAX long with JOINED_FORMS_MIN forms or more is first looked at with
# its forms joined (`_absent`, `_collision_absent`): a search's fixed cost is most of what a short
# form costs. A longer text's forms are searched one by one (the join would copy them all, and be
# searched again wherever it finds something), and so are a plain text's one to three forms (the
# needles of every view key would cost more than those of the few it holds).
JOINED_TEXT_MAX = 1 << 12
JOINED_FORMS_MIN = 6


def _joined_look(text: str, derived: Forms) -> bool:
    return len(text) <= JOINED_TEXT_MAX and derived.__class__ is tuple and len(derived) >= JOINED_FORMS_MIN


def _leak_in_forms(token: str, text: str, derived: Forms) -> Witness | None:
    # a short text's forms all at once first: most tokens are in none of them
    if _joined_look(text, derived) and _absent(_leak_needles(token), _joined(derived)):
        _raise_if_undecodable(derived)
        return None
    return _find(token, derived, casefold_ok=True, transposed=True)


@functools.lru_cache(maxsize=1024)
def _leak_needles(token: str) -> tuple[str, ...]:
    """Every needle `_find(token, ..., casefold_ok=True, transposed=True)` looks for, in any view key."""
    return tuple(dict.fromkeys(needle for key in KEYS for _, needle in _needles(token, key, True)))


def _joined(derived: Iterable[Form | Undecodable]) -> str:
    """The forms' texts joined by NUL: whatever a search finds in one form is in the join."""
    return "\0".join([form.text for form in derived if isinstance(form, Form)])


def _absent(needles: tuple[str, ...], joined: str) -> bool:
    """Whether none of `needles` is in any of the forms `joined` holds (`_joined`)."""
    return not any(map(joined.__contains__, needles))


def _raise_if_undecodable(derived: Iterable[Form | Undecodable]) -> None:
    """A search that finds nothing in the forms is unknown (LimitUnknown) where one of them
    could not be derived, as `_find` and `_collision_in` settle it."""
    for form in derived:
        if isinstance(form, Undecodable):
            raise _unknown(form)


# --- collisions --------------------------------------------------------------------------------

# Views whose tokens are compared with a signal's literal text, by case sensitivity.
_OVERLAP_KEYS = {
    True: ("normalised", "path-casefold"),
    False: ("raw", "format", "tags", "nfkc", "path"),
}


@functools.lru_cache(maxsize=4096)
def _overlap_plan(literals: tuple[str, ...], views: tuple[tuple[str, str], ...], ignorecase: bool,
                  min_len: int) -> tuple[tuple[str, str], ...]:
    """(witness label, literal as that view's key normalises it) pairs for a form's views."""
    keys = _OVERLAP_KEYS[ignorecase]
    plan: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, key in views:
        if key not in keys:
            continue
        label = "partial overlap" if name in ("raw", "normalised") else f"partial overlap ({name})"
        for literal in literals:
            lit = KEYS[key](literal)
            if len(lit) >= min_len and lit not in seen:
                seen.add(lit)
                plan.append((label, lit))
    return tuple(plan)


def _partial_overlap(literals: tuple[str, ...], derived: Iterable[Form | Undecodable], min_len: int,
                     ignorecase: bool, common_zipf: float) -> Witness | None:
    for form in derived:
        if form.__class__ is Undecodable:
            continue
        for label, lit in _overlap_plan(literals, form.views, ignorecase, min_len):  # type: ignore[union-attr]
            hit = overlap_in(lit, form.text, min_len, common_zipf)  # type: ignore[union-attr]
            if hit is not None:
                return Witness(label, hit[1], _clip(hit[0]), "partial")
    return None


def collides(signal: Mapping[str, Any] | Signal, text: str, min_len: int = 6,
             common_zipf: float = COMMON_WORD_ZIPF) -> Witness | None:
    """Does a text signal (substring/regex) collide with `text`? tool_call signals: None.

    (a) Self-application: the signal matches the text or a derived form of it. Case-sensitive
        signals are not searched in case-folded forms; "ignorecase" ones are searched in all.
    (b) Partial overlap: a token of the (normalised) text of at least `min_len` characters
        occurs inside the signal's literal text, or that literal (at least `min_len` characters)
        occurs inside a token, and the text they share is distinctive (partial.py: identifier-
        shaped, two or more words, or a word whose Zipf frequency is at most `common_zipf`).
        Compared in normalised (case-folded) forms for "ignorecase" signals, in case-preserving
        forms otherwise. For regexes the literal text is `regex_literals(pattern)`: the
        literal runs every match contains.
    An empty substring matches everything and so collides with every text.
    Raises RegexUnknown for a regex that cannot be evaluated in bounded time, LimitUnknown when
    nothing is found and a form of the text could not be derived.
    """
    kind, value, flags = _text_signal(signal)
    _require_text(text, "collides()")
    if kind == "tool_call":
        return None
    return _collision(kind, value, flags, min_len, common_zipf, text)


def _collision(kind: str, value: str, flags: tuple[str, ...], min_len: int, common_zipf: float,
               text: str) -> Witness | None:
    return answer(("collision", kind, value, flags, min_len, common_zipf), text, text_forms(text),
                   lambda derived: _collision_in(kind, value, flags, min_len, common_zipf, text, derived))


def _collision_in(kind: str, value: str, flags: tuple[str, ...], min_len: int, common_zipf: float,
                  text: str, derived: Forms) -> Witness | None:
    """(a) self-application in any form, else (b) the first partial overlap, else None (or
    LimitUnknown when a form could not be derived). Streamed forms are derived once: (b) is
    computed along (a), form by form, until (a) succeeds, which gives the same answer."""
    ignorecase = _is_ignorecase(flags)
    if kind == "substring" and value == "":
        return Witness("raw", 0, "")
    one_pass = isinstance(derived, StreamedForms)
    if _joined_look(text, derived) and _collision_absent(kind, value, flags, min_len, derived):
        _raise_if_undecodable(derived)
        return None
    missed: list[Undecodable] = []
    overlap: Witness | None = None
    literals: tuple[str, ...] | None = (value,) if kind == "substring" else None
    ascii_text = text.isascii()
    for form in derived:
        if form.__class__ is Undecodable:
            missed.append(form)  # type: ignore[arg-type]
            continue
        assert isinstance(form, Form)
        hit = (_find(value, (form,), casefold_ok=ignorecase) if kind == "substring"
               else _regex_in_form(value, flags, ignorecase, ascii_text, form))
        if hit is not None:
            return hit
        if one_pass and overlap is None:
            if literals is None:
                literals = _regex_literals(value)
            overlap = _partial_overlap(literals, (form,), min_len, ignorecase, common_zipf)
    if not one_pass:
        overlap = _partial_overlap(literals or _regex_literals(value), derived, min_len, ignorecase,
                                   common_zipf)
    if overlap is None and missed:
        raise _unknown(missed[0])
    return overlap


def _collision_absent(kind: str, value: str, flags: tuple[str, ...], min_len: int,
                      derived: Iterable[Form | Undecodable]) -> bool:
    """Whether `_collision_in` is sure to find neither (a) nor (b) in the forms of a text, by one
    look at them all joined by NUL: a text that is not plain has ~20 forms, each searched on its
    own for every signal, and most signals are in none of them. Each look is a superset of the
    searches of the forms (whatever a search finds in one form is in the join): (a) every needle
    of the substring (`_find`'s, in any view key), or `regexes.regex_absent`; (b) any
    min_len-gram of a literal as an overlap key normalises it (`overlap_in` looks for one first)."""
    plan = _absent_plan(kind, value, flags, min_len)
    if plan is None:
        return False
    needles, literal_grams = plan
    joined = _joined(derived)
    if not _absent(needles, joined):
        return False
    if kind == "regex" and not regex_absent(value, flags, joined):
        return False
    return not _shares_gram(literal_grams, joined, min_len)


@functools.lru_cache(maxsize=1024)
def _absent_plan(kind: str, value: str, flags: tuple[str, ...], min_len: int
                 ) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """(the needles of a substring in every view key it is searched in, the grams of its or the
    regex's literals in every overlap key) for `_collision_absent`; None where one of them
    cannot be made (a limit: the forms are then searched one by one, which meets it as before)."""
    ignorecase = _is_ignorecase(flags)
    try:
        needles: dict[str, None] = {}
        if kind == "substring":
            for key in KEYS:
                if ignorecase or key not in CASEFOLDED_KEYS:
                    needles.update(dict.fromkeys(map(_NEEDLE, _needles(value, key))))
            literals: tuple[str, ...] = (value,)
        else:
            literals = _regex_literals(value)
        found: set[str] = set()
        for key in _OVERLAP_KEYS[ignorecase]:
            for literal in literals:
                lit = KEYS[key](literal)
                if len(lit) >= min_len:
                    found.update(grams(lit, min_len)[1])
    except (LimitUnknown, RegexUnknown):
        return None
    return tuple(needles), frozenset(found)


def _regex_in_form(value: str, flags: tuple[str, ...], ignorecase: bool, ascii_text: bool,
                   form: Form) -> Witness | None:
    name = None
    for view_name, key in form.views:
        if key not in CASEFOLDED_KEYS:
            name = view_name
            break
        # An ignorecase regex finds the same in a lower-cased ASCII text as in the
        # original: skip those forms (common, and each search has a fixed cost).
        if ignorecase and not (ascii_text and key in ("casefold", "normalised")):
            name = view_name
            break
    if name is None:
        return None
    found = regex_search(value, form.text, flags)
    return Witness(name, found[0], _clip(found[1])) if found is not None else None


# --- many texts at once ------------------------------------------------------------------------
# `first_leak` and `first_collision` give the answer of testing each text in order, with one pass
# over all the texts (joined.py). Their probes must find every joined text on which the exact
# test succeeds. A form of a text T that holds a view with key K is the text of T's segment, or of
# the segment of one of T's decoder outputs, in the joined form KEY_FORM[K] (joined.py); so a test
# that looks for something in the forms holding some views is matched by a probe that looks for it
# in the joined forms of those views' keys.


@functools.lru_cache(maxsize=1024)
def _leak_probe(token: str) -> Probe:
    # `_find(token, forms, casefold_ok=True, transposed=True)` looks for `_needles(token, key,
    # True)` in each form, for the key of each of its views (`_plan`).
    literals: dict[str, set[str]] = {}
    for key in KEYS:
        literals.setdefault(KEY_FORM[key], set()).update(map(_NEEDLE, _needles(token, key, True)))
    return Probe.of(literals)


@functools.lru_cache(maxsize=512)
def _collision_probe(kind: str, value: str, flags: tuple[str, ...], min_len: int) -> Probe:
    """A superset of the plain texts `_collision(kind, value, flags, min_len, text)` accepts.

    (a) substring: `_find` with casefold_ok = ignorecase (as for leaks, less the case-folded
        keys unless ignorecase); regex: the pattern in the forms holding a view it is run on (a
        case-preserving one, or any if ignorecase), when `joinable` (then an RE2 match inside
        a text is one at the same place of the join).
    (b) partial overlap: `partial.overlap_in` needs one of the min_len-grams of the literal (as the
        form's view key normalises it, keys of `_OVERLAP_KEYS[ignorecase]`) in the form's text
        (`_shares_gram`).
    """
    ignorecase = _is_ignorecase(flags)
    if (kind == "substring" and value == "") or min_len < 1:
        return EVERY_TEXT
    keys = [key for key in KEYS if ignorecase or key not in CASEFOLDED_KEYS]
    literals: dict[str, set[str]] = {}
    patterns: list[tuple[str, Any]] = []
    if kind == "substring":
        for key in keys:
            literals.setdefault(KEY_FORM[key], set()).update(map(_NEEDLE, _needles(value, key)))
        overlap_literals: tuple[str, ...] = (value,)
    else:
        try:
            # a superset of the pattern's matches, anchors dropped: searchable in joined texts
            probe = regex_probe(value, flags)
        except RegexUnknown:
            return EVERY_TEXT  # the error is raised on the first text, as the loop would
        if probe is None:
            return EVERY_TEXT
        # in a join of non-ASCII texts, the probe exact on the pages of its characters
        paged = PagedPattern(probe, functools.partial(regex_probe_on, value, flags))
        patterns = [(form, paged) for form in dict.fromkeys(KEY_FORM[key] for key in keys)]
        overlap_literals = _regex_literals(value)
    for key in _OVERLAP_KEYS[ignorecase]:
        found = literals.setdefault(KEY_FORM[key], set())
        for literal in overlap_literals:
            lit = KEYS[key](literal)
            if len(lit) >= min_len:
                found.update(grams(lit, min_len)[1])
    return Probe.of(literals, patterns)


def _require_texts(texts: Sequence[str], what: str) -> tuple[str, ...]:
    texts = tuple(texts)
    # one C-level pass (an episode has hundreds of texts, asked of per signal and per canary)
    if not all(map(isinstance, texts, itertools.repeat(str))):
        bad = next(text for text in texts if not isinstance(text, str))
        raise EvaluationError(f"{what} expects texts, got {type(bad).__name__}")
    return texts


def first_leak(token: str, texts: Sequence[str]) -> tuple[int, Witness] | None:
    """The first of `texts` that `token` leaks into, and the witness: (index, witness) or None.

    The same answer as `leaks(token, text)` tried on each text in order, in one pass over the
    texts for most of them (see joined.py).
    """
    texts = _require_texts(texts, "leaks()")
    _require_text(token, "leaks()")
    if not texts or blank(token):
        return None
    return first_match(texts, lambda: _leak_probe(token), lambda text: _leak_in(token, text), ("leak", token))


def first_collision(signal: Mapping[str, Any] | Signal, texts: Sequence[str], min_len: int = 6,
                    common_zipf: float = COMMON_WORD_ZIPF) -> tuple[int, Witness] | None:
    """The first of `texts` a text signal collides with, and the witness: (index, witness) or None.

    The same answer as `collides(signal, text, min_len, common_zipf)` tried on each text in
    order, including the RegexUnknown it raises on the first text for a regex that cannot be
    evaluated; in one pass over the texts for substrings and most regexes (see joined.py). No
    texts: None. (The built-in `collision` ranks every witness instead: witnesses.py.)
    """
    texts = _require_texts(texts, "collides()")
    if not texts:
        return None
    with budget_scope():  # one regex's searches over all the texts share its budget
        kind, value, flags = _text_signal(signal)
        if kind == "tool_call":
            return None
        return first_match(texts, lambda: _collision_probe(kind, value, flags, min_len),
                           lambda text: _collision(kind, value, flags, min_len, common_zipf, text),
                           ("collision", kind, value, flags, min_len, common_zipf))
