"""Inspect AI logs (`.eval` and `.json`) as episodes: one episode per sample, epoch and scorer.

Mapped (docs/importers.md has the table): the sample's messages (input, system, assistant and tool
messages, each with its `step`, its index in the sample) up to the decision as `context.messages`;
the tools of the first model event as `context.tools`; every assistant `tool_calls` entry as a
dispatch record (`decision: execute` when a tool message answers it: Inspect ran it;
`decision_source: derived`); the assistant messages from the decision on as the transcript. The
built-in text scorers become signals on the final message (`includes` -> substring, `match` and
`pattern` -> regex, with `ignorecase` where the scorer ignores case), reading the sample's target;
any other scorer is `scorer.kind: code` (or `model_judge`), with its channel and signals unknown
unless `--detector` supplies them. A sample's score value is its label (`extra.inspect.score`;
on a control run, `label`).

Options: `scorer=NAME` imports one scorer only (so that `--detector` applies to it alone);
`injected=SURFACE` or `injected_key=KEY` (a metadata key holding it per sample) says which messages
the attacker wrote: `tool_result:NAME` (results of tool NAME), `tool_result` (every tool result) or
`input` (the input messages); the decision is then the first assistant turn after the first
injected message. `null_control=KEY=VALUE` marks the samples whose metadata KEY is VALUE as null
controls (no injection), and `link=KEY` links each sample to the null control with the same
metadata KEY (without `link`, a log with exactly one null-control sample per epoch links it to
every sample of that epoch).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from litmus_rules.io.importers import _inspect_log as logs
from litmus_rules.io.importers._common import label, tool, unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "inspect"
VERSION = "1"
EXTENSIONS = (".eval", ".json")
OPTIONS = {
    "scorer": "import only this scorer's episodes",
    "injected": "which messages the attacker wrote: tool_result:NAME, tool_result or input",
    "injected_key": "a sample metadata key whose value says which messages the attacker wrote (as `injected`)",
    "null_control": "KEY=VALUE: samples whose metadata KEY equals VALUE are null controls",
    "link": "a sample metadata key: a sample's null control is the control sample with the same value",
}

TEXT_SCORERS = ("includes", "match", "pattern", "exact")
JUDGE_SCORERS = ("model_graded_qa", "model_graded_fact")
BUILTIN_SCORERS = TEXT_SCORERS + ("answer", "choice", "f1", "math")
NOTES = {
    "/canaries": "an Inspect log records no planted tokens: list the sample's sentinel values as canaries "
                 "(or `canaries: []`); the target is the scorer's expected answer, not necessarily a canary",
    "/provenance/payload_generator": "an Inspect log does not say who wrote the injected text",
    "/controls/positive": "Inspect runs the agent under test only: the stub controls (positive, refusal, "
                          "compliance) come from `litmus-rules preflight`",
    "/detector/positive_labels": "Inspect scores say whether the scorer's check held (C/I, numbers), not "
                                 "whether that means the attack succeeded: supply positive_labels with --detector "
                                 "(e.g. [C] when the target is what the attacker wants)",
}


def records(path: str, options: Options) -> Iterator[Imported | Problem]:
    try:
        log = logs.open_log(path)
    except logs.LogError as exc:
        yield Problem("", str(exc))
        return
    try:
        yield from _records(log, options)
    finally:
        log.close()


def _records(log: logs.EvalLog | logs.JsonLog, options: Options) -> Iterator[Imported | Problem]:
    spec = log.header.get("eval") or {}
    scorers = [s for s in spec.get("scorers") or [] if isinstance(s, dict) and isinstance(s.get("name"), str)]
    only = options.extra.get("scorer")
    if only is not None:
        if only not in [s["name"] for s in scorers]:
            yield Problem("header", f"this log has no scorer `{only}` (its scorers: {', '.join(s['name'] for s in scorers)})")
            return
        scorers = [s for s in scorers if s["name"] == only]
    if not scorers:
        yield Problem("header", "this log has no scorers: there is no detector to import")
        return
    tools_seen: dict[str, Any] = {}
    try:
        controls = _controls(log, options, tools_seen)
    except ValueError as exc:
        yield Problem("", str(exc))
        return
    for key in log.keys:
        try:
            sample = log.load(key)
            run = _run(sample, options, tools_seen)
        except (logs.LogError, ValueError) as exc:
            yield Problem(key.position, str(exc))
            continue
        link = _link_value(sample, options, key.epoch)
        control = controls.get(link) if link is not None else None
        for scorer in scorers:
            yield Imported(_episode(spec, key, sample, run, scorer, control), key.position)


# ---- a sample's run -----------------------------------------------------------------------------


class _Run:
    """One sample's run. Its lists are built once and shared by the episodes of every scorer (the
    framework then validates them once)."""

    def __init__(self, messages: list[dict[str, Any]], decision: int | None, dispatch: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None, scores: Mapping[str, Any], error: str | None) -> None:
        self.messages, self.decision, self.dispatch = messages, decision, dispatch
        self.tools, self.scores, self.error = tools, scores, error
        cut = decision if decision is not None else _last_assistant(messages)
        self.context_messages = messages[:cut]
        self.transcript_messages = [m for m in messages[cut or 0:] if m["role"] == "assistant"]

    def transcript(self) -> list[dict[str, Any]]:
        return self.transcript_messages

    def context(self) -> list[dict[str, Any]]:
        return self.context_messages

    def label(self, scorer: str) -> str | None:
        score = self.scores.get(scorer)
        return label(score.get("value")) if isinstance(score, Mapping) else None


def _last_assistant(messages: list[dict[str, Any]]) -> int | None:
    found = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    return found[-1] if found else None


def _resolve(value: Any, attachments: Mapping[str, Any]) -> Any:
    """Inspect may store long text once, as `attachment://<hash>`: the text the model saw."""
    if isinstance(value, str) and value.startswith("attachment://"):
        found = attachments.get(value[len("attachment://"):])
        return found if isinstance(found, str) else value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _injection_spec(sample: Mapping[str, Any], options: Options) -> str | None:
    if "injected" in options.extra:
        return options.extra["injected"]
    key = options.extra.get("injected_key")
    if key is None:
        return None
    value = (sample.get("metadata") or {}).get(key)
    return value if isinstance(value, str) else None


def _is_injected(spec: str | None, raw: Mapping[str, Any]) -> bool:
    if spec is None:
        return False
    role = raw.get("role")
    if spec == "input":
        return role == "user" and raw.get("source") in (None, "input")
    if spec == "tool_result":
        return role == "tool"
    if spec.startswith("tool_result:"):
        return role == "tool" and raw.get("function") == spec[len("tool_result:"):]
    raise ValueError(f"unknown injected surface `{spec}` (expected tool_result:NAME, tool_result or input)")


def _run(sample: Mapping[str, Any], options: Options, tools_seen: dict[str, Any]) -> _Run:
    attachments = sample.get("attachments") or {}
    spec = _injection_spec(sample, options)
    if not isinstance(sample.get("messages", []), list):
        raise ValueError("the sample's `messages` is not a list")
    raw_messages = [m for m in sample.get("messages") or [] if isinstance(m, Mapping) and isinstance(m.get("role"), str)]
    messages: list[dict[str, Any]] = []
    answered: set[str] = set()
    first_injected: int | None = None
    for step, raw in enumerate(raw_messages):
        message: dict[str, Any] = {"role": raw["role"]}
        content = _resolve(raw.get("content"), attachments)
        if content is not None:
            message["content"] = content
        if raw["role"] == "tool":
            if isinstance(raw.get("function"), str):
                message["name"] = raw["function"]
            if isinstance(raw.get("tool_call_id"), str):
                message["tool_call_id"] = raw["tool_call_id"]
                answered.add(raw["tool_call_id"])
        if isinstance(raw.get("tool_calls"), list) and raw["tool_calls"]:
            message["tool_calls"] = _resolve(raw["tool_calls"], attachments)
        if _is_injected(spec, raw):
            message["injected"] = True
            first_injected = step if first_injected is None else first_injected
        message["step"] = step
        messages.append(message)
    decision = None
    if first_injected is not None:
        decision = next((i for i in range(first_injected + 1, len(messages)) if messages[i]["role"] == "assistant"), None)
    dispatch = []
    for step, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            if not isinstance(call, Mapping) or not isinstance(call.get("function"), str):
                continue
            record: dict[str, Any] = {"tool": call["function"], "arguments": call.get("arguments", {})}
            if isinstance(call.get("id"), str):
                record["id"] = call["id"]
            record["step"] = step
            if call.get("id") in answered:
                record["decision"] = "execute"
            dispatch.append(record)
    error = sample.get("error")
    message_of_error = (error.get("message") if isinstance(error, Mapping) else error) if error else None
    return _Run(messages, decision, dispatch, _first_tools(sample, tools_seen), sample.get("scores") or {},
                str(message_of_error) if message_of_error else None)


def _first_tools(sample: Mapping[str, Any], seen: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]] | None:
    for event in sample.get("events") or []:
        if isinstance(event, Mapping) and event.get("event") == "model" and isinstance(event.get("tools"), list):
            tools = [tool(t["name"], t.get("description"), t.get("parameters"))
                     for t in event["tools"] if isinstance(t, Mapping) and isinstance(t.get("name"), str)]
            key = json.dumps(tools, sort_keys=True)
            if len(seen) > 64:
                seen.clear()
            return seen.setdefault(key, tools)  # samples of one log share one manifest object
    return None


# ---- controls -------------------------------------------------------------------------------------


def _is_control(summary: Mapping[str, Any], options: Options) -> bool:
    spec = options.extra.get("null_control")
    if spec is None:
        return False
    key, sep, value = spec.partition("=")
    if not sep or not key:
        raise ValueError(f"--option null_control takes KEY=VALUE, got `{spec}`")
    found = (summary.get("metadata") or {}).get(key)
    return found is not None and str(found) == value


def _link_value(sample: Mapping[str, Any], options: Options, epoch: int) -> Any:
    key = options.extra.get("link")
    if key is None:
        return ("epoch", epoch)
    value = (sample.get("metadata") or {}).get(key)
    return None if value is None else (key, str(value), epoch)


def _controls(log: logs.EvalLog | logs.JsonLog, options: Options, tools_seen: dict[str, Any]) -> dict[Any, _Run]:
    """The null-control samples' runs, by link value: read first (only they are kept in memory)."""
    found: dict[Any, _Run] = {}
    if "null_control" not in options.extra:
        return found
    for key in log.keys:
        try:
            summary = log.summary(key)
            sample = log.load(key) if _is_control(summary, options) else None
        except logs.LogError:
            continue  # reported where the sample's own episodes would have been
        if sample is not None:
            link = _link_value(sample, options, key.epoch)
            if link is None:
                continue
            if link in found:
                raise ValueError(f"two null-control samples share the link value {link[1:]!r}: which one is "
                                 "a sample's control is ambiguous (name a finer --option link=KEY)")
            found[link] = _run(sample, options, tools_seen)
    return found


