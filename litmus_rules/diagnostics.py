"""The one catalogue of diagnostic codes: every `L1xx`-`L7xx` the package reports, in one table.

Modelled on cel-go's `checker/errors.go` and pyflakes' `messages.py`: a code is defined here once,
with its severity, a short kebab-case title, the stage that reports it, a one-line summary (the
docs' "meaning"), a message template and, where one text fits every case, help. Modules take their
codes from here (`code_for("unparseable-input")`), never from a local literal; the docs table is
tested against this one (`tests/test_diagnostics_catalogue.py`).

Codes are stable: tests and users match on codes, not wording. Messages follow one house style
(Cedar's): lowercase, no final period, user input in backticks, help separate. No Python class name
ever appears in a message: an unexpected exception's class is debugging detail, not for users.

Ranges: L1xx syntax, L2xx check (and load), L3xx input, L4xx lint style, L6xx evaluation, L7xx
configuration and rule-test files. This module is the base layer: it imports nothing of the package.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, NoReturn

__all__ = ["CATALOGUE", "Code", "by_stage", "code_for", "inline", "lookup", "message"]

SEVERITIES = ("error", "warning")
# Who reports a code: the docs table's "from" column.
STAGES = ("parser", "checker", "loader", "style", "input", "evaluation", "batch", "config", "test")


class Code:
    """One diagnostic: `template` is `str.format` text with named fields. A plain slotted class, not
    an attrs one (this module is imported by every start): a value, compared by every field, and
    immutable."""

    __slots__ = ("code", "severity", "title", "stage", "summary", "template", "help")

    code: str
    severity: str
    title: str
    stage: str
    summary: str
    template: str
    help: str | None

    def __init__(self, code: str, severity: str, title: str, stage: str, summary: str, template: str,
                 help: str | None = None) -> None:
        for name, value in zip(self.__slots__, (code, severity, title, stage, summary, template, help)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("Code is immutable")

    __delattr__ = __setattr__

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __repr__(self) -> str:
        return "Code(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"

    def __eq__(self, other: Any) -> bool:
        return self._fields() == other._fields() if other.__class__ is Code else NotImplemented

    def __hash__(self) -> int:
        return hash((Code, *self._fields()))

    def __reduce__(self) -> tuple[Any, ...]:
        return Code, self._fields()

    def message(self, **fields: object) -> str:
        return self.template.format(**fields)


_ENTRIES = (
    # ---- L1xx: syntax ----------------------------------------------------------------------------------
    Code("L100", "error", "syntax-error", "parser", "the rule text does not parse",
         "unexpected {found}; expected {expected}",
         "the message names a typical mistake where it recognises one, else what the parser expected"),
    # ---- L2xx: check and load --------------------------------------------------------------------------
    Code("L200", "error", "rules-do-not-check", "loader", "the rules parse but do not check (the summary of the L2xx errors)",
         "{count} error(s) in rules"),
    Code("L201", "error", "unknown-name", "checker", "a name that is no quantifier variable, let, param or fact",
         "unknown name `{name}`", "names are quantifier variables, lets, params or facts"),
    Code("L202", "error", "unknown-fact-path", "checker", "a fact path the episode schema does not have (with \"did you mean\")",
         "unknown fact path `{path}`"),
    Code("L203", "error", "unknown-function", "checker", "a call of a function that is not a built-in",
         "unknown function `{name}`"),
    Code("L204", "error", "bad-call", "checker", "a call with missing, extra or repeated arguments",
         "{problem}", "the help line shows the function's signature"),
    Code("L205", "error", "argument-type", "checker", "an argument of the wrong type",
         "argument `{param}` of `{function}` must be a {expected}, not a {got}"),
    Code("L206", "error", "unbound-placeholder", "checker", "a message placeholder naming something the rule does not bind",
         "unbound name `{name}` in message", "a message can name the rule's quantifier variables, lets, params and facts"),
    Code("L207", "error", "not-a-condition", "checker", "a condition that is not true or false",
         "{what} must be true or false, but this is a {type}"),
    Code("L208", "error", "bad-access", "checker", "a field, index or quantifier over a value that has none",
         "`{expr}` is a {type}, it has no field `{field}`"),
    Code("L209", "warning", "incomparable", "checker", "a comparison or arithmetic between types that never match",
         "comparing a {left} with a {right} with `{op}` is never true"),
    Code("L210", "error", "duplicate-name", "checker", "a name declared twice",
         "`{name}` is declared twice"),
    Code("L211", "error", "recursive-let", "checker", "a `let` that depends on itself",
         "let `{name}` depends on itself ({cycle})"),
    Code("L212", "error", "bad-param", "checker", "a param whose default is not a literal of its type",
         "the default of param `{name}` must be a literal"),
    Code("L213", "warning", "shadowed-name", "checker", "a param or let with the name of a fact",
         "`{name}` shadows the fact of the same name"),
    Code("L214", "warning", "duplicate-label", "checker", "a label that appears twice in one classifier",
         "label `{label}` appears twice in `{classifier}`"),
    Code("L215", "error", "header-mismatch", "loader", "the files of one ruleset disagree on its name or version",
         "ruleset `{name}` version `{version}` does not match `{first_name}` version `{first_version}` of the other files"),
    Code("L216", "error", "too-deep", "checker", "a let or condition nested past the evaluation depth limit",
         "let `{name}` is {depth} levels deep, counting the lets it uses; the limit is {limit}",
         "split the chain or the expression: compute the value in fewer, flatter steps"),
    Code("L220", "warning", "unused-param", "checker", "a param no rule uses",
         "param `{name}` is never used"),
    Code("L221", "warning", "unused-let", "checker", "a let no rule uses",
         "let `{name}` is never used"),
    # ---- L3xx: input (episodes) ------------------------------------------------------------------------
    Code("L300", "error", "invalid-input", "input", "an episode that cannot be used (the general input error)",
         "{detail}"),
    Code("L301", "error", "unparseable-input", "input", "not valid YAML, JSON or UTF-8, a duplicate key, an unsupported YAML tag",
         "invalid YAML: {detail}"),
    Code("L302", "error", "schema-mismatch", "input", "a document that parses but does not match the episode schema",
         "{detail}"),
    Code("L303", "error", "input-too-large", "input", "an input too large or too deeply nested to read",
         "the input {what} to be read"),
    Code("L304", "error", "not-an-object", "input", "a document that is not a mapping",
         "expected an episode object, got {kind}"),
    Code("L305", "error", "unreadable-input", "input", "a missing path, an I/O error, an input without any document",
         "cannot read `{path}`: {reason}"),
    Code("L306", "error", "not-a-regular-file", "input", "a FIFO, a device or a socket: never opened",
         "`{path}` is {kind}, not a regular file: not read"),
    Code("L307", "error", "folder-loop", "input", "a symlinked folder that leads back to one of its own ancestors",
         "symlinked folder `{path}` leads back to `{target}`, a folder above it: not walked"),
    Code("L308", "error", "duplicate-id", "batch", "an id already used by an earlier episode of the batch",
         "duplicate id `{id}` (first seen at {first}); ids must be unique in a batch"),
    Code("L310", "error", "import-bad-record", "input",
         "a record an importer cannot read (not the format's shape, a field missing or of the wrong type): skipped, the rest go on",
         "{detail}"),
    Code("L311", "error", "import-invalid-episode", "input",
         "an imported episode that does not match the episode/1.1 schema (an importer bug, or a `--detector` or `--run` value that does not fit)",
         "the imported episode is invalid: {detail}"),
    Code("L312", "error", "import-fact-not-recorded", "input",
         "the input does not record a fact every episode needs (a custom scorer's channel): supply it with `--detector`",
         "`{path}` is not recorded: {note}; supply it with --detector FILE"),
    # ---- L4xx: lint style ------------------------------------------------------------------------------
    Code("L401", "warning", "missing-doc", "style", "a rule without a doc string saying what it rejects",
         "rule `{name}` has no doc string", "add a string after the rule's name saying what it rejects and why"),
    Code("L402", "warning", "missing-cite", "style", "a rule without a `cite` naming the condition it implements",
         "rule `{name}` cites nothing", 'add `cite "..."` naming the condition of validity it implements'),
    Code("L403", "warning", "missing-message", "style", "a rule without a `because` message",
         "rule `{name}` has no `because` message", "without one, a reject only says which rule fired, not what it saw"),
    Code("L404", "warning", "message-names-no-witness", "style",
         "a message that shows none of the values that made the rule reject",
         "the message of `{name}` names none of its witnesses ({witnesses})"),
    Code("L405", "warning", "unless-never-unknown", "style",
         "`reject unless C` where C can never be unknown: it is `reject when not C`",
         "the condition of `{name}` can never be unknown, so `reject unless` here is only `reject when not`",
         "write `reject when not (...)`: keep `reject unless` for requirements whose evidence may be missing"),
    Code("L406", "warning", "classifier-missing-doc", "style", "a classifier without a doc string",
         "classifier `{name}` has no doc string", "add a string after its name saying what it classifies"),
    Code("L407", "warning", "constant-condition", "style", "a condition that reads no fact, so no episode can change it",
         "the condition of {what} reads no fact: it is the same for every episode",
         "a param switch belongs inside a condition that reads facts"),
    Code("L408", "warning", "default-never-applies", "style", "`default(x, ...)` where `x` can never be unknown",
         "`default` never applies: `{expr}` is always known", "use the value directly"),
    Code("L409", "warning", "not-formatted", "style", "a rule file that `litmus-rules fmt` would change",
         "`{path}` is not in canonical format", "run `litmus-rules fmt {path}`"),
    Code("L410", "warning", "unguarded-null", "style",
         "a fact the episode schema allows to be null, used with `in`, an ordering or a built-in that "
         "refuses null, without a null guard: every episode with that null is rejected",
         "`{expr}` may be null (the episode schema allows it), and {use} fails on null",
         "guard it (`x != null and ...` ahead of the use), or decide what null means there"),
    Code("L411", "warning", "unused-where", "style", "a `where` name that neither the body nor the message reads",
         "`where {name}` is never read", "remove it, or read it in the body or the message"),
    # ---- L6xx: evaluation ------------------------------------------------------------------------------
    Code("L600", "error", "evaluation-error", "evaluation",
         "a rule could not be evaluated on an episode (a built-in refused its input, a walk limit)",
         "{detail}"),
    Code("L601", "error", "internal-error", "evaluation",
         "an unexpected fault inside one evaluation (a bug, or memory or stack exhausted): that rule's `evaluation_error`",
         "internal error: {detail}"),
    Code("L602", "error", "value-too-large", "evaluation", "a computed list or text past its size limit",
         "value size limit: `{expr}` would build a {what} of {size} {unit}; the limit is {limit}",
         "see `values.MAX_LIST_ITEMS` and `values.MAX_TEXT_CHARS`"),
    Code("L690", "error", "internal-fault", "batch",
         "a fault inside the checker while reading, evaluating or rendering one episode: that episode's ERROR",
         "internal fault {during} this episode: {detail}: no verdict"),
    Code("L691", "error", "worker-died", "batch", "the worker process checking a unit died twice (killed, out of memory, exited)",
         "the worker process checking this input died (killed, out of memory, or exited): no verdict"),
    # ---- L7xx: configuration ---------------------------------------------------------------------------
    Code("L700", "error", "bad-config", "config",
         "a bad option or parameter, or a packaged resource (grammar, schema, rules) not found",
         "{detail}"),
    Code("L701", "error", "bad-test-file", "test",
         "a rule-test file that cannot be run as written (bad YAML, unknown key, missing base)",
         "{detail}"),
    Code("L702", "error", "config-not-toml", "config", "a config file (`litmus.toml`, `pyproject.toml`) that is not valid TOML",
         "invalid TOML: {detail}"),
    Code("L703", "error", "config-unknown-key", "config", "a key the config does not have (a typo, or an option of another tool)",
         "unknown key `{key}` in {table}", "the keys are: rules, params, ignore, format, jobs"),
    Code("L704", "error", "config-wrong-type", "config", "a config value of the wrong type",
         "`{key}` must be {expected}, not {got}"),
    Code("L705", "error", "config-bad-value", "config",
         "a config value of the right type that cannot be used (a rules path that does not exist, a code that cannot be ignored, jobs below 1)",
         "{detail}"),
    Code("L706", "error", "write-into-installed-package", "config",
         "`fmt` asked to rewrite rule files inside an installed package, where edits are lost on the next install",
         "`{path}` is inside an installed package: not rewritten",
         "copy the rules into your project (a `rules/` folder, or `rules = ...` in the config) and format the copy"),
)

CATALOGUE: Mapping[str, Code] = {c.code: c for c in _ENTRIES}
_BY_TITLE: Mapping[str, Code] = {c.title: c for c in _ENTRIES}


def lookup(code: str) -> Code:
    """The entry of `code`; a KeyError names a code missing from the catalogue (a bug)."""
    try:
        return CATALOGUE[code]
    except KeyError:
        raise KeyError(f"diagnostic code {code} is not in litmus_rules.diagnostics.CATALOGUE") from None


def code_for(title: str) -> str:
    """The code of the diagnostic titled `title` (how modules name their codes)."""
    try:
        return _BY_TITLE[title].code
    except KeyError:
        raise KeyError(f"no diagnostic titled `{title}` in litmus_rules.diagnostics.CATALOGUE") from None


def message(code: str, **fields: object) -> str:
    """The message of `code`, its template filled with `fields`."""
    return lookup(code).message(**fields)


def inline(code: str, text: str) -> str:
    """A coded failure inside a longer text (a verdict's reason): the diagnostic form
    `severity[CODE]: text`, as `lint` and the loader print it after the location."""
    return f"{lookup(code).severity}[{code}]: {text}"


def by_stage(*stages: str) -> tuple[Code, ...]:
    """The entries reported by `stages`, in code order."""
    return tuple(c for c in _ENTRIES if c.stage in stages)


def table(entries: Iterable[Code]) -> dict[str, tuple[str, str]]:
    """`{code: (severity, title)}`: the shape of the checker's and lint's code tables."""
    return {c.code: (c.severity, c.title) for c in entries}
