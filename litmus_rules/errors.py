"""The error tree and load-time diagnostics.

Everything that leaves the package on failure is a `LitmusError`. Diagnostics are values, not
exceptions: the checker collects all of them, and `RuleCheckError` carries the list.
"""

from __future__ import annotations

from typing import Sequence

import attrs

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

    code = "L100"

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

    code = "L200"

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        errors = [d for d in diagnostics if d.severity == "error"]
        first = errors[0] if errors else None
        summary = f"{len(errors)} error(s) in rules"
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

    code = "L300"

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

    code = "L600"


class LitmusConfigError(LitmusError, ValueError):
    """Bad option or parameter, or a packaged resource (grammar, schema, rules) not found."""

    code = "L700"


@attrs.frozen
class Diagnostic:
    """One finding of the load-time checker. `code` is stable; tests assert codes, not wording."""

    code: str
    severity: str  # "error" | "warning"
    message: str
    span: Span | None = None
    help: str | None = None

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


def describe_fault(exc: BaseException) -> str:
    """What an unexpected exception means to a user: the limit it stands for (recursion, memory),
    or its class and first line; never a traceback."""
    if isinstance(exc, RecursionError):
        return "nested deeper than Python's recursion limit (RecursionError; e.g. a long chain of `let`s)"
    if isinstance(exc, MemoryError):
        return "ran out of memory (MemoryError; e.g. a value that keeps doubling)"
    text = str(exc)
    # an unexpected exception is a bug of ours: its class is what a bug report needs
    return f"{type(exc).__name__}: {text.splitlines()[0][:200]}" if text else type(exc).__name__
