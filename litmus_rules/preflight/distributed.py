"""`preflight --engine dask`: every input file preflighted by one task on a Dask cluster
(engine/distributed.py's `map_ordered`), the results written by `run_preflight` here, in input
order, exactly as the local engine writes them.

The workers read the input files themselves (shared paths, as for `check`); standard input is
refused. With `--scorer`, each task starts the user's scorer in a child process of its worker
(`ScorerProcess`, the same time limit), so the scorer's module must be importable on the workers.
A file whose worker dies twice is an input error (exit 2), copied unchanged, like a file with an
unusable document: `check` then reports it rather than missing it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import attrs

from litmus_rules import diagnostics
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import LitmusConfigError
from litmus_rules.preflight.run import Result, preflight_file
from litmus_rules.preflight.scorer_process import ScorerProcess
from litmus_rules.preflight.scoring import Scorer, declared_scorer


@attrs.frozen
class _Lost:
    """What `run_preflight` reports for a file whose task failed twice (as it reports a document
    that could not be read)."""

    source: str
    error: str
    line: int | None = None
    id: str | None = None


def _task(entry: str, scorer: Any, replace_controls: bool, keep_going: bool) -> list[tuple[Any, Result | None]]:
    if isinstance(scorer, tuple):  # the user's scorer: in its own child process, on this worker
        with ScorerProcess(*scorer) as process:
            return list(preflight_file(entry, process, replace_controls, keep_going))
    return list(preflight_file(entry, scorer, replace_controls, keep_going))


def _failed(entry: str, exc: BaseException) -> list[tuple[Any, Result | None]]:
    from litmus_rules.engine.distributed import describe_exception, require_dask

    if isinstance(exc, require_dask().KilledWorker):
        why = diagnostics.message(code_for("worker-died"))
    else:
        why = f"preflighting it on the Dask cluster failed: {describe_exception(exc)}"
    return [(_Lost(entry, f"`{entry}`: {why}"), None)]


def preflight_files(plan: Sequence[tuple[Any, str | None]], scorer: Scorer | ScorerProcess, replace_controls: bool,
                    keep_going: bool, scheduler: Any = None, workers: int | None = None,
                    notify: Callable[[str], None] | None = None) -> Iterator[tuple[str, list[tuple[Any, Result | None]]]]:
    """(input file, its documents and Results) for every readable input of `plan`, in order."""
    from litmus_rules.engine.distributed import map_ordered

    files = [entry for entry, _ in plan if isinstance(entry, str)]
    if "-" in files:
        raise LitmusConfigError("preflight --engine dask: the cluster's workers read input files, not standard "
                                "input; write it to a file")
    how: Any = (scorer.spec, scorer.timeout) if isinstance(scorer, ScorerProcess) else scorer
    if how is not declared_scorer and not isinstance(how, tuple):
        raise LitmusConfigError("preflight --engine dask scores with the declared detector or a --scorer "
                                "MODULE:FUNCTION (a scorer object of this process cannot go to the workers)")
    results = map_ordered(_task, files, (how, replace_controls, keep_going), failed=_failed,
                          scheduler=scheduler, workers=workers, notify=notify)
    try:
        for entry, items in zip(files, results):
            yield entry, items
    finally:
        results.close()
