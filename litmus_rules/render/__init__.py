"""Output: verdicts and traces as text and JSON."""
