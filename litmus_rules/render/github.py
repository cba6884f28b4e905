"""`check --format github`: GitHub Actions workflow commands, one `::error` annotation per
REJECTED or ERROR episode at its file and line (the verdict's `source`), and a closing `::notice`
with the counts.

Escaping follows the runner's rules (actions/toolkit `command.ts`): in the message `%`, CR and LF
are percent-encoded; in a property value `:` and `,` too. A line that starts with `::` inside a
message therefore cannot start a command of its own.
"""

from __future__ import annotations

from typing import Any

from litmus_rules.render._located import file_and_line, reasons


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, properties: dict[str, Any], message: str) -> str:
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}\n"


def annotation(verdict: dict[str, Any]) -> str:
    """The annotation of one verdict (a `check --format json` verdict object); SCORED has none."""
    kind = verdict.get("verdict")
    if kind not in ("REJECTED", "ERROR"):
        return ""
    file, line = file_and_line(verdict)
    ident = verdict.get("id")
    label = ident if isinstance(ident, str) else "<no id>"
    found = reasons(verdict)
    if kind == "REJECTED":
        title = f"REJECTED {label}: " + ", ".join(str(r.get("rule")) for r in found)
        body = [f"{r.get('rule')}: {r.get('message')}" for r in found]
    else:
        title = f"ERROR {label}"
        body = [str(r.get("message")) for r in found] or ["input error"]
    if isinstance(verdict.get("checked"), str):  # a preflighted copy, annotated at the file it was made from
        body.append(f"checked: {verdict['checked']}")
    return _command("error", {"file": file, "line": line, "title": title}, "\n".join(body))


def summary(counts: dict[str, int], total: int) -> str:
    text = (f"litmus-rules: {total} episode(s): {counts.get('SCORED', 0)} SCORED, "
            f"{counts.get('REJECTED', 0)} REJECTED, {counts.get('ERROR', 0)} ERROR")
    return _command("notice", {"title": "litmus-rules check"}, text)
