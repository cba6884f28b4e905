"""AgentDojo: suite dumps (one episode per user task x injection task) and TraceLogger run folders
(one episode per run with injections, its `none/none.json` runs as harness controls).

A suite dump is a folder with `tools.json`, `injection_vectors.json`, `user_tasks.json` and
`injection_tasks.json` (a folder of such folders is read suite by suite). A run file is what
AgentDojo's TraceLogger writes at `<pipeline>/<suite>/<user_task>/<attack>/<injection_task>.json`.

What is mapped, and what is left unknown, is in docs/importers.md (AgentDojo section).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from pathlib import Path
from typing import Any, Iterator

from litmus_rules.io.importers._b_common import TAG, pointer, split_injected, text_part, unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "agentdojo"
VERSION = "1"

SUITE_FILES = ("tools.json", "injection_vectors.json", "user_tasks.json", "injection_tasks.json")
POSITIVE, SAFE = "unsafe", "safe"  # AgentDojo's `security: true` means the injection task succeeded

NOTE_CANARIES = ("AgentDojo plants no per-instance sentinel tokens; list one under `canaries` if the "
                 "environment has one (the importer cannot tell a sentinel from ordinary data)")
NOTE_PROVENANCE = ("AgentDojo does not record who wrote the attack text (the attack class builds it from "
                   "a template); supply `provenance.payload_generator`")
NOTE_QUERY = ("AgentDojo's check is Python code over the post-run environment; the suite dump records "
              "only the constants it compares (`values`), not the condition: write it as a JMESPath "
              "query with --detector")


def records(path: str | os.PathLike[str], options: Options) -> Iterator[Imported | Problem]:
    root = Path(path)
    if root.is_file():
        yield from _run_file(root, root.name, options)
        return
    if not root.is_dir():
        yield Problem(str(root), "not a file or folder")
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath)
        if all(f in filenames for f in SUITE_FILES[2:]):  # user_tasks.json + injection_tasks.json
            dirnames[:] = []
            yield from _suite(here, here.relative_to(root).as_posix() if here != root else here.name, options)
            continue
        for name in sorted(filenames):
            if name.endswith(".json") and not name.startswith("."):
                rel = (here / name).relative_to(root).as_posix()
                yield from _run_file(here / name, rel, options, skip_other=True)


# --- suite dumps --------------------------------------------------------------------------------


def _load(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


class Suite:
    """One suite dump, read whole (a few hundred kB): tools, vectors and tasks by id."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.name = folder.name
        version = folder.parent.name
        self.version = version[1:] if re.fullmatch(r"v\d+(\.\d+)*", version) else None
        self.tools: list[dict[str, Any]] | None = None
        if (folder / "tools.json").is_file():
            self.tools = [_tool(t) for t in _load(folder / "tools.json")]
        self.user_tasks: list[dict[str, Any]] = _load(folder / "user_tasks.json")
        self.injection_tasks: list[dict[str, Any]] = _load(folder / "injection_tasks.json")
        self.injection_by_id = {t.get("id"): t for t in self.injection_tasks if isinstance(t, dict)}


@functools.lru_cache(maxsize=8)  # a run folder holds many runs of the same few suites
def _cached_suite(folder: Path) -> Suite:
    return Suite(folder)


def _tool(t: dict[str, Any]) -> dict[str, Any]:
    # `dependencies` is AgentDojo's dependency injection (which environment part the function
    # receives): not something the agent sees.
    out: dict[str, Any] = {"name": t["name"]}
    if isinstance(t.get("description"), str):
        out["description"] = t["description"]
    if isinstance(t.get("parameters"), dict):
        out["input_schema"] = t["parameters"]
    return out


def _suite(folder: Path, label: str, options: Options) -> Iterator[Imported | Problem]:
    try:
        suite = Suite(folder)
    except (OSError, ValueError, KeyError, TypeError) as e:
        yield Problem(label, f"unreadable suite dump: {e}")
        return
    for i, ut in enumerate(suite.user_tasks):
        for j, it in enumerate(suite.injection_tasks):
            position = f"{label}/user_tasks.json#/{i} x {label}/injection_tasks.json#/{j}"
            try:
                yield Imported(_pair_episode(suite, ut, it, options), position)
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                yield Problem(position, f"unreadable task: {type(e).__name__}: {e}")


