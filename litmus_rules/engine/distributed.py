"""The Dask engine: `check` (and `RuleSet.evaluate_batch`) on a Dask cluster, with the same answers
in the same order as the local engine (engine/batch.py), whose unit functions it runs.

The client plans the units (a file, or a slice of a JSONL file) and ships them, not episodes: each
worker reads its units itself. On a real cluster the workers must therefore see the inputs at the
same paths as the client (a shared filesystem; give absolute paths), and standard input is refused
with a remote scheduler. The rules travel as their source texts (`RuleSet.sources`), built once per
worker process, so the workers need not see the rule files.

Canary uniqueness is a group-by on the cluster. Pass 1 maps every unit to its canaries, split into
`buckets` dicts by a stable hash of the value (value -> owner ids, in unit order); bucket b of every
unit is merged in unit order by a tree of tasks (`FAN_IN` at a time), keeping every value until
the root, which keeps only the values with two owners or more. Only those come back to the client,
so its memory stays flat; they go to every worker for pass 2, which evaluates.

Failures: a worker that dies fails the units it held; each is run once more (a LocalCluster started
here lets the scheduler retry nothing itself: `allowed-failures` 0), and a unit that kills its
worker twice gets `_dead_unit`'s ERRORs, as with the local pool. Any other failure of a unit's task
(a result that does not come back) is one ERROR for that unit. Closing the iterator (Ctrl-C)
cancels the cluster work.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
import zlib
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import attrs

from litmus_rules.engine import stages
from litmus_rules.engine.batch import (
    INTERNAL_FAULT,
    Outcome,
    RulesSpec,
    _canaries_of,
    _dead_unit,
    _evaluate_unit,
    _exception,
    _fault,
    _unit_name,
    unique_ids,
)
from litmus_rules.engine.ruleset import RuleSet, build
from litmus_rules.engine.verdict import Verdict
from litmus_rules.errors import LitmusConfigError
from litmus_rules.io.load import LoadedEpisode, Unit, plan_units

ENGINES = ("local", "dask")
INSTALL_HINT = 'the dask engine needs Dask, which is not installed: pip install "litmus-rules[dask]"'
CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler before the run is given up (exit 2)
FAN_IN = 8  # partial canary dicts merged by one task of the group-by tree
WINDOW_PER_WORKER = 4  # units in flight per worker thread: enough to keep them busy, results stay few


def require_dask() -> Any:
    """The `distributed` module, or a LitmusConfigError that says how to install it."""
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise LitmusConfigError(INSTALL_HINT) from None
    return distributed


# ---- the cluster -----------------------------------------------------------------------------------


def local_cluster(workers: int | None = None) -> Any:
    """A LocalCluster of `workers` single-threaded processes (default: one per core) whose
    scheduler retries nothing on its own: a unit whose worker died is retried once by this engine."""
    distributed = require_dask()
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        return distributed.LocalCluster(
            n_workers=max(1, workers or os.cpu_count() or 1), threads_per_worker=1, processes=True,
            dashboard_address=":0", silence_logs=logging.ERROR,
        )


def connect(scheduler: Any = None, workers: int | None = None, timeout: float | None = None,
            stack: ExitStack | None = None) -> Any:
    """A `distributed.Client`: `scheduler` is one already (used as it is), an address, or None (a
    LocalCluster is started, and closed with `stack`). An address that cannot be reached within
    `timeout` seconds is a one-line LitmusConfigError."""
    distributed = require_dask()
    if scheduler is not None and not isinstance(scheduler, str):
        return scheduler
    stack = stack if stack is not None else ExitStack()
    if scheduler is None:
        cluster = stack.enter_context(local_cluster(workers))
        return stack.enter_context(distributed.Client(cluster))
    wait = CONNECT_TIMEOUT if timeout is None else timeout
    try:
        client = distributed.Client(scheduler, timeout=wait)
    except (OSError, TimeoutError, ValueError) as exc:
        detail = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LitmusConfigError(f"cannot reach the Dask scheduler at `{scheduler}`: {detail}") from None
    return stack.enter_context(client)


def describe(client: Any) -> str:
    """One line for stderr: the workers and the dashboard link (when the scheduler serves one)."""
    info = client.scheduler_info()
    threads = sum(w.get("nthreads", 1) for w in info.get("workers", {}).values())
    where = f"{len(info.get('workers', {}))} workers, {threads} threads, scheduler {info.get('address', '?')}"
    try:
        import bokeh  # noqa: F401 -- the scheduler serves its dashboard pages only with it
    except ImportError:
        return f"litmus-rules: dask: {where}; no dashboard here (pip install bokeh for one)"
    if "dashboard" not in info.get("services", {}):
        return f"litmus-rules: dask: {where}; the scheduler serves no dashboard"
    return f"litmus-rules: dask: {where}; dashboard {client.dashboard_link}"


def _threads(client: Any) -> int:
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 -- a scheduler that does not say: assume one
        return 1


# ---- the rules, on a worker --------------------------------------------------------------------------


@attrs.frozen
class _Rules:
    """What a worker builds the client's ruleset from, and the key it caches it under."""

    key: str
    texts: tuple[tuple[str, str], ...]
    params: Mapping[str, Any]
    budget: int
    spec: RulesSpec | None


