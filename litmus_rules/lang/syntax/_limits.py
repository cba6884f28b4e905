"""The parser's limits, importable without lark."""

MAX_RULE_FILE_BYTES = 1_000_000
MAX_NESTING = 100
