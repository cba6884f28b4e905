"""`check --format junit|sarif|github`: the CI reports, from the verdicts as they stream
(`render/junit.py`, `render/sarif.py`, `render/github.py` draw them)."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Iterable, Iterator

CI_FORMATS = ("junit", "sarif", "github")


def chunks(fmt: str, outcomes: Iterable[Any], ruleset: Any) -> Iterator[str]:
    """The text of the report, chunk by chunk, for `_common.write`."""
    if fmt == "sarif":
        from litmus_rules.engine.verdict import TOOL_VERSION
        from litmus_rules.render import sarif

        yield from sarif.document(ruleset.ast.rules, ruleset.info.to_json(), TOOL_VERSION,
                                  (o.json for o in outcomes))
    elif fmt == "github":
        from litmus_rules.render import github

        counts: Counter[str] = Counter()
        for outcome in outcomes:
            counts[outcome.verdict] += 1
            line = github.annotation(outcome.json)
            if line:
                yield line
        yield github.summary(dict(counts), sum(counts.values()))
    elif fmt == "junit":
        from litmus_rules.render import junit

        import datetime  # here: only junit stamps its report

        started = time.monotonic()
        stamp = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
        counts = Counter()
        cases = []
        for outcome in outcomes:  # the suite's counts come first in the XML: the cases wait
            counts[outcome.verdict] += 1
            cases.append(junit.testcase(outcome.json))
        yield from junit.document(cases, dict(counts), ruleset.info.to_json(), time.monotonic() - started, stamp)
    else:  # pragma: no cover - argparse's choices
        raise ValueError(fmt)
