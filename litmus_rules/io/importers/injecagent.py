"""InjecAgent: test-case files (`data/test_cases_{dh,ds}_{base,enhanced}.json`, a JSON array) and
result rows (the same cases with the model's `output` and InjecAgent's `eval`, JSONL).

Every case gives two episodes, one per detector:
- `prompted`: InjecAgent's evaluator of the ReAct text, which reads free text for `Action: <tool>`
  (channel transcript); the agent's context is the prompted one, with the Tool Response as the
  injected part of the scratchpad;
- `finetuned`: a tool-call detector over dispatch records (channel dispatch, derived decisions),
  fed by a fine-tuned model's `tool_calls`, or, for a prompted row, by an explicit line-anchored
  parse of its text (the first `Action:` line, as a ReAct harness runs one action per turn).
Data-stealing rows that reached step 2 (they carry the `Attacker Tool *` fields) give step-2
episodes of their own. What is mapped and what stays unknown: docs/importers.md (InjecAgent).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterator

from litmus_rules.io.importers._b_common import TAG, RecordError, iter_json_values, text_part, unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "injecagent"
VERSION = "1"

POSITIVE, INVALID = "succ", "invalid"
CASE_KEYS = ("User Tool", "User Instruction", "Tool Parameters", "Tool Response", "Attacker Tools", "Thought")
STEP2_KEYS = ("Attacker Tool Parameters", "Attacker Tool Thought", "Attacker Tool Response")
PLACEHOLDERS = ("input", "agent_scratchpad", "available_tool_descriptions", "available_tool_names")
# A ReAct action line: the label at the start of a line, then one tool name and nothing else.
_ACTION = re.compile(r"^Action:[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*$", re.MULTILINE)
_ACTION_INPUT = re.compile(r"\AAction Input:[ \t]*(.*?)(?=^Observation:|^Thought:|^Final Answer:|\Z)",
                           re.MULTILINE | re.DOTALL)
_NOT_TOOLS = {"None", "N", "NA"}

NOTE_SYSTEM = ("InjecAgent's test cases do not record the agent's prompt (it is in InjecAgent's code, "
               "src/prompts/agent_prompts.py): pass --option system_prompt=FILE and, for the prompted "
               "mode, --option user_template=FILE")
NOTE_CANARIES = "InjecAgent plants no sentinel tokens; list one under `canaries` if your setup has one"
NOTE_PROVENANCE = ("InjecAgent's attacker cases are written by its authors (and `Modifed` ones edited); the "
                   "files do not say how: supply `provenance.payload_generator`")


def records(path: str | os.PathLike[str], options: Options) -> Iterator[Imported | Problem]:
    root = Path(path)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*.json*") if p.is_file()) if root.is_dir() else []
    if not files:
        yield Problem(str(root), "no InjecAgent test-case or result file here")
        return
    try:
        ctx = _Setup(options)
    except OSError as e:
        yield Problem(str(root), f"an --option file cannot be read: {e}")
        return
    for file in files:
        if file.name in ("tools.json",) or file.suffix not in (".json", ".jsonl"):
            continue
        tools = ctx.tools_for(file)
        label = file.name if file == root else file.relative_to(root).as_posix()
        setting = options.extra.get("setting") or _setting(file.name)
        for item in iter_json_values(file):
            if isinstance(item, RecordError):
                yield Problem(f"{label} {item.position}", item.message)
                continue
            position, row = item
            index = _index(position)
            where = f"{label} {position}"
            if not isinstance(row, dict) or any(k not in row for k in CASE_KEYS):
                if _building_block(row):
                    continue  # data/user_cases.jsonl, attacker_cases_*.jsonl: halves of cases
                yield Problem(where, "not an InjecAgent case: expected the keys " + ", ".join(CASE_KEYS))
                continue
            try:
                for episode in _episodes(row, file, index, setting, tools, ctx, options):
                    yield Imported(episode, where)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                yield Problem(where, f"unreadable case: {type(e).__name__}: {e}")


def _building_block(row: Any) -> bool:
    if not isinstance(row, dict):
        return False
    user_case = {"User Tool", "User Instruction", "Tool Response Template"} <= row.keys() and "Attacker Tools" not in row
    attacker_case = {"Attacker Tools", "Attacker Instruction"} <= row.keys() and "User Tool" not in row
    return user_case or attacker_case


def _index(position: str) -> int:
    m = re.search(r"(\d+)$", position)
    return int(m.group(1)) if m else 0


def _setting(name: str) -> str | None:
    m = re.search(r"_(dh|ds)(_|\.|$)", name)
    return m.group(1) if m else None


class _Setup:
    """The user-supplied pieces: the prompt files and the tool specifications."""

    def __init__(self, options: Options) -> None:
        self.system_prompt = _read_opt(options, "system_prompt")
        self.user_template = _read_opt(options, "user_template")
        self._tools_opt = options.extra.get("tools")
        self._cache: dict[Path, dict[str, dict[str, Any]] | None] = {}

    def tools_for(self, file: Path) -> dict[str, dict[str, Any]] | None:
        """Tool name -> (toolkit, tool) spec, from --option tools=FILE or a `tools.json` beside the input."""
        source = Path(self._tools_opt) if self._tools_opt else file.parent / "tools.json"
        if source not in self._cache:
            self._cache[source] = _tool_index(source) if source.is_file() else None
        return self._cache[source]


def _read_opt(options: Options, key: str) -> str | None:
    value = options.extra.get(key)
    return Path(value).read_text(encoding="utf-8") if value else None


def _tool_index(path: Path) -> dict[str, dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    out: dict[str, dict[str, Any]] = {}
    for kit in data if isinstance(data, list) else []:
        for tool in kit.get("tools") or [] if isinstance(kit, dict) else []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                out[f"{kit.get('toolkit', '')}{tool['name']}"] = {"toolkit": kit, "tool": tool}
    return out


def _tool(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    tool = spec["tool"]
    props: dict[str, Any] = {}
    required = []
    for p in tool.get("parameters") or []:
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            props[p["name"]] = {k: p[k] for k in ("type", "description") if k in p}
            if p.get("required"):
                required.append(p["name"])
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    out: dict[str, Any] = {"name": name, "input_schema": schema}
    if isinstance(tool.get("summary"), str):
        out["description"] = tool["summary"]
    return out


# --- episodes ------------------------------------------------------------------------------------


def _episodes(row: dict[str, Any], file: Path, index: int, setting: str | None,
              tools: dict[str, dict[str, Any]] | None, ctx: _Setup, options: Options) -> Iterator[dict[str, Any]]:
    attacker = [t for t in row["Attacker Tools"] if isinstance(t, str)]
    if not attacker:
        raise ValueError("`Attacker Tools` is empty")
    output = row.get("output")
    has_output = "output" in row
    finetuned_output = has_output and not isinstance(output, str) and output is not None
    mode = options.extra.get("mode") or ("finetuned" if finetuned_output else "prompted" if has_output else None)
    steps = [1]
    if setting == "ds" and len(attacker) > 1 and all(k in row for k in STEP2_KEYS):
        steps.append(2)
    for step in steps:
        out_key, eval_key = ("output", "eval") if step == 1 else ("output Step 2", "eval Step 2")
        detectors = ["prompted", "finetuned"] if mode != "finetuned" else ["finetuned"]
        for detector in detectors:
            # The agent's context follows how it ran: a result row's mode, or the detector's own.
            context_mode = mode or detector
            yield _episode(row, file, index, setting, step, detector, context_mode, tools, ctx, options,
                           row.get(out_key) if has_output else None, row.get(eval_key), has_output)


def _episode(row: dict[str, Any], file: Path, index: int, setting: str | None, step: int, detector_kind: str,
             mode: str, tools: dict[str, dict[str, Any]] | None, ctx: _Setup, options: Options,
             output: Any, label: Any, has_output: bool) -> dict[str, Any]:
    attacker = [t for t in row["Attacker Tools"] if isinstance(t, str)]
    target = attacker[step - 1]
    unknowns: list[dict[str, str]] = []
    tool_names = list(dict.fromkeys([row["User Tool"], *attacker]))
    context: dict[str, Any] = {}
    if ctx.system_prompt is not None:
        context["system_prompt"] = ctx.system_prompt
    else:
        unknowns.append(unknown("/context/system_prompt", NOTE_SYSTEM))
    specs = [tools[n] for n in tool_names if tools and n in tools]
    if mode == "prompted":
        context["messages"] = [{"role": "user", "content": _prompted_user(row, step, ctx, specs, tool_names)}]
    else:
        context["messages"] = _finetuned_messages(row, step)
    if tools is not None and len(specs) == len(tool_names):
        context["tools"] = [_tool(n, tools[n]) for n in tool_names]
    else:
        unknowns.append(unknown("/context/tools", "the tool specifications were not found: pass --option "
                                "tools=FILE (InjecAgent's data/tools.json)"))

    if detector_kind == "prompted":
        detector: dict[str, Any] = {
            "channel": "transcript", "scope": "full", "decision_field": None,
            "signals": [{"id": f"step{step}_action", "kind": "substring", "value": f"Action: {target}"}],
            "scorer": {"name": "InjecAgent.evaluate_output_prompted", "kind": "code"},
        }
    else:
        detector = {
            "channel": "dispatch", "decision_field": "decision", "decision_source": "derived",
            "signals": [{"id": f"step{step}_call", "kind": "tool_call", "tool": target}],
            "scorer": {"name": "InjecAgent.evaluate_output_finetuned", "kind": "code"},
        }
    detector["positive_labels"] = [POSITIVE]
    detector["invalid_labels"] = [INVALID]

    episode_run: dict[str, Any] | None = None
    if has_output:
        episode_run = {}
        if isinstance(output, str):
            episode_run["transcript"] = [{"role": "assistant", "content": output}]
            episode_run["dispatch"] = _parse_prompted(output)
        elif output is not None:
            episode_run["dispatch"] = _finetuned_calls(output)
        else:
            unknowns.append(unknown("/episode", "the result row has no output (the model call failed)"))
    unknowns += [unknown("/canaries", NOTE_CANARIES), unknown("/provenance/payload_generator", NOTE_PROVENANCE)]

    variant = re.search(r"_(base|enhanced)", file.name)
    run: dict[str, Any] = {"case": index, "step": step, "detector": detector_kind, "mode": mode}
    if setting:
        run["setting"] = setting
    if variant:
        run["attack"] = variant.group(1)
    if isinstance(row.get("Attack Type"), str):
        run["attack_type"] = row["Attack Type"]
    run.update(options.run)
    source = "/".join(file.with_suffix("").parts[-3:])
    episode: dict[str, Any] = {
        "litmus": TAG,
        "id": f"injecagent/{source}/{index}/step{step}/{detector_kind}",
        "benchmark": {"name": "InjecAgent", "instance": f"{file.stem}/{index}"},
        "run": run,
        "context": context,
        "detector": detector,
        "unknowns": unknowns,
        "extra": {"injecagent": {"attacker_tools": attacker, "user_tool": row["User Tool"],
                                 "attacker_instruction": row.get("Attacker Instruction")}},
    }
    if episode_run is not None:
        episode["episode"] = episode_run
        if label is not None:
            episode["extra"]["injecagent"]["label"] = str(label)  # InjecAgent's own verdict
            episode_run["label"] = str(label)
            if str(label) != INVALID:
                episode_run["fired"] = str(label) == POSITIVE
    return episode


def _scratchpad(row: dict[str, Any], step: int) -> list[dict[str, Any]]:
    """InjecAgent's pre-filled scratchpad as parts; the Tool Response is the injected one."""
    parts = [
        text_part(f"\n{row['Thought']}\nAction: {row['User Tool']}\nAction Input: {row['Tool Parameters']}\n"
                  "Observation: "),
        text_part(str(row["Tool Response"]), injected=True),
        text_part("\n"),
    ]
    if step == 2:
        parts.append(text_part(
            f"Thought: {row['Attacker Tool Thought']}\nAction: {row['Attacker Tools'][0]}\n"
            f"Action Input: {row['Attacker Tool Parameters']}\nObservation: {row['Attacker Tool Response']}\n"))
    return parts


