"""`check --format sarif`: SARIF 2.1.0, for code-scanning views.

- `tool.driver.rules`: one reportingDescriptor per rule of the ruleset, from its doc comment, its
  `cite` and its `tags` (and one for `input`, the rule name of an ERROR's reason);
- one result per reason of a REJECTED episode and one per ERROR, at the episode's file and line
  (the verdict's `source`: for a preflighted copy, the file it was made from; the copy that was
  read is the result's `checked` property), level `error`;
- each witness's origin (the path in the episode where the leaked text was found) as a logical
  location, so a viewer shows where in the episode, not only which file.

SCORED episodes make no result. The results are streamed: the document is written as it goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator
from urllib.parse import quote

from litmus_rules.render._located import file_and_line, reasons
from litmus_rules.render.json import dumps

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/litmus-rules/"
INPUT_RULE = "input"


def artifact_uri(path: str) -> str:
    """A file path as a URI reference: relative paths stay relative (to the working directory,
    SARIF's `%SRCROOT%`), absolute ones become `file://` URIs."""
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return quote(p.as_posix(), safe="/._-~")


def _descriptor(rule: Any) -> dict[str, Any]:
    doc = " ".join((rule.doc or "").split())
    short = doc.split(". ")[0].rstrip(".") if doc else rule.name.replace("_", " ")
    d: dict[str, Any] = {
        "id": rule.name,
        "name": rule.name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": doc or short},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": list(rule.tags), "mode": rule.mode},
    }
    if rule.cite:
        d["help"] = {"text": f"cite: {rule.cite}"}
        d["properties"]["cite"] = rule.cite
        if rule.cite.startswith(("https://", "http://")):
            d["helpUri"] = rule.cite
    location = rule.span.short_location() if getattr(rule, "span", None) is not None else None
    if location:
        d["properties"]["location"] = location
    return d


def rule_descriptors(rules: Iterable[Any]) -> list[dict[str, Any]]:
    out = [_descriptor(r) for r in rules]
    out.append({
        "id": INPUT_RULE, "name": INPUT_RULE,
        "shortDescription": {"text": "the episode could not be read or is not a valid episode"},
        "fullDescription": {"text": "An ERROR verdict: the document is unreadable, unparseable or violates the "
                                    "episode schema, or checking it failed; it is neither scored nor rejected."},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["input"]},
    })
    return out


def results(verdict: dict[str, Any], index: dict[str, int]) -> list[dict[str, Any]]:
    """The SARIF results of one verdict (a `check --format json` verdict object)."""
    kind = verdict.get("verdict")
    if kind not in ("REJECTED", "ERROR"):
        return []
    file, line = file_and_line(verdict)
    location: dict[str, Any] = {}
    if file:
        physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(file), "uriBaseId": "%SRCROOT%"}}
        if line is not None:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    ident = verdict.get("id")
    label = ident if isinstance(ident, str) else None
    out = []
    for reason in reasons(verdict) or [{"rule": INPUT_RULE, "message": "input error"}]:
        rule = str(reason.get("rule") or INPUT_RULE) if kind == "REJECTED" else INPUT_RULE
        witnesses = [w for w in reason.get("witnesses") or () if isinstance(w, dict)]
        logical = [{"fullyQualifiedName": str(w["origin"]), "kind": "member"}
                   for w in witnesses if isinstance(w.get("origin"), str)]
        here = dict(location)
        if logical:
            here["logicalLocations"] = logical
        result: dict[str, Any] = {
            "ruleId": rule,
            "level": "error",
            "kind": "fail",
            "message": {"text": f"{kind} {label or '<no id>'}: {reason.get('message')}"},
            "locations": [here] if here else [],
            "partialFingerprints": {"litmusEpisodeRule/v1": f"{label or verdict.get('source')}:{rule}"},
            "properties": {"verdict": kind, "episode": label, "reasonKind": reason.get("kind"),
                           **({"code": reason["code"]} if reason.get("code") else {}),
                           **({"checked": verdict["checked"]} if isinstance(verdict.get("checked"), str) else {}),
                           **({"witnesses": witnesses} if witnesses else {})},
        }
        if rule in index:
            result["ruleIndex"] = index[rule]
        out.append(result)
    return out


def document(rules: Iterable[Any], ruleset: dict[str, Any], tool_version: str,
             verdicts: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The SARIF log as chunks, the results streamed one verdict at a time."""
    descriptors = rule_descriptors(rules)
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    run_head = {
        "tool": {"driver": {"name": "litmus-rules", "version": tool_version, "informationUri": INFORMATION_URI,
                            "rules": descriptors}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
        "properties": {"ruleset": ruleset},
    }
    head = dumps({"$schema": SCHEMA, "version": "2.1.0"})[:-1]
    run = dumps(run_head)[:-1]
    yield f'{head}, "runs": [{run}, "results": [\n'
    first = True
    for verdict in verdicts:
        for result in results(verdict, index):
            yield ("" if first else ",\n") + dumps(result)
            first = False
    yield "\n]}]}\n"
