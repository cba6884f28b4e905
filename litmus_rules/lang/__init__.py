"""The rule language: syntax, AST, types, checker, evaluator, traces, printer. Knows nothing of the domain."""
