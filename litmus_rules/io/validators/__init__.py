"""Generated validators (`io/validator_codegen.py`)."""
