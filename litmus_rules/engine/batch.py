"""Checking a batch of episodes: streaming, in input order, on one process or several.

Two passes over the inputs. The first reads only ids and canaries: a canary planted by two
episodes is a batch fact (`shared_canaries`) that a rule may need before any verdict is given. The
second evaluates. Each pass hands out *units* (a file, or a slice of a JSONL file of at most
`UNIT_DOCS` documents and about `JSONL_CHUNK` bytes) that a worker reads by itself, so parsing is
spread over the processes too and no episode is pickled. Results come back in input order; only
the verdicts of the units in flight (two per worker) are held in memory, and in one process only
the episode being decided: memory stays flat whatever the batch size.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from litmus_rules.engine.ruleset import RuleSet, load_rules
from litmus_rules import diagnostics
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import FactsError, describe_fault
from litmus_rules.interrupts import deferred
from litmus_rules.io.inputs import DUPLICATE_ID
from litmus_rules.io.load import LoadedEpisode, Unit, iter_unit, plan_units
from litmus_rules.engine.verdict import ERROR, Reason, Verdict
from litmus_rules.lang.records import record
from litmus_rules.lang.trace_memo import TraceMemo

if TYPE_CHECKING:  # imported where a pool is made: a run in one process never needs it
    import concurrent.futures as cf

T = TypeVar("T")

# Below this much input a pool costs more (start-up, loading the rules per process) than it saves.
MIN_BYTES_FOR_POOL = 2 * 2**20


@record
class RulesSpec:
    """How a worker process loads the same ruleset the parent loaded."""

    path: str | None
    params: Mapping[str, Any]
    explain: str
    want_text: bool
    # How a verdict becomes text in the worker (`render.text.render_verdict`, given by the caller:
    # the engine sits below the renderers). A module-level function, so that it pickles.
    render_text: Callable[[Verdict, str], str] | None = None
    # False: verdict JSON without traces (a tenth of the size; what a report needs)
    with_traces: bool = True


@record
class Outcome:
    """One episode's verdict, rendered in the worker: what the CLI writes and counts."""

    id: str | None
    verdict: str
    rules: tuple[str, ...]  # rules that rejected it
    classification: str | None
    json: dict[str, Any]
    text: str | None  # the text rendering of its trace, when the output is text


INTERNAL_FAULT = code_for("internal-fault")  # a fault inside the checker while reading, evaluating or rendering one episode
WORKER_DIED = code_for("worker-died")  # the worker process checking a unit died (killed, out of memory, os._exit)
_MESSAGE_LIMIT = 300  # an exception's text can quote the input: keep ERROR messages readable


# Repeated traces, shared between the outcomes' JSON (lang/trace_memo.py): each outcome's JSON is
# written and dropped. One per process: a worker's outcomes cross to the writer pickled.
_SHARED = TraceMemo()


def _outcome(v: Verdict, spec: RulesSpec) -> Outcome:
    text = spec.render_text(v, spec.explain) if spec.want_text and spec.render_text is not None else None
    return Outcome(v.id, v.verdict, tuple(r.rule for r in v.reasons), v.classification,
                   v.to_json(spec.with_traces, shared=_SHARED), text)


def _error(ruleset: RuleSet, error: FactsError, ident: str | None, location: str, spec: RulesSpec,
           checked: str | None = None) -> Outcome:
    reason = Reason("input", str(error), "invalid_input", code=error.code)
    verdict = Verdict(id=ident, verdict=ERROR, reasons=(reason,), ruleset=ruleset.info, source=location, checked=checked)
    return _outcome(verdict, spec)