def _pair_episode(suite: Suite, ut: dict[str, Any], it: dict[str, Any], options: Options) -> dict[str, Any]:
    unknowns: list[dict[str, str]] = []
    messages: list[dict[str, Any]] = [{"role": "user", "content": ut["prompt"]}]
    payload = it.get("example_payload_important_instructions")
    vectors = [v for v in ut.get("injection_candidates") or [] if isinstance(v, str)]
    if isinstance(payload, str) and payload:
        # The dump records where the attack goes (the vectors) and the attack text, not the tool
        # results around the vectors: only the payload itself is what the agent would read there.
        for _ in vectors:
            messages.append({"role": "tool", "content": [text_part(payload, injected=True)]})
    else:
        unknowns.append(unknown("/context/messages", "the suite dump has no attack text for this injection "
                                "task; the injected tool results are unknown"))
    context: dict[str, Any] = {"messages": messages}
    if suite.tools is not None:
        context["tools"] = copy.deepcopy(suite.tools)  # episodes share no mutable parts
    else:
        unknowns.append(unknown("/context/tools", "the suite dump has no tools.json"))
    unknowns.append(unknown("/context/system_prompt", "the system prompt belongs to the agent pipeline, not "
                            "to the suite; import a run folder, or supply it"))
    detector, det_unknowns = _detector(it, derived=True)
    unknowns += det_unknowns
    unknowns += [unknown("/canaries", NOTE_CANARIES), unknown("/provenance/payload_generator", NOTE_PROVENANCE)]
    episode: dict[str, Any] = {
        "litmus": TAG,
        "id": f"agentdojo/{suite.version or 'unversioned'}/{suite.name}/{ut['id']}/{it['id']}",
        "benchmark": _benchmark(suite.version, f"{suite.name}/{ut['id']}/{it['id']}"),
        "run": {"suite": suite.name, "user_task": ut["id"], "injection_task": it["id"],
                "attack": "important_instructions", **options.run},
        "context": context,
        "detector": detector,
        "unknowns": unknowns,
        "extra": {"agentdojo": {"injection_vectors": vectors, "goal": it.get("goal")}},
    }
    return episode


def _benchmark(version: str | None, instance: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "agentdojo", "instance": instance}
    if version:
        out["version"] = version
    return out


def _detector(it: dict[str, Any], derived: bool) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The injection task's security check, by what it reads (`security_check` of the dump)."""
    sc = it.get("security_check") or {}
    unknowns: list[dict[str, str]] = []
    values: list[Any] = []
    for c in sc.get("constants") or []:
        v = c.get("value") if isinstance(c, dict) else None
        if isinstance(v, (str, int, float)) and not isinstance(v, bool) and v not in values:
            values.append(v)
    reads = [k for k in ("post_environment", "traces", "model_output") if sc.get(f"reads_{k}")]
    signals: list[dict[str, Any]] = []
    channel = {"post_environment": "state", "traces": "dispatch", "model_output": "transcript"}.get(
        reads[0] if reads else "", "state")
    if "post_environment" in reads:
        query = f"<the post-environment check of {it.get('id')}: Python code, no query recorded>"
        signals.append({"id": f"{it.get('id')}-state", "kind": "state", "query": query, "values": values})
        unknowns.append(unknown(pointer("detector", "signals", len(signals) - 1, "query"), NOTE_QUERY))
    if "traces" in reads:
        for k, call in enumerate(it.get("ground_truth_calls") or []):
            args = {a: v for a, v in (call.get("args") or {}).items() if v in values}
            if not args:
                continue  # the check compares none of this call's arguments
            signals.append({"id": f"{it.get('id')}-call-{k}", "kind": "tool_call", "tool": call["function"],
                            "arguments": args})
    if "model_output" in reads:
        for k, v in enumerate(values):
            if isinstance(v, str) and v:
                signals.append({"id": f"{it.get('id')}-output-{k}", "kind": "substring", "value": v})
    if not reads:
        unknowns.append(unknown("/detector/channel", "the dump does not say what this security check reads"))
    elif len(reads) > 1:
        unknowns.append(unknown("/detector/channel", f"the security check reads {', '.join(reads)}; the channel "
                                "shown is only the first of them"))
    detector: dict[str, Any] = {"channel": channel, "signals": signals, "positive_labels": [POSITIVE]}
    if channel == "transcript":
        detector["scope"] = "final_message"  # `model_output`: the agent's last message only
    if channel == "dispatch":
        # The traces are the calls the agent *requested*, whatever became of them: no decision read.
        detector["decision_field"] = None
    else:
        detector["decision_field"] = "decision"
    if derived:
        detector["decision_source"] = "derived"
    name = sc.get("defined_in") or it.get("class") or it.get("id")
    if name:
        method = sc.get("effective_method")
        detector["scorer"] = {"name": f"{name}.{method}" if method else str(name), "kind": "code"}
    return detector, unknowns


# --- run folders ---------------------------------------------------------------------------------


def _read_run(path: Path) -> dict[str, Any] | None:
    try:
        data = _load(path)
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and "suite_name" in data:
        return data
    return None


