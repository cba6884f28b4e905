"""The preflight pass: run the stub agents on every instance, score them with the harness's
scorer, and write each instance back with its `controls` filled in. `litmus-rules check` decides.
The command line (`litmus-rules preflight`: its arguments, what it prints) is `cli/preflight.py`.

Scoring a run: by default the instance's declared `detector` is applied the way a harness applies
it (`declared_scorer`); with `--scorer MODULE:FUNCTION` the harness's own Python scorer is imported
and called with one run at a time. Importing it executes the user's code: that is the feature (the
counterfactual test runs the real scorer), so only point it at code you would run anyway.

The harness's scorer runs in a child process (`scorer_process.py`) with a time limit per instance
(`--scorer-timeout`). Fail closed: a scorer that raises (anything, KeyboardInterrupt and SystemExit
included), returns something that is not a label, exits its process or runs out of time on *any*
run of an instance leaves every label of that instance unknown (`label` and `fired` absent, `error`
set), so `check` rejects it for insufficient evidence. The batch goes on.

Harness controls (episode/1.1): a control run the instance already carries is the harness's unless it
says `source: stub`, and it is kept as it is (unless `replace_controls`); preflight fills in only
the absent controls and the stale runs of its own (`source: stub`), writing `source: stub` on them.
It still runs and scores every stub, and reports where a stub disagrees with the harness's run
(label, fired, the decisions on attack calls; `harness.py`). The findings are computed from the
controls as written, i.e. as `check` will read them. The summary is rendered by `report.py`; the
files are written by `writeback.py` (atomically; YAML as a round trip that keeps its comments). episode/1 has no `source` field, so an episode/1 instance
cannot say which runs are the harness's: its controls are all replaced, as before 1.1.

Each folder of OUTDIR gets a manifest (`.litmus-preflight.json`, `io/origins.py`) naming the input
file every copy was made from, its hash and each document's line in it: `check OUTDIR` then names
the input file in a verdict's `source` (the copy in `checked`), as long as neither file changed.

Exit status: 0 controls written and none shows a problem; 1 controls written, but some instance has
a dirty null control, a silent positive control, indistinguishable refusal/compliance stubs, a
control that stays unknown (an invalid label, a harness run without one) or a scorer failure
(`check` will reject it); 2 misuse (bad arguments, a scorer that cannot be imported,
output that would overwrite an input) or unusable input documents. Trivial agents firing and
stub/harness disagreements are warnings only: `check` does not reject for them.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import time
import traceback
from typing import IO, Any, Callable, Iterator, Mapping, Sequence

import attrs

from litmus_rules.preflight import scoring
from litmus_rules.preflight import stubs
from litmus_rules.errors import EvaluationError, LitmusConfigError
from litmus_rules.domain.names import mentioned
from litmus_rules.domain.normalize import blank
from litmus_rules.domain.records import transcript_text
from litmus_rules.io.origins import Record, sha256_file, write_manifests
from litmus_rules.preflight import harness as harness_runs
from litmus_rules.preflight.scorer_process import ScorerProcess
from litmus_rules.preflight.writeback import Output as _Output
from litmus_rules.preflight.writeback import kind_of_file as _kind
from litmus_rules.preflight.writeback import with_controls
from litmus_rules.preflight.scoring import (Scorer, declared_scorer, declared_scorer_identity, invalid_labels,
                                            positive_labels, to_label)

EXIT_OK, EXIT_FINDINGS, EXIT_MISUSE = 0, 1, 2
# Controls in output order; positive and compliance share the compliance stub's run.
CONTROLS = ("null", "positive", "refusal", "compliance", "trivial_empty", "trivial_dump")
FINDINGS = {
    "null_dirty": "null control dirty",
    "positive_silent": "positive control silent",
    "indistinguishable": "stubs indistinguishable",
    "trivial_firing": "trivial agents firing",
    "unknown_controls": "controls unknown",
    "disagreement": "stub disagrees with harness",
    "scorer_failed": "scorer failures",
}
BLOCKING = ("null_dirty", "positive_silent", "indistinguishable", "unknown_controls", "scorer_failed")
WARNINGS = ("trivial_firing", "disagreement")  # marked `!`: reported, but `check` does not reject for them
READ_BY_CHECK = ("null", "positive", "refusal", "compliance")  # the shipped rules read no trivial run


# --- one instance ---------------------------------------------------------------------------------


@attrs.define
class Failure:
    control: str
    summary: str  # one line, written into the run's `error`
    traceback: str


@attrs.define
class Result:
    id: str
    source: str
    controls: dict[str, Any]
    labels: dict[str, str | None]
    findings: dict[str, list[str]]  # finding kind -> human-readable details
    failures: list[Failure]
    seconds: float
    kept: list[str] = attrs.Factory(list)  # controls kept from the harness, in CONTROLS order
    disagreements: list[dict[str, Any]] = attrs.Factory(list)  # {control, field, stub, harness}
    detector_scorer: dict[str, Any] | None = None  # `detector.scorer`, as the harness names it

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self, filter=lambda a, _: a.name != "controls"), "seconds": round(self.seconds, 6)}


def _payload(run: stubs.StubRun) -> dict[str, Any]:
    return {"transcript": run.transcript, "dispatch": run.dispatch, "instance": run.instance}


def _call(scorer: Scorer, run: stubs.StubRun, positives: Sequence[str]) -> tuple[str | None, Failure | None]:
    """Score one run in this process (the declared detector, or a callable given to the library)."""
    payload = copy.deepcopy(_payload(run))  # a scorer that mutates its argument must not alter the run
    try:
        return to_label(scorer(payload), positives), None
    except (Exception, SystemExit) as exc:  # user code: anything it raises is its failure, not ours
        summary = f"scorer raised {type(exc).__name__}" + (f": {str(exc).splitlines()[0][:300]}" if str(exc).strip() else "")
        if isinstance(exc, scoring.BadLabel):
            summary = str(exc)
        frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # from the scorer down
        tb = "".join(traceback.format_exception(type(exc), exc, frames or exc.__traceback__))
        return None, Failure(run.control, summary, tb)


def _score_all(scorer: Scorer | ScorerProcess, runs: Mapping[str, stubs.StubRun],
               positives: Sequence[str]) -> tuple[dict[str, str | None], list[Failure]]:
    labels: dict[str, str | None] = {}
    failures: list[Failure] = []
    if isinstance(scorer, ScorerProcess):  # one request per instance, under the time limit
        results = scorer.score_instance([_payload(run) for run in runs.values()], positives)
        for control, result in zip(runs, results):
            labels[control] = result.get("label")
            if "error" in result:
                failures.append(Failure(control, result["error"], result["traceback"]))
        return labels, failures
    for control, run in runs.items():
        labels[control], failure = _call(scorer, run, positives)
        if failure is not None:
            failures.append(failure)
    return labels, failures


def _injected_names(instance: Mapping[str, Any]) -> list[str]:
    context = instance.get("context") or {}
    return [item["name"] for key in ("tools", "skills") for item in context.get(key) or ()
            if isinstance(item, Mapping) and item.get("injected") is True and isinstance(item.get("name"), str)]


def null_control_dirty(instance: Mapping[str, Any], run: Mapping[str, Any]) -> tuple[list[str], bool]:
    """(why the null control run is dirty, whether that is unknown), decided as the shipped rules
    `null_control_clean` and `null_control_silent` decide it from the run as written: a canary
    leaks into its transcript, or an injected tool or skill name is mentioned in it at identifier
    boundaries (names.py); or the run fired or got one of `detector.positive_labels` (default
    [unsafe]). A run that carries an `error`, or whose label or
    `fired` is null, has no known outcome (DESIGN Reading 5-6). Unknown only when nothing is dirty."""
    dirty: list[str] = []
    undecided = False  # a leak search past a decoding limit: unknown, as `check` has it
    try:
        null_text = transcript_text(run["transcript"]) if "transcript" in run else ""  # absent: unknown, below
    except (EvaluationError, TypeError):  # a harness transcript past the walk's limits
        null_text, undecided = "", True
    canaries = [c["value"] for c in instance.get("canaries") or () if isinstance(c, Mapping) and isinstance(c.get("value"), str)]
    # as the rule: a canary anywhere (`leaks`), a name at identifier boundaries (`names.mentions`)
    for token in canaries + _injected_names(instance):
        anywhere = token in canaries
        try:
            if anywhere and blank(token):  # as the rule: a canary found in any text is unknown
                undecided = True
                continue
            witness = mentioned(token, null_text, anywhere)
        except EvaluationError:
            undecided = True
            continue
        if witness is not None:
            how = "as a canary, anywhere" if anywhere else "as a name, at identifier boundaries"
            dirty.append(f"{token!r} in the null transcript ({witness.transform}; {how})")
    usable = "error" not in run and run.get("label", "") is not None and run.get("fired", False) is not None
    label, fired = (run.get("label"), run.get("fired")) if usable else (None, None)
    if isinstance(label, str) and label in invalid_labels(instance):  # not scored (1.1): unknown
        label, fired, usable = None, None, False
    if isinstance(label, str) and label in positive_labels(instance):
        dirty.append(f"null control fired: labelled {label!r}")
    elif fired is True:
        dirty.append("null control fired")
    unknown = not dirty and (undecided or not (
        usable and isinstance(label, str) and isinstance(fired, bool) and "transcript" in run))
    return dirty, unknown


def _who(control: str, kept: Sequence[str]) -> str:
    """How the report names the run of a control: the stub's, or the harness's (kept)."""
    if control in kept:
        return f"the harness's {control} run"
    return f"{stubs.STUB_NAMES['compliance' if control == 'positive' else control]} stub"


def _findings(instance: Mapping[str, Any], controls: Mapping[str, Any], kept: Sequence[str],
              positives: Sequence[str], scorer_failed: bool) -> dict[str, list[str]]:
    """What `check` will object to, found early, with the reason in words, from the controls as
    written (harness runs included). Unknown labels yield no label findings: a scorer failure is
    its own finding, and a control that stays unknown otherwise (an invalid label, a harness run
    without a label) is `unknown_controls`."""
    invalid = invalid_labels(instance)
    labels: dict[str, str | None] = {}
    unknown: dict[str, list[str]] = {}  # why -> the controls unknown for that reason
    for control in CONTROLS:
        labels[control], why = harness_runs.known_label(controls[control], invalid)
        failed = scorer_failed and control not in kept  # a scorer failure: reported as one
        if why is not None and control in READ_BY_CHECK and not failed:
            unknown.setdefault(why, []).append(f"{control}{' (harness)' if control in kept else ''}")
    found: dict[str, list[str]] = {}
    dirty, _ = null_control_dirty(instance, controls["null"])
    if dirty:
        found["null_dirty"] = dirty
    null, positive = labels.get("null"), labels.get("positive")
    if positive is not None and null is not None:
        if positive not in positives:
            found["positive_silent"] = [f"{_who('positive', kept)} labelled {positive!r}"]
        elif positive == null:
            found["positive_silent"] = [f"{_who('positive', kept)} labelled {positive!r}, the same as the null control"]
    refusal, compliance = labels.get("refusal"), labels.get("compliance")
    if refusal is not None and refusal == compliance:
        what = "refusal and compliance stubs" if not {"refusal", "compliance"} & set(kept) else (
            f"{_who('refusal', kept)} and {_who('compliance', kept)}")
        found["indistinguishable"] = [f"{what} both labelled {refusal!r}"]
    for control in ("trivial_empty", "trivial_dump"):
        if labels.get(control) in positives:
            name = f"the harness's {control} run" if control in kept else stubs.STUB_NAMES[control]
            found.setdefault("trivial_firing", []).append(f"{name} labelled {labels[control]!r}")
    if unknown:
        found["unknown_controls"] = [f"{', '.join(controls)}: {why}" for why, controls in unknown.items()]
    return found


def preflight_instance(instance: Mapping[str, Any], scorer: Scorer | ScorerProcess = declared_scorer,
                       source: str = "", replace_controls: bool = False) -> Result:
    """Run every stub on one instance and score it; the Result carries the `controls` to write:
    the harness's runs kept (episode/1.1, unless `replace_controls`), stub runs for the rest."""
    start = time.perf_counter()
    runs = stubs.run_stubs(instance)
    positives, invalid = positive_labels(instance), invalid_labels(instance)
    unscorable = scoring.unscorable(instance) if scorer is declared_scorer else None
    if unscorable is None:
        stub_labels, failures = _score_all(scorer, runs, positives)
    else:  # not a scorer failure: there is nothing the declared detector could read
        stub_labels, failures = dict.fromkeys(runs), []
    stub_labels = {c: stub_labels["compliance" if c == "positive" else c] for c in CONTROLS}
    if failures:
        stub_labels = dict.fromkeys(stub_labels)  # fail closed: one failed run makes every label unknown
    kept = harness_runs.harness_runs(instance, CONTROLS, replace_controls)
    controls: dict[str, Any] = {}
    disagreements: list[dict[str, Any]] = []
    for control in CONTROLS:
        run = runs["compliance" if control == "positive" else control]
        if control in kept:
            controls[control] = kept[control]
            disagreements += harness_runs.disagreements(instance, control, _payload(run), stub_labels[control],
                                                        kept[control], positives, invalid)
            continue
        entry: dict[str, Any] = {"source": harness_runs.SOURCE_STUB} if harness_runs.writes_source(instance) else {}
        entry.update({"stub": run.stub, "transcript": run.transcript, "dispatch": run.dispatch})
        own = next((f for f in failures if f.control == run.control), None)
        if unscorable is not None:
            entry["error"] = f"not labelled: {unscorable}"
        elif own is not None:
            entry["error"] = own.summary
        elif failures:
            entry["error"] = (f"not labelled: the scorer failed on the {failures[0].control} run of this "
                              f"instance ({failures[0].summary})")
        else:
            label = stub_labels[control]
            entry["label"] = label
            entry["fired"] = None if label in invalid else label in positives  # an invalid label: not scored
        controls[control] = entry
    labels = {c: None if "error" in controls[c] or not isinstance(controls[c].get("label"), str)
              else controls[c]["label"] for c in CONTROLS}
    findings = _findings(instance, controls, list(kept), positives, bool(failures))
    if disagreements:
        findings["disagreement"] = [harness_runs.describe(d) for d in disagreements]
    if failures:
        findings["scorer_failed"] = [f"{f.control}: {f.summary}" for f in failures]
    return Result(str(instance.get("id")), source, controls, labels, findings, failures, time.perf_counter() - start,
                  list(kept), disagreements, declared_scorer_identity(instance))


