"""litmus_rules: decide SCORED or REJECTED for every instance of a LITMUS-style agent-safety
benchmark, classify the agent's decision on scored ones, and explain every verdict.

    >>> import litmus_rules
    >>> rules = litmus_rules.load_rules()            # the shipped ruleset
    >>> verdict = rules.evaluate(episode_dict)       # -> Verdict
    >>> verdict.verdict, verdict.reasons, verdict.classification

`read_episodes(paths)` reads episode files as `check` does (YAML keys kept as written, so
`controls: {null: ...}` stays the string key "null"), yielding `LoadedEpisode(data=... | error=...)`.
"""

from litmus_rules.engine.ruleset import RuleSet, load_rules, load_rules_text
from litmus_rules.io.load import LoadedEpisode
from litmus_rules.io.load import iter_episodes as read_episodes
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
from litmus_rules.lang.trace import RuleTrace, TraceNode
from litmus_rules.engine.verdict import ERROR, REJECTED, SCORED, Reason, RulesetInfo, Verdict

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