_BUILT: dict[str, RuleSet] = {}
_BUILDING = threading.Lock()


def _rules_of(ruleset: RuleSet, spec: RulesSpec | None) -> _Rules:
    texts, params = ruleset.sources, ruleset.source_params
    if not texts:  # not made by `build` (hand-made): read the spec's path here, on the client
        if spec is None:
            raise LitmusConfigError("the dask engine needs a ruleset made by load_rules or load_rules_text")
        from litmus_rules._resources import default_rules_dir

        texts = stages.find_and_read(Path(spec.path) if spec.path is not None else default_rules_dir()).texts
        params = dict(spec.params)
    key = f"{stages.digest(texts)}:{sorted(params.items())!r}:{ruleset.budget}"
    return _Rules(key, tuple(texts), dict(params), ruleset.budget, spec)


def _ruleset(rules: _Rules) -> RuleSet:
    with _BUILDING:
        built = _BUILT.get(rules.key)
        if built is None:
            built = _BUILT[rules.key] = build(rules.texts, rules.params, budget=rules.budget)
        return built


# ---- the tasks (run on the workers) ------------------------------------------------------------------


def _bucket(value: str, buckets: int) -> int:
    # a stable hash: Python's str hash differs from one worker process to the next
    return zlib.crc32(value.encode("utf-8", "surrogatepass")) % buckets


def _canary_buckets(unit: Unit | LoadedEpisode, buckets: int) -> list[dict[str, list[str]]]:
    """Pass 1's map: the unit's canary value -> owner ids (in document order), in `buckets` parts."""
    return bucketed(_canaries_of(unit), buckets)


def bucketed(pairs: Iterable[tuple[str, list[str]]], buckets: int) -> list[dict[str, list[str]]]:
    parts: list[dict[str, list[str]]] = [{} for _ in range(buckets)]
    for owner, values in pairs:
        for value in values:
            ids = parts[_bucket(value, buckets)].setdefault(value, [])
            if owner not in ids:
                ids.append(owner)
    return parts


def _merge(parts: Iterable[Mapping[str, list[str]]]) -> dict[str, list[str]]:
    """Owner lists of the same value concatenated in the order of `parts` (unit order), without
    repeats: what one sequential pass over the units would have built."""
    out: dict[str, list[str]] = {}
    for part in parts:
        for value, ids in part.items():
            have = out.get(value)
            if have is None:
                out[value] = list(ids)
            else:
                have.extend([i for i in ids if i not in have])
    return out


def _merge_bucket(bucket: int, *mapped: list[dict[str, list[str]]]) -> dict[str, list[str]]:
    return _merge(parts[bucket] for parts in mapped)