def _fault(ruleset: RuleSet, spec: RulesSpec, ident: str | None, location: str, what: str, code: str,
           checked: str | None = None) -> Outcome:
    """An ERROR that is the checker's fault, not the input's: kind `evaluation_error`."""
    message = f"{location}: {diagnostics.inline(code, what)}"
    if len(message) > _MESSAGE_LIMIT:
        message = message[: _MESSAGE_LIMIT - 1] + "…"
    reason = Reason("input", message, "evaluation_error", code=code)
    verdict = Verdict(id=ident, verdict=ERROR, reasons=(reason,), ruleset=ruleset.info, source=location, checked=checked)
    try:
        return _outcome(verdict, spec)
    except Exception:  # noqa: BLE001 -- what failed to render the episode's verdict fails on this one too
        text = f"ERROR {ident or '<no id>'}  ({location})\n  x input: {message}" if spec.want_text else None
        return Outcome(ident, ERROR, ("input",), None, verdict.to_json(spec.with_traces), text)


def _exception(exc: BaseException, during: str) -> str:
    return diagnostics.message(INTERNAL_FAULT, during=during, detail=describe_fault(exc))


def _location(loaded: LoadedEpisode) -> str:
    return f"{loaded.source}:{loaded.line}" if loaded.line else str(loaded.source)


def _where(unit: Unit | LoadedEpisode, loaded: LoadedEpisode) -> tuple[str, str | None]:
    """(a verdict's `source`, its `checked`): a preflighted copy's verdict names the file it was made
    from, at the same document, and the copy it read as `checked` (None when they are one file)."""
    location = _location(loaded)
    origin = unit.origin if isinstance(unit, Unit) else None
    if origin is None:
        return location, None
    return origin.location(loaded.index, loaded.line), location


def _unit_name(unit: Unit | LoadedEpisode) -> str:
    return unit.location() if isinstance(unit, Unit) else _location(unit)


# ---- the work of one unit (in a worker, or in-process) ------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(spec: RulesSpec) -> None:
    # The parent decides when to stop: a terminal's Ctrl-C reaches the whole process group, and
    # a worker must not turn it into a traceback of its own. A worker also dies with its parent
    # (Linux), so a parent killed outright leaves no orphan holding its stdout.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    _WORKER["spec"] = spec
    _WORKER["rules"] = load_rules(spec.path, dict(spec.params))


def _die_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pool's own pipes end the worker later
        pass


def _canaries_of(unit: Unit | LoadedEpisode) -> list[tuple[str, list[str]]]:
    """(id, canary values) of every document: parsed, not validated (the second pass validates; an
    invalid document's canaries still count as planted in the batch). A reader fault ends the unit
    here quietly: the second pass reads it again and reports it."""
    out = []
    try:
        for loaded in iter_unit(unit, check=False):
            if loaded.data is None:
                continue
            ident, canaries = loaded.data.get("id"), loaded.data.get("canaries")
            if isinstance(ident, str) and isinstance(canaries, list):
                values = [c.get("value") for c in canaries if isinstance(c, dict)]
                out.append((ident, [v for v in values if isinstance(v, str)]))
    except Exception:  # noqa: BLE001 -- see the docstring
        pass
    return out


def _evaluate_unit(
    unit: Unit | LoadedEpisode,
    shared: Mapping[str, list[str]],
    ruleset: RuleSet | None = None,
    spec: RulesSpec | None = None,
) -> list[tuple[Outcome, str | None]]:
    """(outcome, the episode's id when it was valid) for every document of the unit. In a worker
    process the ruleset and spec are the ones `_init_worker` loaded.

    The failure boundary of one episode: whatever reading, evaluating or rendering it raises
    (RecursionError and MemoryError included) becomes that episode's ERROR and the next one is
    read. A fault of the reader itself ends the unit (a parser cannot resume) with one ERROR."""
    return list(_iter_evaluated(unit, shared, ruleset, spec))


