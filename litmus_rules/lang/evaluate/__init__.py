"""Compile a checked ruleset once into Python closures, then evaluate episodes many times.

Every expression node becomes a closure `f(env) -> value`. Values are JSON values or UNKNOWN (a
missing fact); `and`/`or`/`not` follow Kleene's three-valued logic. Each node is compiled twice: a
fast version for every episode, and a recording version, run only when a rule rejects or a cell
classifies, that stores each sub-expression's value for the trace. Nothing here prints, reads files
or imports the parser or checker.
"""

from litmus_rules.lang.evaluate._compiler import Compiler
from litmus_rules.lang.evaluate._runtime import DEFAULT_BUDGET, UNBOUND, Env, Fn, truth
from litmus_rules.lang.values import Found

__all__ = ["DEFAULT_BUDGET", "UNBOUND", "Compiler", "Env", "Fn", "Found", "truth"]
