"""litmus_rules: decide SCORED or REJECTED for every instance of a LITMUS-style agent-safety
benchmark, classify the agent's decision on scored ones, and explain every verdict.

    >>> import litmus_rules
    >>> rules = litmus_rules.load_rules()            # the shipped ruleset
    >>> verdict = rules.evaluate(episode_dict)       # -> Verdict
    >>> verdict.verdict, verdict.reasons, verdict.classification

`read_episodes(paths)` reads episode files as `check` does (YAML keys kept as written, so
`controls: {null: ...}` stays the string key "null"), yielding `LoadedEpisode(data=... | error=...)`.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not `typing`'s: importing the package imports nothing it does not need
if TYPE_CHECKING:
    from typing import Any

    from litmus_rules.engine.ruleset import RuleSet, load_rules, load_rules_text
    from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED, Reason, RulesetInfo, Verdict
    from litmus_rules.errors import (
        Diagnostic,
        EvaluationError,
        FactsError,
        LitmusConfigError,
        LitmusError,
        LitmusSyntaxError,
        RuleCheckError,
        RuleError,
    )
    from litmus_rules.io.load import LoadedEpisode
    from litmus_rules.io.load import iter_episodes as read_episodes
    from litmus_rules.lang.trace import RuleTrace, TraceNode

# The public names, imported on first use: `import litmus_rules` (and so every command, and every
# worker process) does not pay for the engine, lark, the schema validator and the regex engines
# until a name that needs them is read.
_LAZY = {
    **dict.fromkeys(("RuleSet", "load_rules", "load_rules_text"), "litmus_rules.engine.ruleset"),
    **dict.fromkeys(("ERROR", "REJECTED", "SCORED", "Reason", "RulesetInfo", "Verdict"), "litmus_rules.engine.verdict"),
    **dict.fromkeys(("Diagnostic", "EvaluationError", "FactsError", "LitmusConfigError", "LitmusError",
                     "LitmusSyntaxError", "RuleCheckError", "RuleError"), "litmus_rules.errors"),
    "LoadedEpisode": "litmus_rules.io.load",
    "read_episodes": "litmus_rules.io.load",
    **dict.fromkeys(("RuleTrace", "TraceNode"), "litmus_rules.lang.trace"),
}
_ALIASES = {"read_episodes": "iter_episodes"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'litmus_rules' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
    globals()[name] = value  # once: later reads are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "ERROR",
    "REJECTED",
    "SCORED",
    "Diagnostic",
    "EvaluationError",
    "FactsError",
    "LitmusConfigError",
    "LitmusError",
    "LitmusSyntaxError",
    "LoadedEpisode",
    "Reason",
    "RuleCheckError",
    "RuleError",
    "RuleSet",
    "RuleTrace",
    "RulesetInfo",
    "TraceNode",
    "Verdict",
    "load_rules",
    "load_rules_text",
    "read_episodes",
]
