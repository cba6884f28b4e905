"""Agent Skills (SKILL.md) as episodes: one episode per skill.

An input is a SKILL.md file (any `*.md` named explicitly), a skill folder (holding `SKILL.md`), or
a folder of skills (every `SKILL.md` below it, sorted by path; hidden entries skipped).

Mapped: the frontmatter's `name` and `description` as the skill's; the skill's `body` is the text
the agent reads when it loads the skill: the whole SKILL.md as written (the frontmatter included, so
every other key -- `license`, `compatibility`, `metadata`, `allowed-tools`, ... -- is surface text
too), then each text file of the folder's `references/` (sorted), each after a line naming its
path. Whether the skill is the attacker's is not in the file: `--option injected=true` marks every
skill of the run as injected.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from litmus_rules.io.importers._common import unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem
from litmus_rules.io.load import parse_yaml_text  # the loader's safe, JSON-shaped YAML reading

NAME = "skills"
VERSION = "1"
DETECTOR_RECORDED = False
OPTIONS = {"injected": "`true`: mark the skills as injected (they come from the attacker)"}

MAX_SKILL_FILE = 4 * 2**20  # a SKILL.md or a reference file; larger ones are not skill text
REFERENCE_EXTENSIONS = (".md", ".txt", ".markdown", ".rst", ".json", ".yaml", ".yml", ".csv", ".xml", ".html")
NOTES = {
    "/canaries": "a skill records no planted tokens: list the sentinel values the harness planted "
                 "(or `canaries: []` when there are none)",
    "/provenance/payload_generator": "a SKILL.md does not say who wrote it",
    "/controls": "a skill holds no agent run; the control runs come from `litmus-rules preflight`",
    "/episode": "a skill holds no run of the agent under test",
    "/detector/signals": "a skill does not score anything: supply the harness's signals with --detector",
}


def _skill_files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    direct = os.path.join(path, "SKILL.md")
    if os.path.isfile(direct):
        return [direct]
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.join(root, f) for f in files if f == "SKILL.md" or f.endswith(".SKILL.md")]
    return sorted(found)


def _read(path: str) -> str:
    with open(path, "rb") as fh:
        data = fh.read(MAX_SKILL_FILE + 1)
    if len(data) > MAX_SKILL_FILE:
        raise ValueError(f"over the {MAX_SKILL_FILE // 2**20} MiB limit for a skill file")
    return data.decode("utf-8")


def frontmatter(text: str, source: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the frontmatter mapping, None) or (None, why not)."""
    lines = text.removeprefix("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None, "no YAML frontmatter (a SKILL.md starts with a `---` line)"
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() in ("---", "...")), None)
    if end is None:
        return None, "the frontmatter is not closed by a `---` line"
    docs = list(parse_yaml_text(source, "\n".join(lines[1:end])))
    if len(docs) != 1 or docs[0].error is not None or docs[0].data is None:
        why = docs[0].error.message if docs and docs[0].error is not None else "not one YAML mapping"
        return None, f"the frontmatter is not valid YAML: {why}"
    return docs[0].data, None


def _references(skill_file: str) -> list[tuple[str, str]]:
    folder = os.path.join(os.path.dirname(skill_file), "references")
    if os.path.basename(skill_file) != "SKILL.md" or not os.path.isdir(folder):
        return []
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and name.lower().endswith(REFERENCE_EXTENSIONS):
                full = os.path.join(root, name)
                out.append((os.path.relpath(full, os.path.dirname(skill_file)).replace(os.sep, "/"), full))
    return sorted(out)


def records(path: str, options: Options) -> Iterator[Imported | Problem]:
    injected = options.extra.get("injected", "false").lower()
    if injected not in ("true", "false"):
        yield Problem("", f"--option injected takes true or false, got `{injected}`")
        return
    files = _skill_files(path)
    if not files:
        yield Problem("", "no SKILL.md in this folder")
        return
    for skill_file in files:
        position = os.path.relpath(skill_file, path) if skill_file != path else ""
        try:
            text = _read(skill_file)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            yield Problem(position, f"cannot read `{skill_file}`: {getattr(exc, 'strerror', None) or exc}")
            continue
        meta, why = frontmatter(text, skill_file)
        if meta is None:
            yield Problem(position, why or "no frontmatter")
            continue
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            yield Problem(position, "the frontmatter has no `name` (a string): the skill cannot be named")
            continue
        body = text
        for relative, full in _references(skill_file):
            try:
                body += f"\n\n--- {relative} ---\n\n" + _read(full)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                yield Problem(position, f"cannot read the bundled `{relative}`: {getattr(exc, 'strerror', None) or exc}")
                break
        else:
            skill: dict[str, Any] = {"name": name}
            if isinstance(meta.get("description"), str):
                skill["description"] = meta["description"]
            skill["body"] = body
            # relative to the folder the input sits in: the agent sees the skill's own layout, not ours
            skill["path"] = os.path.relpath(skill_file, os.path.dirname(os.path.abspath(path))).replace(os.sep, "/")
            if injected == "true":
                skill["injected"] = True
            episode = {
                "litmus": "episode/1.1",
                "id": f"skills:{name}",
                "run": {"skill": name},
                "context": {"skills": [skill]},
                "detector": {},
                "unknowns": [unknown(p, n) for p, n in NOTES.items()],
            }
            yield Imported(episode, position)
