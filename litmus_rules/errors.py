"""The error tree and load-time diagnostics.

Everything that leaves the package on failure is a `LitmusError`. Diagnostics are values, not
exceptions: the checker collects all of them, and `RuleCheckError` carries the list. Every code, its
severity and its message template are in `diagnostics.CATALOGUE`; a fault inside the checker is a
`LitmusFault`, whose message never names a Python class.
"""

from __future__ import annotations

from typing import Any, NoReturn, Sequence

from litmus_rules import diagnostics as catalogue
from litmus_rules.diagnostics import code_for
from litmus_rules.source import Span


class LitmusError(Exception):
    """Base of every error the package raises on purpose."""

    code: str = "L000"

    def __init__(self, message: str, *, span: Span | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        if self.span is not None:
            return f"{self.span.location()}: {self.message}"
        return self.message

    def render(self) -> str:
        """Multi-line form for people: location, message, source line and caret."""
        if self.span is None:
            return str(self)
        # the shape of Diagnostic.render: one display format for every located error
        return f"{self.span.location()}: error[{self.code}]: {self.message}\n{self.span.excerpt()}"


class RuleError(LitmusError):
    """A problem in rule text."""


class LitmusSyntaxError(RuleError):
    """The rule text does not parse. `.expected` lists what the parser would have accepted."""

    code = code_for("syntax-error")

    def __init__(
        self,
        message: str,
        *,
        span: Span,
        expected: Sequence[str] = (),
        label: str | None = None,
    ) -> None:
        super().__init__(message, span=span)
        self.expected = tuple(expected)
        self.label = label


class RuleCheckError(RuleError):
    """The rules parse but do not check: carries every diagnostic, errors and warnings, sorted."""

    code = code_for("rules-do-not-check")

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        errors = [d for d in diagnostics if d.severity == "error"]
        first = errors[0] if errors else None
        summary = catalogue.message(self.code, count=len(errors))
        if first is not None:
            summary += f"; first: {first.span.location() if first.span else ''}: {first.message}"
        super().__init__(summary, span=first.span if first else None)
        self.diagnostics = tuple(diagnostics)

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


class FactsError(LitmusError):
    """An episode (the facts) is unusable: unparseable, or invalid against the episode schema.

    `source` is the file, `line` the 1-based line where known, `pointer` a JSON pointer into the
    document where known.
    """

    code = code_for("invalid-input")

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        pointer: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.source = source
        self.line = line
        self.pointer = pointer

    def __str__(self) -> str:
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.pointer is not None:
            where += f": at {self.pointer or '/'}"
        return f"{where}: {self.message}"


class EvaluationError(LitmusError):
    """A rule could not be evaluated on an episode (type mismatch, built-in failure, budget)."""

    code = code_for("evaluation-error")


class LitmusConfigError(LitmusError, ValueError):
    """Bad option or parameter, or a packaged resource (grammar, schema, rules) not found."""

    code = code_for("bad-config")


class Diagnostic:
    """One finding of the load-time checker. `code` is stable; tests assert codes, not wording.

    A plain slotted class, not an attrs one (every start imports it): a value, compared and hashed
    by every field, and immutable."""

    __slots__ = ("code", "severity", "message", "span", "help")

    code: str
    severity: str  # "error" | "warning"
    message: str
    span: Span | None
    help: str | None

    def __init__(self, code: str, severity: str, message: str, span: Span | None = None,
                 help: str | None = None) -> None:
        set_ = object.__setattr__
        set_(self, "code", code)
        set_(self, "severity", severity)
        set_(self, "message", message)
        set_(self, "span", span)
        set_(self, "help", help)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("Diagnostic is immutable")

    __delattr__ = __setattr__

    def _fields(self) -> tuple[Any, ...]:
        return self.code, self.severity, self.message, self.span, self.help

    def __repr__(self) -> str:
        return (f"Diagnostic(code={self.code!r}, severity={self.severity!r}, message={self.message!r}, "
                f"span={self.span!r}, help={self.help!r})")

    def __eq__(self, other: Any) -> bool:
        return self._fields() == other._fields() if other.__class__ is Diagnostic else NotImplemented

    def __hash__(self) -> int:
        return hash((Diagnostic, *self._fields()))

    def __reduce__(self) -> tuple[Any, ...]:
        return Diagnostic, self._fields()

    def replace(self, **changes: Any) -> Diagnostic:
        """This diagnostic with some fields changed (attrs' `evolve`)."""
        fields = dict(zip(self.__slots__, self._fields()))
        fields.update(changes)
        return Diagnostic(**fields)

    @classmethod
    def of(cls, code: str, span: Span | None, help: str | None = None, **fields: object) -> Diagnostic:
        """The diagnostic `code` as the catalogue defines it: its severity, its template filled with
        `fields`, and its help unless `help` is given."""
        entry = catalogue.lookup(code)
        return cls(code, entry.severity, entry.message(**fields), span, help if help is not None else entry.help)

    def sort_key(self) -> tuple[str, int, str]:
        if self.span is None:
            return ("", -1, self.code)
        return (self.span.source.name, self.span.start, self.code)

    def render(self) -> str:
        loc = f"{self.span.location()}: " if self.span else ""
        out = f"{loc}{self.severity}[{self.code}]: {self.message}"
        if self.span is not None:
            out += "\n" + self.span.excerpt()
        if self.help:
            out += f"\n     = help: {self.help}"
        return out

    def to_json(self) -> dict[str, object]:
        d: dict[str, object] = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.span is not None:
            d.update(file=self.span.source.name, line=self.span.line, column=self.span.column)
        if self.help:
            d["help"] = self.help
        return d


class LitmusFault(LitmusError):
    """A failure inside the checker itself, carrying a code (L601 unless said otherwise).

    What a user sees is `code` and `message`, which never names a Python class; `detail` (the
    exception's class) is for a bug report and is never part of a verdict or a message.
    """

    code = code_for("internal-error")

    def __init__(self, message: str, *, code: str | None = None, detail: str | None = None) -> None:
        super().__init__(message, code=code)
        self.detail = detail

    @classmethod
    def of(cls, exc: BaseException) -> LitmusFault:
        """Any exception as a coded fault: the library's own errors keep their code and message; any
        other exception is an internal error (L601) described by `describe_fault`."""
        if isinstance(exc, LitmusFault):
            return exc
        if isinstance(exc, LitmusError):  # (the base class's L000 is no catalogued code: internal)
            return cls(exc.message, code=exc.code if exc.code in catalogue.CATALOGUE else None)
        return cls(catalogue.message(cls.code, detail=describe_fault(exc)), detail=type(exc).__name__)

    def inline(self) -> str:
        """The fault inside a longer text (a verdict's reason): `error[CODE]: message`."""
        return catalogue.inline(self.code, self.message)


def describe_fault(exc: BaseException) -> str:
    """What an unexpected exception means to a user: the limit it stands for (recursion, memory),
    or its first line; never a traceback, never its class (that is `LitmusFault.detail`)."""
    if isinstance(exc, LitmusError):
        return exc.message
    if isinstance(exc, RecursionError):
        return "nested deeper than Python's recursion limit (e.g. a long chain of `let`s)"
    if isinstance(exc, MemoryError):
        return "ran out of memory (e.g. a value that keeps doubling)"
    text = str(exc)
    return f"a bug in the checker: {text.splitlines()[0][:200]}" if text.strip() else "a bug in the checker"
