"""`litmus_rules.importers`: the importers' Python entry point (the package is `litmus_rules.io.importers`).

    >>> from litmus_rules import importers
    >>> for episode in importers.read("inspect", "logs/run.eval", detector={"positive_labels": ["C"]}):
    ...     ...
"""

from litmus_rules.io.importers import (  # noqa: F401  (re-exported)
    FORMATS, ImportProblemError, ImportUsageError, Options, Record, iter_records, load_detector_file, make_options,
    merge_detector, read,
)

__all__ = ["FORMATS", "ImportProblemError", "ImportUsageError", "Options", "Record", "iter_records",
           "load_detector_file", "make_options", "merge_detector", "read"]
