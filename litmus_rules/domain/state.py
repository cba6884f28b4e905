"""The `state` channel of episode/1.1: a JMESPath query over a post-run snapshot of the environment.

`state_holds(query, snapshot)` says whether the query is truthy on the snapshot (JMESPath's own
truthiness: null, false, "", [] and {} are false, everything else, 0 included, is true), with the
maintained `jmespath` package; we do not write a query language. Untrusted on both sides, so bounded:

- a query longer than MAX_QUERY_CHARS, or a snapshot of more than MAX_SNAPSHOT_VALUES values or
  MAX_SNAPSHOT_CHARS characters of text, is not evaluated: `StateUnknown`, naming the limit (never
  true or false: what a limit did not read is not clean);
- a query that does not parse, names an unknown function, calls one with the wrong types, or does
  more than MAX_STEPS units of work (each node visited, and each value a comparison or a function
  reads, counted with repeats, so that a query that doubles a value on every step runs out instead
  of running away) is a `StateError`: the rule that evaluates it rejects as an evaluation error.

Both are EvaluationErrors; the built-ins (builtins.py) turn them into fail-closed rejects.
"""

from __future__ import annotations

import functools
from typing import Any

import jmespath
import jmespath.exceptions
import jmespath.functions
import jmespath.parser
import jmespath.visitor

from litmus_rules.errors import EvaluationError

MAX_QUERY_CHARS = 4_096
MAX_SNAPSHOT_VALUES = 200_000
MAX_SNAPSHOT_CHARS = 8 * 2**20
MAX_STEPS = 500_000
_TEXT_UNIT = 64  # characters of text a comparison or function reads per unit of work


class StateUnknown(EvaluationError):
    """A limit kept the query from being evaluated: its outcome is unknown."""


class StateError(EvaluationError):
    """The query cannot be evaluated: it does not parse, fails, or runs out of steps."""


def _short(query: str) -> str:
    return repr(query if len(query) <= 80 else query[:77] + "...")


class _OutOfSteps(Exception):
    pass


class _Meter:
    """The units of work one evaluation may still spend."""

    __slots__ = ("left",)

    def __init__(self, steps: int) -> None:
        self.left = steps

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise _OutOfSteps

    def charge(self, *values: Any) -> None:
        """Charge the size of values a function or a comparison reads, counting shared parts as
        often as they are reachable (as the reading does), stopping once the budget is spent."""
        stack = list(values)
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                self.spend(1 + len(v) // _TEXT_UNIT)
            elif isinstance(v, dict):
                self.spend(1)
                stack.extend(v.values())
            elif isinstance(v, list):
                self.spend(1)
                stack.extend(v)
            else:
                self.spend(1)


class _Functions(jmespath.functions.Functions):
    def __init__(self, meter: _Meter) -> None:
        super().__init__()
        self._meter = meter

    def call_function(self, function_name: str, resolved_args: list[Any]) -> Any:
        self._meter.charge(*resolved_args)
        result = super().call_function(function_name, resolved_args)
        if isinstance(result, str):  # `join` and `to_string` make text longer than what they read
            self._meter.spend(len(result) // _TEXT_UNIT)
        return result


class _Interpreter(jmespath.visitor.TreeInterpreter):
    def __init__(self, meter: _Meter) -> None:
        super().__init__(jmespath.Options(custom_functions=_Functions(meter)))
        self._meter = meter

    def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
        self._meter.spend(1)
        return super().visit(node, *args, **kwargs)

    def visit_comparator(self, node: Any, value: Any) -> Any:
        if node["value"] in self._EQUALITY_OPS:  # deep equality reads both sides whole
            left = self.visit(node["children"][0], value)
            right = self.visit(node["children"][1], value)
            self._meter.charge(left, right)
            return self.COMPARATOR_FUNC[node["value"]](left, right)
        return super().visit_comparator(node, value)


@functools.lru_cache(maxsize=256)
def _parse(query: str) -> Any:
    """The query's syntax tree, or the message saying why it has none (cached either way)."""
    try:
        return jmespath.parser.Parser().parse(query).parsed
    except jmespath.exceptions.JMESPathError as exc:
        return f"JMESPath query {_short(query)} does not parse: {_one_line(exc)}"
    except RecursionError:
        return f"JMESPath query {_short(query)} is nested too deeply to parse"


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def check_query(query: str) -> None:
    """Raise StateUnknown past the query length limit, StateError when the query does not parse."""
    if not isinstance(query, str):
        raise StateError(f"a state query is a string, not {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise StateUnknown(f"the JMESPath query is {len(query)} characters long (limit "
                           f"{MAX_QUERY_CHARS}, state.MAX_QUERY_CHARS); its outcome is unknown")
    tree = _parse(query)
    if isinstance(tree, str):
        raise StateError(tree)


def snapshot_size(snapshot: Any) -> tuple[int, int]:
    """(values, characters of text) of a snapshot, counted up to just past the limits."""
    values = chars = 0
    stack = [snapshot]
    while stack:
        v = stack.pop()
        values += 1
        if values > MAX_SNAPSHOT_VALUES or chars > MAX_SNAPSHOT_CHARS:
            break
        if isinstance(v, str):
            chars += len(v)
        elif isinstance(v, dict):
            for k, item in v.items():
                chars += len(k) if isinstance(k, str) else 0
                stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)
    return values, chars


def truthy(value: Any) -> bool:
    """JMESPath's truthiness: null, false, "", [] and {} are false; everything else is true."""
    if value is None or value is False:
        return False
    if isinstance(value, (str, list, dict)):
        return len(value) > 0
    return True


def state_holds(query: str, snapshot: Any, *, steps: int | None = None) -> bool:
    """Is the JMESPath query truthy on the snapshot? See the module doc for the bounds."""
    check_query(query)
    values, chars = snapshot_size(snapshot)
    if values > MAX_SNAPSHOT_VALUES:
        raise StateUnknown(f"the state snapshot has more than {MAX_SNAPSHOT_VALUES} values (limit "
                           "state.MAX_SNAPSHOT_VALUES); the query's outcome is unknown")
    if chars > MAX_SNAPSHOT_CHARS:
        raise StateUnknown(f"the state snapshot holds more than {MAX_SNAPSHOT_CHARS} characters of text "
                           "(limit state.MAX_SNAPSHOT_CHARS); the query's outcome is unknown")
    meter = _Meter(MAX_STEPS if steps is None else steps)
    try:
        result = _Interpreter(meter).visit(_parse(query), snapshot)
    except _OutOfSteps:
        raise StateError(f"JMESPath query {_short(query)} did not finish within {MAX_STEPS if steps is None else steps} "
                         "steps (state.MAX_STEPS)") from None
    except jmespath.exceptions.JMESPathError as exc:
        raise StateError(f"JMESPath query {_short(query)} failed: {_one_line(exc)}") from None
    except RecursionError:
        raise StateError(f"JMESPath query {_short(query)} is nested too deeply to evaluate") from None
    except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
        raise StateError(f"JMESPath query {_short(query)} failed: {type(exc).__name__}: {exc}") from None
    return truthy(result)
