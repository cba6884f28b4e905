"""Checking a batch of episodes: streaming, in input order, on one process or several.

Two passes over the inputs. The first reads only ids and canaries: a canary planted by two
episodes is a batch fact (`shared_canaries`) that a rule may need before any verdict is given. The
second evaluates. Each pass hands out *units* (a file, or a 1 MiB slice of a JSONL file) that a
worker reads by itself, so parsing is spread over the processes too and no episode is pickled.
Results come back in input order; only the verdicts of the units in flight are held in memory.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections import deque
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import attrs

from litmus_rules.engine import RuleSet, load_rules
from litmus_rules.errors import FactsError
from litmus_rules.load import LoadedEpisode, Unit, iter_unit, plan_units
from litmus_rules.render import render_verdict
from litmus_rules.verdict import ERROR, Reason, Verdict

T = TypeVar("T")

# Below this much input a pool costs more (start-up, loading the rules per process) than it saves.
MIN_BYTES_FOR_POOL = 2 * 2**20


@attrs.frozen
class RulesSpec:
    """How a worker process loads the same ruleset the parent loaded."""

    path: str | None
    params: Mapping[str, Any]
    explain: str
    want_text: bool


@attrs.frozen
class Outcome:
    """One episode's verdict, rendered in the worker: what the CLI writes and counts."""

    id: str | None
    verdict: str
    rules: tuple[str, ...]  # rules that rejected it
    classification: str | None
    json: dict[str, Any]
    text: str | None  # the text rendering of its trace, when the output is text


def _outcome(v: Verdict, spec: RulesSpec) -> Outcome:
    text = render_verdict(v, spec.explain) if spec.want_text else None
    return Outcome(v.id, v.verdict, tuple(r.rule for r in v.reasons), v.classification, v.to_json(), text)


def _error(ruleset: RuleSet, error: FactsError, ident: str | None, location: str, spec: RulesSpec) -> Outcome:
    v = Verdict(id=ident, verdict=ERROR, reasons=(Reason("input", str(error), "invalid_input"),),
                ruleset=ruleset.info, source=location)
    return _outcome(v, spec)


def _location(loaded: LoadedEpisode) -> str:
    return f"{loaded.source}:{loaded.line}" if loaded.line else str(loaded.source)


# ---- the work of one unit (in a worker, or in-process) ------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(spec: RulesSpec) -> None:
    _WORKER["spec"] = spec
    _WORKER["rules"] = load_rules(spec.path, dict(spec.params))


def _canaries_of(unit: Unit | LoadedEpisode) -> list[tuple[str, list[str]]]:
    """(id, canary values) of every document: parsed, not validated (the second pass validates; an
    invalid document's canaries still count as planted in the batch)."""
    out = []
    for loaded in iter_unit(unit, check=False):
        if loaded.data is None:
            continue
        ident, canaries = loaded.data.get("id"), loaded.data.get("canaries")
        if isinstance(ident, str) and isinstance(canaries, list):
            values = [c.get("value") for c in canaries if isinstance(c, dict)]
            out.append((ident, [v for v in values if isinstance(v, str)]))
    return out


def _evaluate_unit(
    unit: Unit | LoadedEpisode,
    shared: Mapping[str, list[str]],
    ruleset: RuleSet | None = None,
    spec: RulesSpec | None = None,
) -> list[tuple[Outcome, str | None]]:
    """(outcome, the episode's id when it was valid) for every document of the unit. In a worker
    process the ruleset and spec are the ones `_init_worker` loaded."""
    spec = spec if spec is not None else _WORKER["spec"]
    ruleset = ruleset if ruleset is not None else _WORKER["rules"]
    assert spec is not None and ruleset is not None
    batch = {"canary_owners": shared}
    out: list[tuple[Outcome, str | None]] = []
    for loaded in iter_unit(unit):
        location = _location(loaded)
        if loaded.error is not None:
            out.append((_error(ruleset, loaded.error, loaded.id, location, spec), None))
            continue
        assert loaded.data is not None
        verdict = ruleset.evaluate(loaded.data, batch=batch, explain=spec.explain, validate=False, source=location)
        out.append((_outcome(verdict, spec), loaded.data["id"]))
    return out


# ---- running units in order ----------------------------------------------------------------------


def _ordered(
    pool: cf.Executor | None, window: int, fn: Callable[..., T], units: Sequence[Any], *args: Any
) -> Iterator[T]:
    """fn(unit, *args) for every unit, results in unit order, at most `window` units in flight."""
    if pool is None:
        for unit in units:
            yield fn(unit, *args)
        return
    pending: deque[cf.Future[T]] = deque()
    todo = iter(units)
    for unit in todo:
        pending.append(pool.submit(fn, unit, *args))
        if len(pending) >= window:
            break
    while pending:
        result = pending.popleft().result()
        for unit in todo:
            pending.append(pool.submit(fn, unit, *args))
            break
        yield result


def check_inputs(
    ruleset: RuleSet,
    spec: RulesSpec,
    inputs: Sequence[str],
    jobs: int | None = None,
    stdin_path: str | None = None,
) -> Iterator[Outcome]:
    """Every episode of the inputs, decided, in input order. `jobs=None` picks by batch size."""
    units = plan_units(inputs, stdin_path=stdin_path)
    if jobs is None:
        big = len(units) > 1 and _input_bytes(units) >= MIN_BYTES_FOR_POOL
        jobs = (os.cpu_count() or 1) if big else 1
    workers = max(1, jobs)
    pool = cf.ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(spec,)) if workers > 1 else None
    window = 2 * workers
    # In-process, the parent's ruleset is passed along; workers use the one they loaded.
    local = () if pool is not None else (ruleset, spec)
    try:
        owners: dict[str, list[str]] = {}
        if ruleset.reads("shared_canaries"):
            for pairs in _ordered(pool, window, _canaries_of, units):
                for owner, values in pairs:
                    for value in values:
                        ids = owners.setdefault(value, [])
                        if owner not in ids:
                            ids.append(owner)
        shared = {value: ids for value, ids in owners.items() if len(ids) > 1}
        del owners
        seen: dict[str, str] = {}
        for results in _ordered(pool, window, _evaluate_unit, units, shared, *local):
            for outcome, ident in results:
                if ident is None:
                    yield outcome
                elif ident in seen:
                    location = outcome.json.get("source") or ""
                    dup = FactsError(
                        f"duplicate id `{ident}` (first seen at {seen[ident]}); ids must be unique in a batch",
                        source=location,
                        pointer="/id",
                    )
                    yield _error(ruleset, dup, ident, location, spec)
                else:
                    seen[ident] = outcome.json.get("source") or ""
                    yield outcome
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _input_bytes(units: Sequence[Unit | LoadedEpisode]) -> int:
    total = 0
    for unit in units:
        if isinstance(unit, Unit):
            try:
                total += (unit.stop - unit.start) if unit.stop is not None else os.path.getsize(unit.path)
            except OSError:
                pass
    return total

