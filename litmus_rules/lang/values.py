"""Runtime values beyond plain JSON: the *unknown* of three-valued logic, a built-in's witness
(`Found`), and evaluation failures."""

from __future__ import annotations

from typing import Any

from litmus_rules.diagnostics import code_for


class _Unknown:
    """A fact that is missing, or a value that cannot be established. Not false, not null."""

    __slots__ = ()
    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "unknown"

    def __bool__(self) -> bool:
        raise TypeError("unknown has no truth value; use Kleene operators")

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class Found(dict[str, Any]):
    """A built-in predicate's witness: truthy in conditions, and shown in full in traces."""


class EvalFailure(Exception):
    """Raised inside compiled code when a rule cannot be evaluated (type mismatch, budget, built-in).

    Caught at the rule boundary and turned into a fail-closed reject; never escapes the package.
    """

    def __init__(self, message: str, node: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


class BudgetExceeded(EvalFailure):
    """The per-evaluation cost budget ran out."""


# Codes in evaluation_error messages (L6xx): the limit or fault that stopped an evaluation.
INTERNAL_ERROR = code_for("internal-error")  # an unexpected fault inside one evaluation (a bug, or memory or stack exhausted)
VALUE_LIMIT = code_for("value-too-large")  # a computed value past MAX_LIST_ITEMS / MAX_TEXT_CHARS

# Bounds on a value a rule computes (`+` is the only operator that grows a value beyond its inputs):
# a `let` that doubles a list twenty times must be an explained reject, not a MemoryError.
MAX_LIST_ITEMS = 1_000_000
MAX_TEXT_CHARS = 32 * 2**20


class ValueTooLarge(EvalFailure):
    """A computed list or string would pass its size limit."""


def type_name(value: Any) -> str:
    if value is UNKNOWN:
        return "unknown"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# A trace shows values so a reader can follow the decision, and names the fact path each came from;
# it is not a copy of the episode. These bound what one value contributes to a JSON trace.
TRACE_STRING = 240  # characters
TRACE_ITEMS = 8  # list items and object keys
TRACE_DEPTH = 4  # nesting


def to_json(value: Any, depth: int = 0) -> Any:
    """A JSON-able, bounded copy of a runtime value for traces: unknown becomes the marker object
    `{"unknown": true}`; long strings, lists and objects are cut, and say by how much."""
    if value is UNKNOWN:
        return {"unknown": True}
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if len(value) <= TRACE_STRING:
            return value
        return value[:TRACE_STRING] + f"... ({len(value) - TRACE_STRING} more characters)"
    if depth >= TRACE_DEPTH and isinstance(value, (dict, list, tuple)) and value:
        return f"... ({len(value)} {'keys' if isinstance(value, dict) else 'items'})"
    if isinstance(value, dict):
        out = {str(k): to_json(v, depth + 1) for k, v in list(value.items())[:TRACE_ITEMS]}
        if len(value) > TRACE_ITEMS:
            out["..."] = f"{len(value) - TRACE_ITEMS} more keys"
        return out
    if isinstance(value, (list, tuple)):
        items = [to_json(v, depth + 1) for v in value[:TRACE_ITEMS]]
        if len(value) > TRACE_ITEMS:
            items.append(f"... ({len(value) - TRACE_ITEMS} more items)")
        return items
    return repr(value)


def short_repr(value: Any, limit: int = 80) -> str:
    """How traces and messages show a value: JSON-like, truncated."""
    if value is UNKNOWN:
        return "unknown"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, (list, tuple)):
        inner = ", ".join(short_repr(v, limit) for v in value[:5])
        text = f"[{inner}{', ...' if len(value) > 5 else ''}]" + (f" ({len(value)} items)" if len(value) > 5 else "")
    elif isinstance(value, dict):
        inner = ", ".join(f"{k}: {short_repr(v, 30)}" for k, v in list(value.items())[:4])
        text = "{" + inner + (", ..." if len(value) > 4 else "") + "}"
    else:
        text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