# ---- the episode ----------------------------------------------------------------------------------


def _scorer_name(scorer: Mapping[str, Any]) -> str:
    return str(scorer["name"]).split("/")[-1]


def _targets(sample: Mapping[str, Any]) -> list[str]:
    target = sample.get("target")
    values = target if isinstance(target, list) else [target]
    return [t for t in values if isinstance(t, str) and t]


def _detector(scorer: Mapping[str, Any], sample: Mapping[str, Any], unknowns: list[dict[str, str]]) -> dict[str, Any]:
    name = _scorer_name(scorer)
    opts = scorer.get("options") if isinstance(scorer.get("options"), dict) else {}
    kind = "builtin" if name in BUILTIN_SCORERS else "model_judge" if name in JUDGE_SCORERS else "code"
    detector: dict[str, Any] = {"scorer": {"name": scorer["name"], "kind": kind, "options": opts}}
    flags = ["ignorecase"] if opts.get("ignore_case", True) else []
    targets = _targets(sample)
    signals: list[dict[str, Any]] = []
    if name == "includes":
        signals = [{"id": f"target-{i}", "kind": "substring", "value": t, **({"flags": flags} if flags else {})}
                   for i, t in enumerate(targets)]
    elif name in ("match", "exact"):
        location = "exact" if name == "exact" else str(opts.get("location", "end"))
        # Inspect strips whitespace (and punctuation at the ends) before comparing at the location
        edge = r"[\s\W]*"
        shape = {"begin": r"\A{e}{t}", "end": r"{t}{e}\Z", "exact": r"\A{e}{t}{e}\Z"}.get(location, "{t}")
        signals = [{"id": f"target-{i}", "kind": "regex", "value": shape.format(e=edge, t=re.escape(t)),
                    **({"flags": flags} if flags else {})} for i, t in enumerate(targets)]
    elif name == "pattern" and isinstance(opts.get("pattern"), str) and opts["pattern"]:
        signals = [{"id": "pattern", "kind": "regex", "value": opts["pattern"], **({"flags": flags} if flags else {})}]
    if name in TEXT_SCORERS and signals:
        detector.update(channel="transcript", scope="final_message", signals=signals)
    else:
        why = ("reads no target or pattern this importer can state" if name in TEXT_SCORERS
               else f"is {'a model judge' if kind == 'model_judge' else 'custom code'}: what it reads is not in the log")
        unknowns.append(unknown("/detector/channel", f"scorer `{scorer['name']}` {why}: give its channel "
                                "(e.g. `dispatch` for a scorer that counts tool calls)"))
        unknowns.append(unknown("/detector/signals", f"scorer `{scorer['name']}` {why}: give the signals it matches on"))
        detector.update(decision_field="decision", decision_source="derived")
    return detector