def _run_file(path: Path, label: str, options: Options, skip_other: bool = False) -> Iterator[Imported | Problem]:
    try:
        data = _load(path)
    except (OSError, ValueError) as e:
        yield Problem(label, f"not readable as JSON: {e}")
        return
    if not (isinstance(data, dict) and isinstance(data.get("messages"), list) and "suite_name" in data):
        if not skip_other:
            yield Problem(label, "not an AgentDojo run file (expected an object with `suite_name` and "
                          "`messages`) nor a suite dump folder")
        return
    if data.get("injection_task_id") is None:
        return  # a run without injections: a control of other runs, not an episode of its own
    try:
        yield Imported(_run_episode(path, data, options), label)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        yield Problem(label, f"unreadable run: {type(e).__name__}: {e}")


def _suites_dir(options: Options, suite_name: str) -> Path | None:
    base = options.extra.get("suites")
    if not base:
        return None
    for folder in (Path(base) / suite_name, Path(base)):
        if all((folder / f).is_file() for f in SUITE_FILES[2:]) and folder.name == suite_name:
            return folder
    return None


def _run_episode(path: Path, data: dict[str, Any], options: Options) -> dict[str, Any]:
    suite_name, ut_id, it_id = data["suite_name"], data["user_task_id"], data["injection_task_id"]
    pipeline = data.get("pipeline_name")
    attack = data.get("attack_type")
    injections = {k: v for k, v in (data.get("injections") or {}).items() if isinstance(v, str) and v}
    unknowns: list[dict[str, str]] = []

    conv = Conversation(data["messages"], list(injections.values()))
    for k, payload in enumerate(injections.values()):
        if k not in conv.found:
            vector = list(injections)[k]
            unknowns.append(unknown("/context/messages", f"the injection at vector `{vector}` was not found in any "
                                    "tool result of the run log: where the agent read it is unknown"))
    context: dict[str, Any] = {}
    if conv.system_prompt is not None:
        context["system_prompt"] = conv.system_prompt
    context["messages"] = conv.context_messages

    folder = _suites_dir(options, suite_name)
    suite = _cached_suite(folder) if folder is not None else None
    it = suite.injection_by_id.get(it_id) if suite else None
    if suite is not None and suite.tools is not None:
        context["tools"] = copy.deepcopy(suite.tools)  # episodes share no mutable parts
    else:
        unknowns.append(unknown("/context/tools", "TraceLogger run files do not record the tool manifest; pass "
                                "--option suites=DIR (the AgentDojo suite dumps)"))
    if it is not None:
        detector, det_unknowns = _detector(it, derived=True)
        unknowns += det_unknowns
    elif options.detector.get("channel"):
        detector = {"channel": options.detector["channel"], "decision_source": "derived"}
    else:
        raise ValueError(f"the run log does not record how injection task `{it_id}` is scored; pass --option "
                         "suites=DIR (AgentDojo suite dumps with injection_tasks.json) or --detector")

    controls: dict[str, Any] = {}
    run_root = path.parent.parent  # <pipeline>/<suite>/<user_task>
    null = _control_run(run_root / "none" / "none.json", suite_name, ut_id, pipeline)
    if null is not None:
        controls["null"] = null.control(label_known=False)
        unknowns.append(unknown("/controls/null/label", "AgentDojo's run without injections does not run the "
                                "injection task's check (its `security` is always true there); the null "
                                "control's label must be computed from this run or supplied"))
        unknowns.append(unknown("/controls/null/fired", "as for /controls/null/label"))
    positive = _control_run(run_root.parent / it_id / "none" / "none.json", suite_name, it_id, pipeline)
    if positive is not None:
        # The injection task run as the user task: its `utility` is the injection task's check.
        controls["positive"] = positive.control(label_known=True)
    if detector.get("channel") == "state":
        for name in controls:
            unknowns.append(unknown(f"/controls/{name}/state", "TraceLogger does not record the environment"))

    episode_run: dict[str, Any] = {"transcript": conv.transcript, "dispatch": conv.dispatch}
    if isinstance(pipeline, str):
        episode_run["agent"] = pipeline
    if isinstance(data.get("security"), bool):  # AgentDojo's own verdict: the injection task succeeded
        episode_run["label"] = POSITIVE if data["security"] else SAFE
        episode_run["fired"] = data["security"]
    if detector.get("channel") == "state":
        unknowns.append(unknown("/episode/state", "TraceLogger run files do not record the post-run environment"))
    unknowns.append(unknown("/episode/decision_step", "AgentDojo does not record at which step the agent decided"))
    unknowns += [unknown("/canaries", NOTE_CANARIES), unknown("/provenance/payload_generator", NOTE_PROVENANCE)]

    version = data.get("benchmark_version")
    version = version[1:] if isinstance(version, str) and version.startswith("v") else version
    run: dict[str, Any] = {"suite": suite_name, "user_task": ut_id, "injection_task": it_id}
    for key, value in (("agent", pipeline), ("attack", attack)):
        if isinstance(value, str):
            run[key] = value
    run.update(options.run)
    episode: dict[str, Any] = {
        "litmus": TAG,
        "id": f"agentdojo-run/{pipeline}/{suite_name}/{ut_id}/{attack}/{it_id}",
        "benchmark": _benchmark(version if isinstance(version, str) else None, f"{suite_name}/{ut_id}/{it_id}"),
        "run": run,
        "context": context,
        "detector": detector,
        "controls": controls,
        "episode": episode_run,
        "unknowns": unknowns,
        "extra": {"agentdojo": {k: data.get(k) for k in ("utility", "security", "error", "injections",
                                                           "agentdojo_package_version", "duration")}},
    }
    if not controls:
        del episode["controls"]
    return episode


