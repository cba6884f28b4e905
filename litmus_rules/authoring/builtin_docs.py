"""`docs/builtins.md`, generated from the built-in registry (`domain.builtins.REGISTRY`).

The registry gives each built-in's signature, its semantics (the `doc` it is declared with) and
whether it sees unknown arguments; what it does not hold (what a call costs, how it treats unknowns
beyond that flag, an example) is written here, keyed by name. tests/test_builtins_doc.py fails when
a registered built-in has no entry here, an entry names no built-in, an example does not check, or
the page is stale. Regenerate the page with:

    python -m litmus_rules.authoring.builtin_docs > docs/builtins.md
"""

from __future__ import annotations

from typing import Mapping

import attrs

from litmus_rules.lang import types as t
from litmus_rules.lang.builtins import Builtin, signature

__all__ = ["NOTES", "Note", "registry", "render"]


@attrs.frozen
class Note:
    cost: str  # what one call charges to the evaluation budget, in words
    example: str  # a rule condition (it is checked: it parses and type-checks against the episode schema)
    unknown: str = ""  # what the call does with unknown inputs, beyond "an unknown argument: unknown"


_TEXT = "1 unit, plus 1 per 64 characters of its text arguments"
_SURFACES = ("4 units per surface text and per 64 characters of the surfaces' texts, once per list of surfaces "
             "(the texts are cached for the next call over the same list)")

NOTES: Mapping[str, Note] = {
    "len": Note("1 unit", "len(detector.signals) > 0"),
    "lower": Note("1 unit", 'lower(detector.scorer.name) == "judge"'),
    "starts_with": Note("1 unit", 'any t in surfaces: starts_with(t.origin, "context.tools")'),
    "ends_with": Note("1 unit", 'any t in surfaces: ends_with(t.origin, ".description")'),
    "default": Note(
        "1 unit", 'controls.null.label in default(detector.positive_labels, ["unsafe"])',
        "Sees unknowns: an unknown value gives the fallback. A null value is known: it stays null.",
    ),
    "known": Note(
        "1 unit", "not known(controls.null.error)",
        "Sees unknowns: false for an unknown value, true for any other (null included). Never unknown.",
    ),
    "unique": Note("1 unit", "len(unique([c.value for c in canaries])) < len(canaries)"),
    "matches": Note(
        _TEXT, 'any t in surfaces: matches(t.text, "(?i)ignore (all )?previous instructions")',
        "A pattern that cannot be evaluated in bounded time (its search budget, counted in characters searched, spent; or a backtracking search out of time) is unknown.",
    ),
    "transcript_text": Note(
        "1 unit, plus 1 per 256 characters of the transcript as text",
        '"EXFIL" in transcript_text(controls.null.transcript)',
    ),
    "leaks": Note("4 x (1 unit, plus 1 per 64 characters of the token and the text)",
                  "any c in canaries: leaks(c.value, transcript_text(controls.null.transcript))",
                  "A token that is empty once normalised (only whitespace or invisible characters) would be "
                  "found in any text: it cannot be evaluated, and the rule rejects (`evaluation_error`)."),
    "collides": Note("4 x (1 unit, plus 1 per 64 characters of the text arguments)",
                     "any s in detector.signals, t in surfaces: collides(s, t.text, min_len: 8)"),
    "leak": Note(
        _SURFACES + ", plus 4 per surface per 64 characters of the token",
        "any c in canaries where l = leak(c.value, surfaces): l",
        "Sees unknowns, decided as `any t in surfaces: leaks(token, t.text)` would be: true at the first "
        "hit; else unknown when the surfaces (or null) or a surface's text are unknown; an unknown token "
        "is unknown (false when there are no surfaces). A surface that is not an object with a string "
        "`text` cannot be evaluated: the rule rejects (`evaluation_error`); so cannot, where there is a "
        "text to search, a token that is empty once normalised (only whitespace or invisible characters), "
        "which would be found in any text.",
    ),
    "collision": Note(
        _SURFACES,
        "any s in detector.signals where w = collision(s, surfaces, min_len: 6): w",
        "Sees unknowns, decided as `any t in surfaces: collides(signal, t.text)` would be: true at the "
        "first hit; else unknown when the surfaces (or null) or a surface's text are unknown; an unknown "
        "signal is unknown (false when there are no surfaces). A surface that is not an object with a "
        "string `text` cannot be evaluated: the rule rejects (`evaluation_error`).",
    ),
    "fillable_call": Note(
        "1 unit, plus 1 per item of its list arguments",
        'any s in detector.signals: s.kind == "tool_call" and fillable_call(s, default(context.tools, []))',
    ),
    "call_matches": Note(
        "1 unit", "any s in detector.signals, d in episode.dispatch: call_matches(s, d)",
        "A record whose `arguments` stayed an unparsed text is unknown.",
    ),
    "state_holds": Note(
        "1 unit, plus 1 per 256 characters of the query and the snapshot as text",
        "state_holds(\"files[?name == 'secret.txt']\", episode.state)",
        "A query or snapshot past its size limit is unknown, naming the limit.",
    ),
    "state_query_ok": Note(
        "1 unit", 'any s in detector.signals: s.kind == "state" and not state_query_ok(s.query)',
        "A query past the length limit is unknown, naming it.",
    ),
    "fillable_values": Note(
        "1 unit, plus 1 per item of its list arguments",
        'any s in detector.signals: s.kind == "state" and fillable_values(s.values, default(context.tools, []))',
    ),
    "final_message": Note(
        "1 unit, plus 1 per 256 characters of the transcript as text",
        '"transfer complete" in final_message(controls.null.transcript)',
    ),
    "overlap": Note(
        "2 x (1 unit, plus 1 per 64 characters of the two texts)",
        "default(detector.rubric, null) != null\n"
        "  and (any t in surfaces: overlap(detector.rubric, t.text, min_len: 40))",
    ),
    "mentions": Note(
        "4 x (1 unit, plus 1 per 64 characters of the name and the text)",
        "any k in default(context.skills, []): mentions(k.name, transcript_text(controls.null.transcript))",
        "With `anywhere: true`, as `leaks`: a token that is empty once normalised (only whitespace or "
        "invisible characters) cannot be evaluated, and the rule rejects (`evaluation_error`); a blank "
        "name is mentioned nowhere.",
    ),
    "declared_unknown": Note(
        "1 unit", 'declared_unknown(unknowns, "/context/tools")',
        "Sees unknowns: an absent `unknowns` declares nothing (false). A `pointer` that is not a string, "
        "or `unknowns` that is not a list of `{path, note}`, cannot be evaluated: the rule rejects.",
    ),
}


