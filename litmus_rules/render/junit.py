"""`check --format junit`: JUnit XML (the Ant/Surefire dialect CI servers read; valid against the
Jenkins `junit-10.xsd`). One `<testcase>` per episode: SCORED passes, REJECTED is a `<failure>`
listing its reasons (rule, message, witnesses), ERROR is an `<error>` with the input problem.

The `<testsuite>` attributes carry the counts, so the test cases are kept (as XML text, a few
hundred bytes each) until the batch is done. Text from episodes (ids, messages, matched text) is
untrusted: characters XML 1.0 cannot carry (controls, lone surrogates) are written as `\\uXXXX`.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator
from xml.sax.saxutils import escape, quoteattr

from litmus_rules.render._located import file_and_line, reasons

# XML 1.0's Char production, negated: what may not appear in a document at all.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: Any) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def _attr(text: Any) -> str:
    return quoteattr(_clean(text), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def _witness(w: dict[str, Any]) -> str:
    where = f"{w.get('origin')}{' (injected)' if w.get('injected') else ''}"
    return f"    witness: {where}, {w.get('transform')}, {w.get('kind')}: {w.get('matched')!r}"


def testcase(verdict: dict[str, Any]) -> str:
    """One episode's `<testcase>`: its name is the episode id, its class name the file."""
    file, line = file_and_line(verdict)
    ident = verdict.get("id")
    name = ident if isinstance(ident, str) and ident else f"<no id> ({verdict.get('source') or 'unknown source'})"
    where = f"{file}:{line}" if line is not None else (file or "")
    head = f"    <testcase name={_attr(name)} classname={_attr(file or 'litmus')}"
    kind = verdict.get("verdict")
    found = reasons(verdict)
    checked = verdict.get("checked")  # a preflighted copy: `source` names the file it was made from
    read = f"\nchecked: {checked}" if isinstance(checked, str) else ""
    if kind == "REJECTED":
        lines = [f"REJECTED {name} ({where}){read}"]
        for r in found:
            lines.append(f"  {r.get('rule')} [{r.get('kind')}]: {r.get('message')}")
            lines.extend(_witness(w) for w in r.get("witnesses") or () if isinstance(w, dict))
        message = "; ".join(f"{r.get('rule')}: {r.get('message')}" for r in found)
        body = f'      <failure type="REJECTED" message={_attr(message)}>{escape(_clean(chr(10).join(lines)))}</failure>\n'
    elif kind == "ERROR":
        message = "; ".join(str(r.get("message")) for r in found) or "input error"
        codes = ", ".join(str(r.get("code")) for r in found if r.get("code"))
        text = f"ERROR {name} ({where}){' ' + codes if codes else ''}{read}\n{message}"
        body = f'      <error type="ERROR" message={_attr(message)}>{escape(_clean(text))}</error>\n'
    else:
        cls = verdict.get("classification")
        out = f"SCORED {name} ({where}): classification {cls if cls is not None else 'undecided'}"
        body = f"      <system-out>{escape(_clean(out))}</system-out>\n"
    return f"{head}>\n{body}    </testcase>\n"


def document(cases: Iterable[str], counts: dict[str, int], ruleset: dict[str, Any], seconds: float,
             timestamp: str) -> Iterator[str]:
    """The whole XML document, as chunks: one `<testsuite>` for the batch under `<testsuites>`."""
    tests = sum(counts.values())
    failures, errors = counts.get("REJECTED", 0), counts.get("ERROR", 0)
    name = f"litmus-rules {ruleset.get('name')} {ruleset.get('version')}"
    totals = f"tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.3f}\""
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield f"<testsuites name={_attr(name)} {totals}>\n"
    yield (f"  <testsuite name={_attr(name)} {totals} skipped=\"0\" timestamp={_attr(timestamp)}>\n"
           "    <properties>\n")
    for key in ("name", "version", "hash"):
        yield f"      <property name={_attr('ruleset.' + key)} value={_attr(ruleset.get(key, ''))}/>\n"
    yield "    </properties>\n"
    yield from cases
    yield "  </testsuite>\n</testsuites>\n"