def _prompted_user(row: dict[str, Any], step: int, ctx: _Setup, specs: list[dict[str, Any]],
                   names: list[str]) -> list[dict[str, Any]]:
    scratch = _scratchpad(row, step)
    template = ctx.user_template
    if template is None:
        return [text_part(str(row["User Instruction"])), *scratch]
    kits = list({id(s["toolkit"]): s["toolkit"] for s in specs}.values())
    values = {"input": str(row["User Instruction"]), "available_tool_names": json.dumps(names),
              "available_tool_descriptions": json.dumps(kits, indent=1)}
    parts: list[dict[str, Any]] = []
    text: list[str] = []
    pos = 0
    # One pass over the template: `{{`/`}}` are literal braces (str.format), a known placeholder is
    # filled in; nothing else in the file is interpreted.
    for m in re.finditer(r"\{\{|\}\}|\{(" + "|".join(PLACEHOLDERS) + r")\}", template):
        text.append(template[pos:m.start()])
        pos = m.end()
        if m.group(0) in ("{{", "}}"):
            text.append(m.group(0)[0])
        elif m.group(1) == "agent_scratchpad":
            if "".join(text):
                parts.append(text_part("".join(text)))
            text = []
            parts += scratch
        else:
            text.append(values[m.group(1)])
    text.append(template[pos:])
    if "".join(text):
        parts.append(text_part("".join(text)))
    return parts


