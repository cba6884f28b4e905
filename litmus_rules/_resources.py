"""Where the packaged grammar, episode schema and shipped rules live.

In a wheel they sit under `litmus_rules/_data/` (hatch force-include); in a source checkout they are
the top-level `grammar/` and `rules/` folders beside the package.
"""

from __future__ import annotations

from pathlib import Path

from litmus_rules.errors import LitmusConfigError

_PACKAGE = Path(__file__).resolve().parent


def _first_existing(*candidates: Path) -> Path:
    for path in candidates:
        if path.exists():
            return path
    raise LitmusConfigError(
        "packaged resource not found; looked in " + ", ".join(f"`{c}`" for c in candidates)
    )


def grammar_path() -> Path:
    return _first_existing(
        _PACKAGE / "_data" / "grammar" / "litmus.lark", _PACKAGE.parent / "grammar" / "litmus.lark"
    )


def default_rules_dir() -> Path:
    return _first_existing(_PACKAGE / "_data" / "rules", _PACKAGE.parent / "rules")


# Format tag -> schema file. episode/1 keeps its own file, untouched, so that its errors stay
# byte-identical; episode/1.1 is a separate, self-contained file (docs/format.md).
EPISODE_SCHEMAS = {"episode/1": "episode.schema.json", "episode/1.1": "episode-1.1.schema.json"}


def episode_schema_path(version: str = "episode/1") -> Path:
    """The schema file of one format version (`EPISODE_SCHEMAS`); an unknown version raises."""
    try:
        name = EPISODE_SCHEMAS[version]
    except (KeyError, TypeError):
        raise LitmusConfigError(
            f"no schema for format `{version}`; known: {', '.join(EPISODE_SCHEMAS)}"
        ) from None
    return _first_existing(_PACKAGE / "io" / "schemas" / name)


def installed_version(distribution: str = "litmus_rules") -> str | None:
    """The version of the installed distribution, as `importlib.metadata.version` finds it (the
    first `NAME-VERSION.dist-info` or `.egg-info` on `sys.path`, its `Version:` line), or None.

    Read directly: importing importlib.metadata (and the email parser it brings) cost a cold start
    about 50 ms, for one line of one small file."""
    import os
    import sys

    wanted = distribution.replace("-", "_").lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if not dot or suffix not in ("dist-info", "egg-info") or stem.partition("-")[0].lower() != wanted:
                continue
            meta = os.path.join(entry or ".", name, "METADATA" if suffix == "dist-info" else "PKG-INFO")
            try:
                with open(meta, encoding="utf-8") as fh:
                    for line in fh:
                        if line.startswith("Version:"):
                            return line.partition(":")[2].strip()
                        if not line.strip():  # the headers end at the first blank line
                            break
            except OSError:
                continue
    return None