# --- reading and writing files --------------------------------------------------------------------


def plan_outputs(inputs: Sequence[str], outdir: str | None) -> list[tuple[Any, str | None]]:
    """(input file or a LoadedEpisode error, output path): a named file keeps its base name, a file
    found in a named folder its path below that folder, standard input becomes `stdin.jsonl`.
    Raises LitmusConfigError when two inputs would share an output or an output is an input."""
    from litmus_rules.io.load import discover

    if list(inputs).count("-") > 1:
        raise LitmusConfigError("standard input (`-`) can be read only once")
    plan: list[tuple[Any, str | None]] = []
    for item in inputs:
        found = ["-"] if item == "-" else discover([item])
        for entry in found:
            if not isinstance(entry, str) or outdir is None:
                plan.append((entry, None))
                continue
            rel = "stdin.jsonl" if entry == "-" else (
                os.path.basename(entry) if os.path.isfile(item) else os.path.relpath(entry, item))
            plan.append((entry, os.path.join(outdir, rel)))
    claimed: dict[str, str] = {}
    sources = {os.path.realpath(e) for e, _ in plan if isinstance(e, str) and e != "-"}
    for entry, dest in plan:
        if dest is None:
            continue
        real = os.path.realpath(dest)
        if real in sources:
            raise LitmusConfigError(f"output `{dest}` is an input file; inputs are never modified: choose another -o")
        if real in claimed:
            raise LitmusConfigError(f"`{entry}` and `{claimed[real]}` would both be written to `{dest}`; "
                                    "preflight them into separate output folders")
        claimed[real] = str(entry)
    return plan


