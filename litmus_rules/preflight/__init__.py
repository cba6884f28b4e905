"""The control pass: stub agents, scorers in a killable child process, the pass itself."""