def _iter_evaluated(
    unit: Unit | LoadedEpisode,
    shared: Mapping[str, list[str]],
    ruleset: RuleSet | None = None,
    spec: RulesSpec | None = None,
) -> Iterator[tuple[Outcome, str | None]]:
    """`_evaluate_unit`, one episode at a time: in one process, nothing of a unit is held."""
    spec = spec if spec is not None else _WORKER["spec"]
    ruleset = ruleset if ruleset is not None else _WORKER["rules"]
    assert spec is not None and ruleset is not None
    batch = {"canary_owners": shared}
    # the verdict becomes JSON (and text, when wanted) here and is dropped: record only what they show
    json_traces = None if spec.want_text else spec.with_traces
    docs = iter_unit(unit)
    last: LoadedEpisode | None = None
    while True:
        try:
            loaded = next(docs, None)
        except Exception as exc:  # noqa: BLE001 -- the boundary: a fault in the reader
            where = f"{last.source}, after line {last.line}" if last is not None and last.line else _unit_name(unit)
            yield (_fault(ruleset, spec, None, where, _exception(exc, "reading"), INTERNAL_FAULT), None)
            return
        if loaded is None:
            break
        last = loaded
        location, checked = _where(unit, loaded)
        if loaded.error is not None:
            # an invalid document still takes its id, when it has a readable one: a later
            # document with the same id is a duplicate (DESIGN: a repeat names the first)
            raw_id = loaded.id if isinstance(loaded.id, str) else None
            yield (_error(ruleset, loaded.error, loaded.id, location, spec, checked), raw_id)
            continue
        assert loaded.data is not None
        ident = loaded.data["id"]
        try:
            verdict = ruleset.evaluate(loaded.data, batch=batch, explain=spec.explain, validate=False, source=location,
                                       json_traces=json_traces)
            verdict.checked = checked
        except Exception as exc:  # noqa: BLE001 -- the boundary: whatever the engine does
            yield (_fault(ruleset, spec, ident, location, _exception(exc, "evaluating"), INTERNAL_FAULT, checked), ident)
            continue
        try:
            outcome = _outcome(verdict, spec)
        except Exception as exc:  # noqa: BLE001 -- the boundary: a verdict that does not render
            outcome = _fault(ruleset, spec, ident, location, _exception(exc, "rendering the verdict of"), INTERNAL_FAULT,
                             checked)
        yield outcome, ident


def _dead_unit(
    unit: Unit | LoadedEpisode, shared: Mapping[str, list[str]], ruleset: RuleSet, spec: RulesSpec
) -> list[tuple[Outcome, str | None]]:
    """The ERRORs of a unit whose worker died twice on it: one per document, read (not evaluated)
    here so that each keeps its id and line; one for the whole unit if even that fails."""
    what = diagnostics.message(WORKER_DIED)
    out: list[tuple[Outcome, str | None]] = []
    try:
        for loaded in iter_unit(unit, check=False):
            ident = loaded.data.get("id") if loaded.data is not None else loaded.raw_id
            ident = ident if isinstance(ident, str) else None
            location, checked = _where(unit, loaded)
            out.append((_fault(ruleset, spec, ident, location, what, WORKER_DIED, checked), None))
    except Exception:  # noqa: BLE001 -- fall back to one ERROR for the unit
        out = [(_fault(ruleset, spec, None, _unit_name(unit), what, WORKER_DIED), None)]
    return out or [(_fault(ruleset, spec, None, _unit_name(unit), what, WORKER_DIED), None)]


# ---- running units in order ----------------------------------------------------------------------


# How often a wait for a unit's result looks for a signal received meanwhile (seconds).
RESULT_POLL = 0.2


