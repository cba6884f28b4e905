"""Output, one module per format: `text` (verdicts, traces, summaries for people), `json` (the
verdict and summary JSON for machines)."""