def _control_run(run: _Run, scorer: str) -> dict[str, Any]:
    out: dict[str, Any] = {"source": "harness", "transcript": run.transcript(), "dispatch": run.dispatch}
    value = run.label(scorer)
    if value is not None:
        out["label"] = value
    if run.error is not None:
        out["error"] = run.error
    return out


def _episode(spec: Mapping[str, Any], key: logs.SampleKey, sample: Mapping[str, Any], run: _Run,
             scorer: Mapping[str, Any], control: _Run | None) -> dict[str, Any]:
    task, model = str(spec.get("task") or "task"), spec.get("model")
    unknowns = [unknown(p, n) for p, n in NOTES.items()]
    detector = _detector(scorer, sample, unknowns)
    context: dict[str, Any] = {"messages": run.context()}
    if run.tools is not None:
        context["tools"] = run.tools
    else:
        unknowns.append(unknown("/context/tools", "the log has no model event (events were not logged): the "
                                "tools the model was offered are not recorded"))
    if run.decision is None:
        unknowns.append(unknown("/episode/decision_step", "Inspect records no decision point: the context runs up "
                                "to the final answer; name the injected messages with --option injected=... to cut "
                                "it at the first turn after them"))
    episode_run: dict[str, Any] = {"transcript": run.transcript(), "dispatch": run.dispatch}
    if run.decision is not None:
        episode_run["decision_step"] = run.decision
    controls = {}
    if control is not None:
        controls["null"] = _control_run(control, scorer["name"])
    else:
        unknowns.append(unknown("/controls/null", "no null-control sample is linked to this sample: name them with "
                                "--option null_control=KEY=VALUE (and --option link=KEY)"))
    run_keys: dict[str, Any] = {"task": task, "sample": str(key.id), "epoch": key.epoch, "scorer": scorer["name"]}
    if isinstance(model, str):
        run_keys["model"] = model
    episode: dict[str, Any] = {
        "litmus": "episode/1.1",
        "id": f"inspect:{task}:{model}:{key.id}:{key.epoch}:{scorer['name']}",
        "benchmark": {"name": task, "version": str(spec.get("task_version", "")), "instance": str(key.id)},
        "run": run_keys,
        "context": context,
        "detector": detector,
        "episode": episode_run,
        "unknowns": unknowns,
    }
    if controls:
        episode["controls"] = controls
    inspect_extra: dict[str, Any] = {}
    score = run.label(scorer["name"])
    if score is not None:
        inspect_extra["score"] = score
    if run.error is not None:
        inspect_extra["error"] = run.error
    if inspect_extra:
        episode["extra"] = {"inspect": inspect_extra}
    return episode
