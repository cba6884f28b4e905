"""The strongest witness: every text a token leaks into or a signal collides with, ranked.

The built-ins `leak(token, surfaces)` and `collision(signal, surfaces, ...)` decide as the loops
`any t in surfaces: leaks(token, t.text)` and `... collides(signal, t.text, ...)` do (true iff
some text is a hit; an error or a limit before the first hit is raised as the loop raises it),
but they name the *strongest* witness, not the first (DESIGN, "Reading the note" 2):

    1 verbatim in an injected surface      2 decoded or normalised in an injected surface
    3 verbatim elsewhere                   4 decoded or normalised elsewhere
    5 partial overlap (an injected surface's first)

and, within a rank, in surface order.

Hits are collected in text order (the one pass of joined.py), past the first hit until a
rank-1 witness is found or WITNESS_LIMIT texts are hits; a limit or a regex that cannot be
settled on a text after the first hit ends the collection (the answer is settled). A clean
episode has no hit, so this costs what the first-hit search costs; only rejects pay for more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from litmus_rules.cache import BoundedCache
from litmus_rules.domain import formcache
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.joined import first_match, first_matches
from litmus_rules.domain.probes import Probe
from litmus_rules.domain.matching import (
    Signal,
    Witness,
    _collision,
    _collision_probe,
    _leak_in,
    _leak_probe,
    _require_text,
    _require_texts,
)
from litmus_rules.domain.normalize import blank
from litmus_rules.domain.partial import COMMON_WORD_ZIPF
from litmus_rules.domain.regexes import RegexUnknown, budget_scope
from litmus_rules.domain.signals import _text_signal

# Texts with a hit collected per search, at most (the first hit and the ones after it, until a
# rank-1 witness). A bound on the search for a better witness, never on the answer.
WITNESS_LIMIT = 64
# Witnesses a reason lists, strongest first.
LISTED_WITNESSES = 5
# At most this many texts holding at most SMALL_CHARS characters in all are tested one by one
# (`_collect_each`), not joined (`_collect_joined`): on the 1.7 KB episodes of bench/e2e.py (2-13
# texts, 140-440 characters) that is a third of the built-ins' cost; on more or larger texts the
# joined pass is cheaper (at 1 KB the realistic episodes of bench/realistic.py got 1% slower).
# Not a limit: either way gives the same answer.
SMALL_TEXTS = 16
SMALL_CHARS = 512
# The answers of the last searches of small texts (`_collect_small`): a memo of a pure function,
# bounded by entries (each holds at most SMALL_CHARS characters of texts); a miss searches again.
SMALL_ANSWERS = 256
_Answers = BoundedCache[tuple[tuple[tuple[int, Witness], ...], tuple[bool, ...]]]
# (the forms cache the answers were derived from, the answers): a new forms cache (one made to
# derive forms afresh, under other limits) starts a new memo
_small: list[Any] = [None, None]


def _small_answers() -> _Answers:
    forms = formcache.forms_cache_in_use()
    if _small[0] is not forms:
        _small[:] = [forms, BoundedCache(SMALL_ANSWERS)]
    return _small[1]  # type: ignore[no-any-return]

Ranked = list[tuple[int, Witness]]


Flags = Sequence[bool] | Callable[[], Sequence[bool]]


def _ranked(hits: Sequence[tuple[int, Witness]], injected: Sequence[bool]) -> Ranked:
    # Within a rank, an injected surface first (partial overlaps: the injected message that
    # names a scored tool before the manifest that lists it), then text order.
    return sorted(hits, key=lambda hit: (hit[1].rank(_flag(injected, hit[0])),
                                         not _flag(injected, hit[0]), hit[0]))


def _flag(injected: Sequence[bool], i: int) -> bool:
    return i < len(injected) and injected[i] is True


def _injected(injected: Flags) -> tuple[bool, ...]:
    return tuple(x is True for x in (injected() if callable(injected) else injected))


def _collect(texts: tuple[str, ...], probe: Callable[[], Probe], test: Callable[[str], Witness | None],
             key: tuple[Any, ...], injected: Flags, tolerated: tuple[type[BaseException], ...]) -> Ranked:
    """The ranked hits: a few small texts one by one, more in one joined pass (same answer)."""
    if len(texts) <= SMALL_TEXTS and sum(map(len, texts)) <= SMALL_CHARS:
        return _collect_small(texts, test, key, injected, tolerated)
    return _collect_joined(texts, probe, test, key, injected, tolerated)


def _collect_small(texts: tuple[str, ...], test: Callable[[str], Witness | None], key: tuple[Any, ...],
                   injected: Flags, tolerated: tuple[type[BaseException], ...]) -> Ranked:
    """`_collect_each`, remembered (as the joined pass remembers its answers with its haystack):
    a rule's message and trace ask its condition's question again, and episodes made from one
    template ask it of the same texts. `key` names the test (joined.first_match), so the hits
    are a function of (key, texts) and, once there is one, of the injected flags (where the
    search stopped); a search that raised is not remembered."""
    memo = (key, texts, WITNESS_LIMIT)
    answers = _small_answers()
    held = answers.get(memo)
    if held is not None:
        hits, inj = held
        if not hits:
            return []
        if _injected(injected) == inj:
            return _ranked(hits, inj)
    hits, inj = _collect_each(texts, test, injected, tolerated)
    answers.put(memo, (hits, inj))
    return _ranked(hits, inj) if hits else []


def _collect_joined(texts: tuple[str, ...], probe: Callable[[], Probe], test: Callable[[str], Witness | None],
                    key: tuple[Any, ...], injected: Flags, tolerated: tuple[type[BaseException], ...]) -> Ranked:
    """The first hit as `first_match` finds it (a clean episode's whole cost, with the same
    cached answer), then, on a hit, the ranked collection."""
    if first_match(texts, probe, test, key) is None:
        return []
    inj = _injected(injected)
    limit = WITNESS_LIMIT

    def enough(i: int, w: Witness) -> bool:
        return w.rank(_flag(inj, i)) == 1

    hits = first_matches(texts, probe, test, ("ranked", *key, inj, limit), enough=enough, limit=limit,
                         tolerated=tolerated, first_key=key)
    return _ranked(hits, inj)


def _collect_each(texts: tuple[str, ...], test: Callable[[str], Witness | None], injected: Flags,
                  tolerated: tuple[type[BaseException], ...]) -> tuple[tuple[tuple[int, Witness], ...], tuple[bool, ...]]:
    """The hits `_collect_joined` ranks (and the injected flags read, when there is one), by
    testing each text in order: the loop the joined pass stands for (joined.py), which for a
    few short texts costs less than joining them (their forms are cached, text by text). As
    there, an error before the first hit is raised (a LimitUnknown naming its text's `index`),
    one of a `tolerated` type after it ends the collection."""
    hits: list[tuple[int, Witness]] = []
    inj: tuple[bool, ...] = ()
    for i, text in enumerate(texts):
        try:
            found = test(text)
        except Exception as exc:
            if hits and isinstance(exc, tolerated):
                break
            if isinstance(exc, LimitUnknown):
                exc.index = i  # type: ignore[attr-defined]  # which text: the built-ins name its origin
            raise
        if found is None:
            continue
        if not hits:
            inj = _injected(injected)
        hits.append((i, found))
        if found.rank(_flag(inj, i)) == 1 or len(hits) >= WITNESS_LIMIT:
            break
    return tuple(hits), inj


def ranked_leaks(token: str, texts: Sequence[str], injected: Flags = ()) -> Ranked:
    """The texts `token` leaks into (index, witness), strongest witness first; [] when none.
    `injected[i]` (or `injected()[i]`, asked only on a hit): text i is an injected surface.
    Raised (LimitUnknown) as `first_leak` raises."""
    texts = _require_texts(texts, "leaks()")
    _require_text(token, "leaks()")
    if not texts or blank(token):
        return []
    return _collect(texts, lambda: _leak_probe(token), lambda text: _leak_in(token, text), ("leak", token),
                    injected, (LimitUnknown,))


def ranked_collisions(signal: Mapping[str, Any] | Signal, texts: Sequence[str], min_len: int = 6,
                      injected: Flags = (), common_zipf: float = COMMON_WORD_ZIPF) -> Ranked:
    """The texts a text signal collides with (index, witness), strongest witness first; [] when
    none (or a tool_call signal). Raised (RegexUnknown, LimitUnknown) as `first_collision` raises."""
    texts = _require_texts(texts, "collides()")
    if not texts:
        return []
    with budget_scope():  # one regex's searches over all the texts share its budget
        kind, value, flags = _text_signal(signal)
        if kind == "tool_call":
            return []
        return _collect(texts, lambda: _collision_probe(kind, value, flags, min_len),
                        lambda text: _collision(kind, value, flags, min_len, common_zipf, text),
                        ("collision", kind, value, flags, min_len, common_zipf), injected,
                        (LimitUnknown, RegexUnknown))


def surface_fact(ranked: Ranked, owners: Sequence[Mapping[str, Any]], injected: Sequence[bool]) -> dict[str, Any]:
    """What `leak` and `collision` return for ranked hits (`owners[i]`: text i's surface): the
    strongest witness with its surface's `origin` and `injected`, and `witnesses`, up to
    LISTED_WITNESSES of them, strongest first, each {origin, injected, transform, kind, matched}."""

    def where(i: int) -> dict[str, Any]:
        return {"origin": owners[i].get("origin"), "injected": _flag(injected, i)}

    listed = [{**where(i), "transform": w.transform, "kind": w.kind, "matched": w.matched}
              for i, w in ranked[:LISTED_WITNESSES]]
    index, best = ranked[0]
    return {**best.to_fact(), **where(index), "witnesses": listed}