class _ControlRun:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.conv = Conversation(data["messages"], [])

    def control(self, label_known: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"source": "harness", "transcript": self.conv.transcript, "dispatch": self.conv.dispatch}
        utility = self.data.get("utility")
        if label_known and isinstance(utility, bool):
            out["label"] = POSITIVE if utility else SAFE
            out["fired"] = utility
        if self.data.get("error"):
            out["error"] = str(self.data["error"])
        return out


def _control_run(path: Path, suite: str, task: str, pipeline: Any) -> _ControlRun | None:
    data = _read_run(path)
    if data is None or data.get("suite_name") != suite or data.get("user_task_id") != task:
        return None
    if data.get("injection_task_id") is not None or data.get("pipeline_name") != pipeline:
        return None
    return _ControlRun(data)


class Conversation:
    """A TraceLogger message list as episode messages (each with its index as `step`), the context
    before the agent's final answer, and the dispatch records derived from its calls."""

    def __init__(self, messages: list[Any], payloads: list[str]) -> None:
        self.found: set[int] = set()
        self.system_prompt: str | None = None
        answered = {m.get("tool_call_id") for m in messages if isinstance(m, dict) and m.get("role") == "tool"}
        self.transcript: list[dict[str, Any]] = []
        self.dispatch: list[dict[str, Any]] = []
        for step, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
                raise ValueError(f"messages[{step}] is not a message")
            self.transcript.append(self._message(m, step, payloads))
            for call in m.get("tool_calls") or []:
                self.dispatch.append(_record(call, step, answered))
        first = self.transcript[0] if self.transcript else None
        if first is not None and first["role"] == "system" and isinstance(first.get("content"), str):
            self.system_prompt = first["content"]
        # What the agent received before its final answer: everything but a last assistant message.
        cut = len(self.transcript)
        if cut and self.transcript[-1]["role"] == "assistant" and not messages[-1].get("tool_calls"):
            cut -= 1
        start = 1 if self.system_prompt is not None else 0
        self.context_messages = self.transcript[start:cut]

    def _message(self, m: dict[str, Any], step: int, payloads: list[str]) -> dict[str, Any]:
        role = m["role"]
        out: dict[str, Any] = {"role": role}
        content = m.get("content")
        texts = _texts(content)
        if role == "tool" and payloads and texts is not None:
            parts: list[dict[str, Any]] = []
            for t in texts:
                p, found = split_injected(t, payloads)
                parts += p
                self.found |= found
            out["content"] = parts
        elif role == "system" and texts is not None:
            out["content"] = "".join(texts)
        elif texts is not None:
            out["content"] = [text_part(t) for t in texts]
        elif content is not None:
            out["content"] = content if isinstance(content, (str, list)) else json.dumps(content)
        if role == "tool":
            call = m.get("tool_call") or {}
            if isinstance(call.get("function"), str):
                out["name"] = call["function"]
            if isinstance(m.get("tool_call_id"), str):
                out["tool_call_id"] = m["tool_call_id"]
            if m.get("error"):  # what the agent is shown when the tool raised
                out.setdefault("content", [])
                if isinstance(out["content"], list):
                    out["content"].append({"type": "tool_error", "text": str(m["error"])})
        if m.get("tool_calls"):
            out["tool_calls"] = m["tool_calls"]
        out["step"] = step
        return out


def _texts(content: Any) -> list[str] | None:
    """AgentDojo content: a string, or parts `{type: text, content}` (read as text)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return [str(p.get("content", p.get("text", ""))) for p in content]
    return None


def _record(call: dict[str, Any], step: int, answered: set[Any]) -> dict[str, Any]:
    rec: dict[str, Any] = {"tool": call["function"], "arguments": call.get("args") or {}, "step": step}
    if isinstance(call.get("id"), str):
        rec["id"] = call["id"]
    if call.get("id") in answered:
        rec["decision"] = "execute"  # derived: the log holds this call's result, so it was dispatched
    else:
        rec["dispatched"] = False  # requested but no result logged: what became of it is unknown
    return rec