class _Workers:
    """A process pool that can be replaced when one of its workers dies, and stopped at once.

    Every call into the pool is `deferred()` (interrupts.py): a SIGINT or SIGTERM raised inside the
    pool's code could leave one of its locks held, and stopping the pool would then wait for ever.
    The signal is raised as the call returns; a wait for a result returns every RESULT_POLL seconds
    to let it."""

    def __init__(self, count: int, spec: RulesSpec) -> None:
        self.count, self.spec = count, spec
        self.pool = self._new()

    def _new(self) -> cf.ProcessPoolExecutor:
        import concurrent.futures as cf

        with deferred():
            return cf.ProcessPoolExecutor(self.count, initializer=_init_worker, initargs=(self.spec,))

    def submit(self, fn: Callable[..., T], *args: Any) -> cf.Future[T]:
        with deferred():  # (the first submit forks the workers: fork hooks run here)
            return self.pool.submit(fn, *args)

    def result(self, future: cf.Future[T]) -> T:
        import concurrent.futures as cf

        while True:
            with deferred():
                try:
                    return future.result(timeout=RESULT_POLL)
                except cf.TimeoutError:
                    if future.done():  # the unit's own TimeoutError, not the wait's
                        raise

    def restart(self) -> None:
        self.stop(kill=True)
        self.pool = self._new()

    def stop(self, kill: bool = False) -> None:
        """Shut the pool down; `kill`: do not wait for the units in flight (an interrupted run, a
        broken pool), terminate the workers so that none outlives the run."""
        with deferred():
            processes = list((getattr(self.pool, "_processes", None) or {}).values())
            if kill:
                for process in processes:
                    if process.is_alive():
                        process.terminate()
            self.pool.shutdown(wait=True, cancel_futures=True)
            for process in processes:
                process.join(timeout=5)


def _ordered(
    workers: _Workers | None,
    window: int,
    fn: Callable[..., T],
    units: Sequence[Any],
    args: tuple[Any, ...],
    dead: Callable[[Any], T],
) -> Iterator[T]:
    """fn(unit, *args) for every unit, results in unit order, at most `window` units in flight.

    When a worker dies, the pool breaks and every unit in flight fails with it. Those units are run
    again one at a time in a new pool: the innocent ones succeed, and a unit that kills its worker
    a second time gets `dead(unit)` (never run in this process: it could kill the parent too)."""
    if workers is None:
        for unit in units:
            yield fn(unit, *args)
        return
    import concurrent.futures as cf

    pending: deque[tuple[Any, cf.Future[T]]] = deque()
    todo = iter(units)

    def fill() -> None:
        for unit in todo:
            try:
                future = workers.submit(fn, unit, *args)
            except Exception as exc:  # noqa: BLE001 -- the pool broke since the last result: recovered below
                future = cf.Future()
                future.set_exception(exc)
            pending.append((unit, future))
            if len(pending) >= window:
                break

    def alone(unit: Any) -> T:
        try:
            return workers.result(workers.submit(fn, unit, *args))
        except Exception:  # noqa: BLE001 -- a broken pool, or a result that could not come back
            workers.restart()
            return dead(unit)

    fill()
    while pending:
        unit, future = pending.popleft()
        try:
            result = workers.result(future)
        except Exception:  # noqa: BLE001 -- BrokenProcessPool, or a result that could not come back
            suspects = [(unit, future), *pending]
            pending.clear()
            workers.restart()
            for suspect, done in suspects:
                with deferred():
                    ok = done.done() and not done.cancelled() and done.exception() is None
                yield workers.result(done) if ok else alone(suspect)
            fill()
            continue
        fill()
        yield result