# --- the batch ------------------------------------------------------------------------------------


@attrs.define
class Report:
    scorer: str
    output: str
    results: list[Result] = attrs.Factory(list)
    input_errors: list[dict[str, Any]] = attrs.Factory(list)
    files: list[dict[str, Any]] = attrs.Factory(list)
    seconds: float = 0.0
    replace_controls: bool = False

    def count(self, finding: str) -> int:
        return sum(1 for r in self.results if finding in r.findings)

    def exit_code(self) -> int:
        if self.input_errors or not (self.results or self.files):
            return EXIT_MISUSE
        return EXIT_FINDINGS if any(self.count(f) for f in BLOCKING) else EXIT_OK


def _error(loaded: Any) -> dict[str, Any]:
    return {"source": loaded.source, "line": loaded.line, "id": loaded.id, "message": str(loaded.error)}


def preflight_file(entry: str, scorer: Scorer | ScorerProcess, replace_controls: bool, keep_going: bool,
                   stdin: IO[str] | None = None) -> Iterator[tuple[Any, Result | None]]:
    """(document, its Result) for every document of one input, in order; an unusable document
    (`.error`) has None, and after one the rest are only read (`keep_going`: preflighted still)."""
    from litmus_rules.io.load import iter_episodes

    failed = False
    for loaded in iter_episodes([entry], stdin=stdin):
        if loaded.error is not None:
            failed = True
            yield loaded, None
        elif not failed or keep_going:
            assert loaded.data is not None  # a LoadedEpisode has exactly one of data and error
            where = f"{loaded.source}:{loaded.line}" if loaded.line else loaded.source
            yield loaded, preflight_instance(loaded.data, scorer, where, replace_controls)


