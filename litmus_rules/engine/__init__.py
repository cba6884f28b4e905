"""The pipeline: rule discovery, parse, merge, check, compile (`RuleSet`), evaluation to verdicts, batches."""