def check_inputs(
    ruleset: RuleSet,
    spec: RulesSpec,
    inputs: Sequence[str],
    jobs: int | None = None,
    stdin_path: str | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> Iterator[Outcome]:
    """Every episode of the inputs, decided, in input order. `jobs=None` picks by batch size.

    Closing the iterator early (or an exception thrown into it, as a signal handler does) stops
    the worker processes at once.

    `on_progress(phase, done, total)`, when given, only observes: it is called in this process
    once the units are planned (`"plan"`, 0, total), after each unit of the first pass (`"scan"`,
    shared canaries) and after the outcomes of each unit were yielded (`"check"`); `done` and
    `total` are bytes of input (a progress bar's total is estimated from them)."""
    units = plan_units(inputs, stdin_path=stdin_path)
    sizes = [_unit_bytes(u) for u in units] if on_progress is not None else []
    total_bytes = sum(sizes)
    if on_progress is not None:
        on_progress("plan", 0, total_bytes)
    if jobs is None:
        big = len(units) > 1 and _input_bytes(units) >= MIN_BYTES_FOR_POOL
        jobs = (os.cpu_count() or 1) if big else 1
    count = max(1, jobs)
    workers = _Workers(count, spec) if count > 1 else None
    window = 2 * count  # units in flight: each at most UNIT_DOCS episodes and about JSONL_CHUNK bytes
    finished = False
    try:
        owners: dict[str, list[str]] = {}
        if ruleset.reads("shared_canaries"):
            scanned = 0
            for i, pairs in enumerate(_ordered(workers, window, _canaries_of, units, (), _canaries_of)):
                for owner, values in pairs:
                    for value in values:
                        ids = owners.setdefault(value, [])
                        if owner not in ids:
                            ids.append(owner)
                if on_progress is not None:
                    scanned += sizes[i]
                    on_progress("scan", scanned, total_bytes)
        shared = {value: ids for value, ids in owners.items() if len(ids) > 1}
        del owners

        def dead(unit: Unit | LoadedEpisode) -> list[tuple[Outcome, str | None]]:
            return _dead_unit(unit, shared, ruleset, spec)

        def evaluated() -> Iterator[tuple[Outcome, str | None] | None]:
            """Each unit's (outcome, id) pairs in order, then None: the unit is done."""
            if workers is None:  # one episode at a time, never a unit's list
                for unit in units:
                    yield from _iter_evaluated(unit, shared, ruleset, spec)
                    yield None
                return
            for results in _ordered(workers, window, _evaluate_unit, units, (shared,), dead):
                results.reverse()
                while results:  # each verdict is let go once it is written
                    yield results.pop()
                yield None

        # the first source of each id: a repeat names it (ids and locations: small, and needed)
        seen: dict[str, str] = {}
        done_bytes = units_done = 0
        for item in evaluated():
            if item is None:  # the end of a unit
                if on_progress is not None:
                    done_bytes += sizes[units_done]
                    on_progress("check", done_bytes, total_bytes)
                units_done += 1
                continue
            yield _first_or_repeat(*item, seen, ruleset, spec)
        finished = True
    finally:
        if workers is not None:
            workers.stop(kill=not finished)


def unique_ids(
    results: Iterable[list[tuple[Outcome, str | None]]], ruleset: RuleSet, spec: RulesSpec
) -> Iterator[Outcome]:
    """The outcomes of units' results, in the order given, with every later episode of an id
    already seen an ERROR naming the first (the Dask engine's, engine/distributed.py)."""
    seen: dict[str, str] = {}
    for results_of_unit in results:
        for outcome, ident in results_of_unit:
            yield _first_or_repeat(outcome, ident, seen, ruleset, spec)


def _first_or_repeat(
    outcome: Outcome, ident: str | None, seen: dict[str, str], ruleset: RuleSet, spec: RulesSpec
) -> Outcome:
    """`outcome`, or the ERROR of a repeated id naming where it was first seen (`seen`: the first
    source of each id, updated here)."""
    if ident is None:
        return outcome
    if ident in seen and outcome.verdict != ERROR:  # an ERROR already says why
        location = outcome.json.get("source") or ""
        dup = FactsError(
            f"duplicate id `{ident}` (first seen at {seen[ident]}); ids must be unique in a batch",
            source=location,
            pointer="/id",
            code=DUPLICATE_ID,
        )
        return _error(ruleset, dup, ident, location, spec, outcome.json.get("checked"))
    seen.setdefault(ident, outcome.json.get("source") or "")
    return outcome


def _unit_bytes(unit: Unit | LoadedEpisode) -> int:
    if isinstance(unit, Unit):
        try:
            return (unit.stop - unit.start) if unit.stop is not None else os.path.getsize(unit.path)
        except OSError:
            pass
    return 0


def _input_bytes(units: Sequence[Unit | LoadedEpisode]) -> int:
    return sum(_unit_bytes(unit) for unit in units)

