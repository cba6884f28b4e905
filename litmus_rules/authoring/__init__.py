"""Tools for rule authors: lint and fmt, rule tests."""