def _merge_parts(*parts: dict[str, list[str]]) -> dict[str, list[str]]:
    return _merge(parts)


def _shared_only(merged: dict[str, list[str]]) -> dict[str, list[str]]:
    return {value: ids for value, ids in merged.items() if len(ids) > 1}


def _evaluate_task(unit: Unit | LoadedEpisode, shared: Mapping[str, list[str]], rules: _Rules
                   ) -> list[tuple[Outcome, str | None]]:
    assert rules.spec is not None
    return _evaluate_unit(unit, shared, _ruleset(rules), rules.spec)


def _verdicts_task(episodes: list[Mapping[str, Any]], shared: Mapping[str, list[str]], rules: _Rules,
                   explain: str, validate: bool) -> list[Verdict]:
    ruleset = _ruleset(rules)
    batch = {"canary_owners": shared}
    return [_portable(ruleset.evaluate(e, batch=batch, explain=explain, validate=validate)) for e in episodes]


def _portable(verdict: Verdict) -> Verdict:
    """The verdict with its trace trees built here: a trace builds them lazily from values recorded
    under the id() of AST nodes, which mean nothing in the process that unpickles it."""
    traces = [r.trace for r in verdict.reasons if r.trace is not None]
    for trace in (*traces, *verdict.passed, *verdict.classification_traces):
        trace.root  # noqa: B018 -- built on access
    return verdict


# ---- pass 1: the group-by ----------------------------------------------------------------------------


def shared_canaries(client: Any, units: Sequence[Unit | LoadedEpisode], run: str, buckets: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, list[str]]:
    """Canary value -> owner ids, for the values planted by two episodes or more, grouped on the
    cluster. The partial dicts stay on the workers; only the shared values come back. `progress`
    is called with (units read, units) as pass 1 goes."""
    if not units:
        return {}
    buckets = max(1, buckets or _threads(client))
    mapped = client.map(_canary_buckets, list(units), buckets=buckets,
                        key=[f"litmus-canaries-{run}-{i}" for i in range(len(units))])
    roots = group_by(client.submit, mapped, buckets, run)
    if progress is not None:
        _progress(mapped, progress)
    del mapped
    shared: dict[str, list[str]] = {}
    for part in client.gather(roots):
        shared.update(part)  # the buckets hold disjoint values
    return shared


def group_by(submit: Callable[..., Any], mapped: Sequence[Any], buckets: int, run: str,
             fan_in: int | None = None) -> list[Any]:
    """The merge tree over the map's results (or their futures), one per bucket: leaves merge
    bucket b of `fan_in` adjacent units, inner nodes `fan_in` adjacent merges, in unit order, and
    every root keeps only the values with two owners or more. `submit(fn, *args, key=)` runs a
    node (`Client.submit`; tests run it in-process)."""
    fan_in = fan_in or FAN_IN
    roots = []
    for b in range(buckets):
        level = [submit(_merge_bucket, b, *mapped[i:i + fan_in], key=f"litmus-groupby-{run}-{b}-0-{i}")
                 for i in range(0, len(mapped), fan_in)]
        depth = 0
        while len(level) > 1:
            depth += 1
            level = [submit(_merge_parts, *level[i:i + fan_in], key=f"litmus-groupby-{run}-{b}-{depth}-{i}")
                     for i in range(0, len(level), fan_in)]
        roots.append(submit(_shared_only, level[0], key=f"litmus-shared-{run}-{b}"))
    return roots


def _progress(futures: list[Any], progress: Callable[[int, int], None]) -> None:
    distributed = require_dask()
    for count, _ in enumerate(distributed.as_completed(futures), 1):
        progress(count, len(futures))


# ---- pass 2: evaluating, in order or as completed ----------------------------------------------------