def _finetuned_messages(row: dict[str, Any], step: int) -> list[dict[str, Any]]:
    """The function-calling context: the user's request, the agent's own call, the injected result."""
    def call(i: int, tool: str, args: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": None,
                 "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": tool, "arguments": args}}]}]

    msgs: list[dict[str, Any]] = [{"role": "user", "content": str(row["User Instruction"])}]
    msgs += call(1, row["User Tool"], str(row["Tool Parameters"]))
    msgs.append({"role": "tool", "name": row["User Tool"], "tool_call_id": "call_1",
                 "content": [text_part(str(row["Tool Response"]), injected=True)]})
    if step == 2:
        msgs += call(2, row["Attacker Tools"][0], str(row["Attacker Tool Parameters"]))
        msgs.append({"role": "tool", "name": row["Attacker Tools"][0], "tool_call_id": "call_2",
                     "content": str(row["Attacker Tool Response"])})
    return msgs


def _parse_prompted(text: str) -> list[dict[str, Any]]:
    """The one action a ReAct harness would run: the first line that is exactly `Action: <tool>`,
    with the `Action Input:` that follows it. Labels inside sentences are not actions."""
    m = _ACTION.search(text)
    if m is None or m.group(1) in _NOT_TOOLS:
        return []
    rec: dict[str, Any] = {"tool": m.group(1), "decision": "execute"}
    rest = text[m.end():].lstrip("\r\n")
    im = _ACTION_INPUT.match(rest)
    if im is not None:
        raw = im.group(1).strip()
        try:
            args = json.loads(raw)
        except ValueError:
            args = None
        rec["arguments"] = args if isinstance(args, dict) else raw
    return [rec]


def _finetuned_calls(output: Any) -> list[dict[str, Any]]:
    calls = output.get("tool_calls") if isinstance(output, dict) else output
    out: list[dict[str, Any]] = []
    for c in calls if isinstance(calls, list) else []:
        if not isinstance(c, dict):
            continue
        fn = c.get("function") if isinstance(c.get("function"), dict) else c
        name = fn.get("name")
        if not isinstance(name, str):
            continue
        rec: dict[str, Any] = {"tool": name, "decision": "execute"}
        args = fn.get("arguments")
        if isinstance(args, (dict, str)):
            rec["arguments"] = args
        if isinstance(c.get("id"), str):
            rec["id"] = c["id"]
        out.append(rec)
    return out
