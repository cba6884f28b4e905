"""What one format module gives the importer framework, and nothing more.

A format module (`io/importers/<format>.py`) knows one harness's files. It exposes:

- `NAME`: the format name users type (`litmus-rules import NAME ...`);
- `VERSION`: the importer's own version, recorded in every episode it makes (bump it whenever the
  same input would give a different episode);
- `records(path, options) -> Iterator[Imported | Problem]`: every episode the input holds, in input
  order, streamed (never the whole input in memory when the format allows streaming).

Optional (the framework reads them with defaults, so a module without them keeps working):

- `OPTIONS: Mapping[str, str]`: the `--option KEY=VALUE` keys the module reads, each with a one-line
  help. When present, any other key is misuse (exit 2, listing these); absent: every key is passed.
- `DETECTOR_RECORDED: bool` (default True): False for a format that never records how a harness
  scores (an MCP manifest, a SKILL.md, a provider chat log). Importing it then needs `--detector`
  with at least `channel`; without it the run stops before reading (misuse), instead of one
  identical ERROR per record.
- `EXTENSIONS: tuple[str, ...]`: the file extensions of the format (`(".eval", ".json")`). When
  present, a folder given as input is walked for such files (sorted by path, hidden entries
  skipped) and `records` is called once per file; absent, `records` gets the folder itself (a
  format whose unit is a folder: a skill, an AgentDojo run).

An `Imported` episode says only what the input says: a fact the format does not record is absent,
or listed in `unknowns` with a note saying why the importer could not read it. Never a guess.
A record the importer cannot read is a `Problem` at its position; the records after it go on.
The framework (`io/importers/__init__.py`) adds `extra.import` provenance, merges `--detector` and
`--run`, and checks every episode against the episode/1.1 schema.
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Options:
    """What the user supplies beside the input files."""

    # Merged into every episode's `detector` (what an importer cannot infer: signals, labels, ...).
    detector: dict[str, Any] = attrs.field(factory=dict)
    # `--run KEY=VALUE`: grouping keys added to every episode's `run`.
    run: dict[str, Any] = attrs.field(factory=dict)
    # Format-specific switches (`--option KEY=VALUE`), e.g. the metadata key that links control samples.
    extra: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class Imported:
    episode: dict[str, Any]
    # Where in the input it came from, for `extra.import.position` and for messages: a line
    # (`"line 12"`), an archive member (`"samples/3_epoch_1.json"`), or a JSON pointer.
    position: str


@attrs.frozen
class Problem:
    position: str
    message: str  # what was expected, what was found
    # A diagnostic title from `litmus_rules.diagnostics` (None: `import-bad-record`, a record the
    # importer cannot read). Titles, not codes: modules never hold code literals.
    title: str | None = None