def _run_units(client: Any, task: Callable[..., Any], units: Sequence[Any], args: tuple[Any, ...], run: str,
               window: int, ordered: bool, failed: Callable[[Any, BaseException], Any]) -> Iterator[Any]:
    """task(unit, *args) for every unit, at most `window` in flight; results in unit order, or as
    they complete.

    A worker that dies fails every unit it held. As the local pool does (batch._ordered), the run
    then lets the other units in flight finish, submits nothing new, and runs each failed unit
    again alone: an innocent unit succeeds, and one that fails a second time (it kills its worker)
    gets `failed(unit, exc)`. Closing the iterator cancels what is in flight."""
    distributed = require_dask()
    todo = iter(enumerate(units))
    in_flight: dict[int, tuple[Any, Any]] = {}
    recovering: set[int] = set()
    finished = None if ordered else distributed.as_completed()

    def submit(index: int, unit: Any, attempt: int = 1) -> Any:
        future = client.submit(task, unit, *args, key=f"litmus-evaluate-{run}-{index}-{attempt}", pure=False)
        in_flight[index] = (unit, future)
        if finished is not None and attempt == 1:
            finished.add(future)
        return future

    def fill() -> None:
        if recovering:  # failed units are being run again, alone
            return
        for index, unit in todo:
            submit(index, unit)
            if len(in_flight) >= window:
                break

    def failures() -> set[int]:
        """After a failure: every unit in flight finished, and those that failed too."""
        _check_connected(client)
        distributed.wait([future for _, future in in_flight.values()])
        return {i for i, (_, future) in in_flight.items() if future.status != "finished"}

    def alone(index: int) -> Any:
        unit = in_flight[index][0]
        recovering.discard(index)
        try:
            return submit(index, unit, 2).result()
        except Exception as exc:  # noqa: BLE001 -- the second failure: the unit's own
            _check_connected(client)
            return failed(unit, exc)
        finally:
            del in_flight[index]

    fill()
    try:
        if ordered:
            while in_flight:
                index = min(in_flight)
                try:
                    result = in_flight[index][1].result()
                    del in_flight[index]
                except Exception:  # noqa: BLE001 -- KilledWorker, or a result that could not come back
                    if index not in recovering:
                        recovering.update(failures())
                    result = alone(index)
                fill()
                yield result
            return
        assert finished is not None
        for future in finished:
            index = next((i for i, (_, f) in in_flight.items() if f is future), None)
            if index is None:  # a failed unit already run again
                continue
            if future.status == "finished":
                del in_flight[index]
                result = future.result()
                fill()
                yield result
                continue
            recovering.update(failures())
            for suspect in sorted(recovering):
                yield alone(suspect)
            fill()
    finally:
        if in_flight:  # closed early or interrupted: the cluster stops working for this run
            client.cancel([future for _, future in in_flight.values()], force=True)


def _check_connected(client: Any) -> None:
    if client.status not in ("running", "connecting"):
        raise LitmusConfigError("lost the connection to the Dask scheduler; the run is incomplete")