def _origin_identity(entry: str) -> tuple[str, int] | None:
    """(sha256, size) of an input file, or None for standard input or a file that cannot be hashed."""
    if entry == "-":
        return None
    try:
        return sha256_file(entry), os.path.getsize(entry)
    except OSError:
        return None


def run_preflight(inputs: Sequence[str], outdir: str | None, scorer: Scorer | ScorerProcess = declared_scorer,
                  scorer_name: str = "declared detector", stdout: IO[str] | None = None,
                  stdin: IO[str] | None = None, replace_controls: bool = False,
                  on_instance: Callable[[], None] | None = None,
                  engine: str = "local", scheduler: Any = None, workers: int | None = None,
                  notify: Callable[[str], None] | None = None) -> Report:
    """Preflight every instance of the inputs into `outdir` (or, when None, JSONL on `stdout`).
    `replace_controls`: replace the harness's control runs of episode/1.1 instances too.
    `on_instance`, when given, is called after each instance (a progress bar); it only observes.
    `engine="dask"`: the files are preflighted on a Dask cluster (`preflight/distributed.py`) and
    written here, in the same order; `notify` gets one line about the cluster.

    A file with an unusable document is copied to `outdir` unchanged, so that `check` reports its
    ERROR rather than silently missing it; its other instances get no controls and are not counted."""
    start = time.perf_counter()
    plan = plan_outputs(inputs, outdir)
    report = Report(scorer_name, outdir if outdir is not None else "<stdout>", replace_controls=replace_controls)
    stream_out = _Output(None, "jsonl", stdout or sys.stdout) if outdir is None else None
    if engine == "dask":
        from litmus_rules.preflight.distributed import preflight_files

        found = preflight_files(plan, scorer, replace_controls, stream_out is not None, scheduler, workers, notify)
    else:
        found = ((entry, preflight_file(entry, scorer, replace_controls, stream_out is not None, stdin))
                 for entry, _ in plan if isinstance(entry, str))
    records: list[Record] = []  # the copies written, for the manifests (`io/origins.py`)
    try:
        for entry, dest in plan:
            if not isinstance(entry, str):  # the input itself could not be read
                report.input_errors.append(_error(entry))
                continue
            same, items = next(found)
            assert same == entry
            try:
                kind = "jsonl" if entry == "-" else _kind(entry)
                out = stream_out or _Output(dest, kind, source=entry if kind == "yaml" else None)
            except OSError as exc:
                report.input_errors.append({"source": entry, "line": None, "id": None,
                                            "message": f"cannot read `{entry}`: {exc.strerror or exc}"})
                continue
            # hashed before it is read (the local engine reads it lazily, below): an origin that
            # changes meanwhile is not the recorded one, and `check` does not name it (fail closed)
            origin = _origin_identity(entry) if dest is not None else None
            results: list[Result] = []
            errors: list[dict[str, Any]] = []
            lines: list[int | None] = []  # each written document's line in the input
            try:
                for loaded, result in items:
                    if result is None:
                        errors.append(_error(loaded))
                    elif not errors or stream_out is not None:  # else the file is copied unchanged
                        results.append(result)
                        lines.append(loaded.line)
                        out.add(with_controls(loaded.data, result.controls), result.controls)
                        if on_instance is not None:
                            on_instance()
                status = "written"
                if errors and stream_out is None:
                    status = "copied unchanged" if entry != "-" else "not written"  # stdin cannot be copied
                    results = []
                    out.commit(copy_of=entry) if entry != "-" else out.abort()
                else:
                    out.commit()
            except BaseException:
                out.abort()
                raise
            if dest is not None and status != "not written":
                copied = status == "copied unchanged"  # byte for byte: the origin's own lines
                records.append(Record(dest, entry, *origin, lines=None if copied else lines) if origin is not None
                               else Record(dest))
            report.input_errors.extend(errors)
            report.results.extend(results)
            report.files.append({"source": entry, "output": dest, "instances": len(results), "status": status})
    except BaseException:
        with contextlib.suppress(OSError):  # the copies written so far are attributed still
            write_manifests(records)
        raise
    write_manifests(records)
    found.close()  # the dask engine's: closes its cluster
    report.seconds = time.perf_counter() - start
    return report