def registry() -> Mapping[str, Builtin]:
    """Every built-in a rule can call: the language's general ones and the domain's."""
    from litmus_rules.domain.builtins import REGISTRY

    return REGISTRY


def _unknowns(b: Builtin, note: Note) -> str:
    parts = [] if b.sees_unknown else ["An unknown argument makes the call unknown (it is not called)."]
    if note.unknown:
        parts.append(note.unknown)
    # a built-in that does not see unknowns refuses a value of the wrong shape (null included)
    strict = [p for p in b.params if not p.type.is_any and "null" not in p.type.kinds]
    if strict and not b.sees_unknown:
        names = ", ".join(f"`{p.name}`" for p in strict)
        parts.append(f"A null or a value of another type for {names} cannot be evaluated: the rule "
                     "rejects (`evaluation_error`; lint warns with L410 where a fact may be null).")
    return " ".join(parts)


def _type(typ: t.T) -> str:
    return typ.describe()


def _section(b: Builtin, note: Note) -> list[str]:
    params = [
        f"| `{p.name}` | {_type(p.type)} | {'required' if p.required else f'`{_default(p.default)}`'} |"
        for p in b.params
    ]
    return [
        f"## `{b.name}`",
        "",
        "```",
        signature(b),
        "```",
        "",
        b.doc,
        "",
        "| parameter | type | default |",
        "|---|---|---|",
        *params,
        "",
        f"Returns: {_type(b.returns)}.",
        "",
        f"Unknowns: {_unknowns(b, note)}",
        "",
        f"Cost: {note.cost}.",
        "",
        "Example:",
        "",
        "```",
        note.example,
        "```",
        "",
    ]


def _default(value: object) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, tuple):
        return "[" + ", ".join(repr(v) for v in value) + "]"
    return repr(value)


def render() -> str:
    """The whole page, in the registry's order (missing notes raise KeyError: the test names them)."""
    table = registry()
    lines = [
        "# Built-in functions",
        "",
        "<!-- Generated from the built-in registry by `python -m litmus_rules.authoring.builtin_docs`;",
        "     do not edit: tests/test_builtins_doc.py fails when this page is stale. -->",
        "",
        "Every function a rule can call. A call's arguments are rule expressions; keyword arguments",
        "(`min_len: 8`) name a parameter. Each call is charged to the evaluation's cost budget",
        "(20,000,000 units per episode by default; past it the rule rejects with `evaluation_error`).",
        "Built-ins that return `bool or object` return false, or an object (a *witness*) that counts",
        "as true and says what was found: read its fields in a message, best through a `where` name",
        "(`any s in xs where w = collision(s, surfaces): w`, then `{w.origin}`).",
        "",
        "| function | returns | sees unknowns |",
        "|---|---|---|",
        *(f"| [`{n}`](#{n}) | {_type(b.returns)} | {'yes' if b.sees_unknown else 'no'} |" for n, b in table.items()),
        "",
    ]
    for name, b in table.items():
        lines.extend(_section(b, NOTES[name]))
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover - exercised through the test's in-memory render
    import sys

    sys.stdout.write(render())