def describe_exception(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _value(value: Any) -> Any:
    return value


def _broadcast(client: Any, run: str, *values: Any) -> list[Any]:
    """Futures of values every unit's task reads, as tasks that hold them rather than scattered
    data: when the workers holding them die, the scheduler computes them again (scattered data
    would be lost, and every task reading it would fail)."""
    return [client.submit(_value, value, key=f"litmus-batch-facts-{run}-{i}", pure=False)
            for i, value in enumerate(values)]


# ---- the entry points --------------------------------------------------------------------------------


def check_inputs_dask(
    ruleset: RuleSet,
    spec: RulesSpec,
    inputs: Sequence[str],
    *,
    scheduler: Any = None,
    workers: int | None = None,
    stdin_path: str | None = None,
    ordered: bool = True,
    window: int | None = None,
    buckets: int | None = None,
    connect_timeout: float | None = None,
    notify: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    task: Callable[..., list[tuple[Outcome, str | None]]] | None = None,
) -> Iterator[Outcome]:
    """`batch.check_inputs` on a Dask cluster: every episode of the inputs, decided, in input
    order (`ordered=False`: as units complete). `scheduler`: an address, a `distributed.Client`,
    or None to start a LocalCluster of `workers` processes (default: one per core). `notify` gets
    one line about the cluster (its workers, the dashboard link), `progress` (units read, units)
    during pass 1 (the engine prints nothing itself). `task` replaces the unit's evaluation (tests:
    a unit that kills its worker)."""
    require_dask()
    if stdin_path is not None and isinstance(scheduler, str):
        raise LitmusConfigError("--engine dask with --scheduler: the cluster's workers cannot read standard "
                                "input; write it to a file on a path they share")
    units = plan_units(inputs, stdin_path=stdin_path)
    rules = _rules_of(ruleset, spec)
    run = uuid.uuid4().hex[:12]
    with ExitStack() as stack:
        client = connect(scheduler, workers, connect_timeout, stack)
        if notify is not None:
            notify(describe(client))
        shared: dict[str, list[str]] = {}
        if ruleset.reads("shared_canaries"):
            shared = shared_canaries(client, units, run, buckets, progress)
        shared_future, rules_future = _broadcast(client, run, shared, rules)

        def failed(unit: Any, exc: BaseException) -> list[tuple[Outcome, str | None]]:
            if isinstance(exc, require_dask().KilledWorker):
                return _dead_unit(unit, shared, ruleset, spec)
            what = _exception(exc, "running on the Dask cluster")
            return [(_fault(ruleset, spec, None, _unit_name(unit), what, INTERNAL_FAULT), None)]

        size = window or WINDOW_PER_WORKER * _threads(client)
        results = _run_units(client, task or _evaluate_task, units, (shared_future, rules_future), run,
                             size, ordered, failed)
        try:
            yield from unique_ids(results, ruleset, spec)
        finally:
            results.close()  # cancels what is still in flight, before the cluster closes


def map_ordered(task: Callable[..., Any], items: Sequence[Any], args: tuple[Any, ...], *,
                failed: Callable[[Any, BaseException], Any], scheduler: Any = None, workers: int | None = None,
                notify: Callable[[str], None] | None = None) -> Iterator[Any]:
    """task(item, *args) for every item on a Dask cluster, results in item order, with the
    engine's failure handling (a failed item is run once more, then `failed(item, exc)`). For the
    tools above the engine (preflight) that map over files the same way."""
    require_dask()
    with ExitStack() as stack:
        client = connect(scheduler, workers, None, stack)
        if notify is not None:
            notify(describe(client))
        results = _run_units(client, task, items, args, uuid.uuid4().hex[:12],
                             WINDOW_PER_WORKER * _threads(client), True, failed)
        try:
            yield from results
        finally:
            results.close()


def evaluate_batch_dask(ruleset: RuleSet, episodes: Iterable[Mapping[str, Any]], *, explain: str = "fails",
                        validate: bool = True, engine: str = "dask", scheduler: Any = None,
                        chunk: int = 64) -> list[Verdict]:
    """`RuleSet.evaluate_batch` on a Dask cluster: the episodes, already in this process, go out in
    chunks of `chunk`; canary owners are counted here (the episodes are here anyway)."""
    if engine != "dask":
        raise LitmusConfigError(f"unknown engine `{engine}`: expected one of {', '.join(ENGINES)}")
    from litmus_rules.engine.ruleset import canary_owners

    episodes = list(episodes)
    shared = canary_owners(episodes)
    rules = _rules_of(ruleset, None)
    run = uuid.uuid4().hex[:12]
    with ExitStack() as stack:
        client = connect(scheduler, None, None, stack)
        shared_future, rules_future = _broadcast(client, run, shared, rules)
        chunks = [episodes[i:i + chunk] for i in range(0, len(episodes), chunk)]

        def failed(_chunk: Any, exc: BaseException) -> list[Verdict]:
            raise exc

        out: list[Verdict] = []
        for verdicts in _run_units(client, _verdicts_task, chunks, (shared_future, rules_future, explain, validate),
                                   run, WINDOW_PER_WORKER * _threads(client), True, failed):
            out.extend(verdicts)
        return out
