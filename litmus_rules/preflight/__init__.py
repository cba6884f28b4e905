"""The control pass: stub agents, scorers in a killable child process, the pass itself."""

# Here, not in scorer_process.py: the command line shows it in `--help` without importing the
# scorer machinery (subprocess, pickle) on every start.
DEFAULT_TIMEOUT = 10.0  # seconds per instance (its five scorer calls together)
