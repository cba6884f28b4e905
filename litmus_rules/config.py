"""The project you stand in: its config file and the ruleset it uses.

The config is `litmus.toml` (top-level keys) or the `[tool.litmus-rules]` table of `pyproject.toml`,
found from a folder (the working directory) upward to the filesystem root. In each folder a
`litmus.toml` wins over a `pyproject.toml`; the first file found is the config, except that a
`pyproject.toml` without the table does not stop the search (most projects have one for other
tools). Keys (docs/config.md):

    rules  = "rules"              # a rule file or folder, relative to the config file
    params = {min_partial_len = 8}  # ruleset params; `--param` on the command line overrides
    ignore = ["L402"]             # lint warnings not reported (errors cannot be ignored)
    format = "json"               # default --format of every command that has it, or a table
                                  # {check = "jsonl", lint = "json"} per command
    jobs   = 2                    # default --jobs of `check`

Without an explicit rules path, a command uses, in this order: the config's `rules`; a `rules/`
folder with `*.litmus` files in it, found from the working directory upward; the shipped rules.

Every problem in a config file is a located error with an L7xx code (`ConfigError`): a config is
read strictly, so that a typo does not silently leave the default in force. Base layer: this
module imports only the catalogue, the errors and the packaged-resource locator.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping, NoReturn

from litmus_rules._resources import default_rules_dir
from litmus_rules.diagnostics import CATALOGUE, code_for, message
from litmus_rules.errors import LitmusConfigError
from litmus_rules.source import Source, Span


__all__ = [
    "CONFIG_NAMES", "Config", "ConfigError", "RulesChoice", "choose_rules", "find_config", "project_config",
    "installed_package", "read_config", "sha256_of",
]

CONFIG_NAMES = ("litmus.toml", "pyproject.toml")  # in each folder, in this order
TABLE = "tool.litmus-rules"
KEYS = ("rules", "params", "ignore", "format", "jobs")
MAX_CONFIG_BYTES = 4 * 2**20  # a pyproject.toml past this is not a config file anyone wrote by hand

NOT_TOML = code_for("config-not-toml")
UNKNOWN_KEY = code_for("config-unknown-key")
WRONG_TYPE = code_for("config-wrong-type")
BAD_VALUE = code_for("config-bad-value")


class ConfigError(LitmusConfigError):
    """A problem in a config file, located at the key (or line) it is about."""

    def __init__(self, code: str, span: Span | None, **fields: object) -> None:
        super().__init__(message(code, **fields), span=span, code=code)


def sha256_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if rel.startswith("..") else rel


# Config and RulesChoice are plain slotted classes, not attrs ones (as source.py's): every command
# reads the config, and attrs (its import, and building a class) was a large part of a start. Values:
# compared, hashed and shown by their fields, as attrs' frozen classes were, and immutable.


def _frozen(self: object, *_: object) -> NoReturn:
    raise AttributeError(f"{type(self).__name__} is immutable")


class Config:
    __slots__ = ("file", "where", "sha256", "rules", "params", "ignore", "formats", "jobs", "text")
    __setattr__ = __delattr__ = _frozen

    file: Path  # absolute
    where: str  # `[tool.litmus-rules]` or `litmus.toml`: how messages name the table
    sha256: str  # of the file's bytes: recorded with the verdicts' provenance
    rules: Path | None  # absolute
    params: Mapping[str, Any]
    ignore: tuple[str, ...]
    formats: Mapping[str, str]  # command -> format; "*" every command
    jobs: int | None
    text: str  # the file's text, for locating a key (not part of equality or the repr)

    def __init__(self, file: Path, where: str, sha256: str, rules: Path | None = None,
                 params: Mapping[str, Any] | None = None, ignore: tuple[str, ...] = (),
                 formats: Mapping[str, str] | None = None, jobs: int | None = None, text: str = "") -> None:
        values = (file, where, sha256, rules, {} if params is None else params, ignore,
                  {} if formats is None else formats, jobs, text)
        for name, value in zip(Config.__slots__, values):
            object.__setattr__(self, name, value)

    def _key(self) -> tuple[Any, ...]:
        return (self.file, self.where, self.sha256, self.rules, self.params, self.ignore, self.formats, self.jobs)

    def __eq__(self, other: Any) -> bool:
        return self._key() == other._key() if other.__class__ is Config else NotImplemented

    def __hash__(self) -> int:
        return hash((Config, self._key()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in Config.__slots__[:-1])
        return f"Config({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return Config, tuple(getattr(self, n) for n in Config.__slots__)

    def replace(self, **changes: Any) -> Config:
        """A copy with some fields changed (what attrs' `evolve` did)."""
        return Config(**{n: changes.pop(n) if n in changes else getattr(self, n) for n in Config.__slots__}, **changes)

    def format_for(self, command: str) -> tuple[str | None, bool]:
        """(the configured format of `command`, whether it was named for that command)."""
        if command in self.formats:
            return self.formats[command], True
        return self.formats.get("*"), False

    def locate(self, *keys: str) -> Span:
        return _locate(Source(shown(self.file), self.text), self.where != "litmus.toml", keys)

    def to_json(self) -> dict[str, str]:
        return {"path": str(self.file), "sha256": self.sha256}


# ---- locating a key (tomllib gives values, not positions) -------------------------------------------

_HEADER = r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$"  # compiled on first use (re caches it)


def _table_name(line: str) -> str | None:
    m = re.match(_HEADER, line)
    return re.sub(r"\s*\.\s*", ".", m.group(1)).replace('"', "").replace("'", "") if m else None


def _locate(source: Source, in_pyproject: bool, keys: tuple[str, ...]) -> Span:
    """The line of `keys` (a key, or a param under `params`), best effort: the key's line in its
    table, else the table's header, else the first line."""
    lines = source.text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    base = TABLE if in_pyproject else ""
    want_tables = [".".join(p for p in (base, *keys[:-1]) if p)]
    if len(keys) > 1:
        want_tables.append(base)  # an inline table: `params = {a = 1}` is located at `params`
    current = ""
    header_at: int | None = None
    found: dict[str, int] = {}
    for i, line in enumerate(lines):
        name = _table_name(line)
        if name is not None:
            current = name
            if name == want_tables[0] and header_at is None:
                header_at = i
            continue
        for table in want_tables if keys else ():
            key = keys[-1] if table == want_tables[0] else keys[0]
            if current == table and re.match(rf"""^\s*["']?{re.escape(key)}["']?\s*=""", line) and table not in found:
                found[table] = i
    for table in want_tables:
        if table in found:
            i = found[table]
            start = offsets[i] + len(lines[i]) - len(lines[i].lstrip())
            return Span(source, start, offsets[i] + len(lines[i].rstrip()))
    i = header_at if header_at is not None else 0
    return Span(source, offsets[i], offsets[i] + max(1, len(lines[i].rstrip())) if lines[i].strip() else offsets[i])


# ---- reading ---------------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__.lower()}"  # date, time, datetime


def read_config(file: Path, *, only_if_configured: bool = False) -> Config | None:
    """The config in `file`; with `only_if_configured` (a pyproject.toml), None when the file has
    no `[tool.litmus-rules]` table. Raises ConfigError."""
    file = file.absolute()
    try:
        with open(file, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(BAD_VALUE, None, detail=f"cannot read config `{shown(file)}`: {exc.strerror or exc}") from None
    if only_if_configured and b"litmus-rules" not in data:
        return None  # not ours: never parsed, so that someone else's broken pyproject.toml is no error here
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(BAD_VALUE, None, detail=f"config `{shown(file)}` is over {MAX_CONFIG_BYTES // 2**20} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(NOT_TOML, Span(Source(shown(file), ""), 0, 0), detail=f"not UTF-8 ({exc.reason})") from None
    source = Source(shown(file), text)
    if sys.version_info >= (3, 11):  # imported here: a run without a config file never parses TOML
        import tomllib
    else:  # pragma: no cover - Python 3.10 (pyproject: tomli on python_version < "3.11")
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        detail = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", detail)
        span = Span(source, 0, 0)
        if m:
            line, col = int(m.group(1)), int(m.group(2))
            start = sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + col - 1
            span = Span(source, min(start, len(text)), min(start + 1, len(text)))
            detail = detail[: m.start()].strip()
        raise ConfigError(NOT_TOML, span, detail=detail) from None
    pyproject = file.name == "pyproject.toml"
    if pyproject:
        tool = doc.get("tool")
        table = tool.get("litmus-rules") if isinstance(tool, dict) else None
        if table is None:
            if only_if_configured:
                return None
            table = {}
        where = f"[{TABLE}]"
    else:
        table, where = doc, "litmus.toml"
    config = Config(file, where, sha256_of(data), text=text)
    if not isinstance(table, dict):
        raise ConfigError(WRONG_TYPE, config.locate(), key=TABLE, expected="a table", got=_kind(table))
    return _validated(config, table)


def _validated(config: Config, table: Mapping[str, Any]) -> Config:
    def wrong(key: str, expected: str, value: Any, *at: str) -> ConfigError:
        return ConfigError(WRONG_TYPE, config.locate(*(at or (key,))), key=key, expected=expected, got=_kind(value))

    for key in table:
        if key not in KEYS:
            raise ConfigError(UNKNOWN_KEY, config.locate(key), key=key, table=config.where)
    rules = None
    if "rules" in table:
        value = table["rules"]
        if not isinstance(value, str) or not value.strip():
            raise wrong("rules", "a path (a non-empty string)", value)
        rules = (config.file.parent / value).absolute()
        if not rules.exists():
            raise ConfigError(BAD_VALUE, config.locate("rules"),
                              detail=f"rules path `{value}` does not exist (relative to `{shown(config.file.parent) or '.'}`)")
    params: dict[str, Any] = {}
    if "params" in table:
        value = table["params"]
        if not isinstance(value, dict):
            raise wrong("params", "a table of param names and values", value)
        for name, v in value.items():
            items = v if isinstance(v, list) else [v]
            if not all(isinstance(x, (str, int, float, bool)) for x in items):
                raise wrong(f"params.{name}", "a string, number, boolean or list of them", v, "params", name)
            params[name] = v
    ignore: list[str] = []
    if "ignore" in table:
        value = table["ignore"]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise wrong("ignore", "a list of lint codes (strings)", value)
        for code in value:
            problem = ignorable(code)
            if problem is not None:
                raise ConfigError(BAD_VALUE, config.locate("ignore"), detail=problem)
            ignore.append(code.strip().upper())
    formats: dict[str, str] = {}
    if "format" in table:
        value = table["format"]
        if isinstance(value, str) and value.strip():
            formats["*"] = value.strip()
        elif isinstance(value, dict):
            for command, fmt in value.items():
                if not isinstance(fmt, str) or not fmt.strip():
                    raise wrong(f"format.{command}", "a format name (a string)", fmt, "format", command)
                formats[command] = fmt.strip()
        else:
            raise wrong("format", "a format name, or a table of command = format", value)
    jobs = None
    if "jobs" in table:
        value = table["jobs"]
        if not isinstance(value, int) or isinstance(value, bool):
            raise wrong("jobs", "an integer", value)
        if value < 1:
            raise ConfigError(BAD_VALUE, config.locate("jobs"), detail=f"`jobs` must be 1 or more, not {value}")
        jobs = value
    return config.replace(rules=rules, params=params, ignore=tuple(ignore), formats=formats, jobs=jobs)


def ignorable(code: str) -> str | None:
    """Why `code` cannot be ignored, or None: only warnings can (an error means rules that do not load)."""
    entry = CATALOGUE.get(code.strip().upper())
    if entry is None:
        return f"`{code}` is not a diagnostic code (see docs/authoring.md)"
    if entry.severity != "warning":
        return f"`{entry.code}` ({entry.title}) is an error: only warnings can be ignored"
    return None


# ---- finding -----------------------------------------------------------------------------------------


def find_config(start: Path) -> Config | None:
    """The config that applies in `start`: the first `litmus.toml`, or `pyproject.toml` with a
    `[tool.litmus-rules]` table, from `start` upward. Raises ConfigError for a bad one."""
    start = start.absolute()
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                found = read_config(candidate, only_if_configured=name == "pyproject.toml")
                if found is not None:
                    return found
    return None


_CACHE: dict[Path, Config | None] = {}


def project_config(start: Path | None = None) -> Config | None:
    """`find_config` from `start` (default: the working directory), read once per process."""
    key = (start or Path.cwd()).absolute()
    if key not in _CACHE:
        _CACHE[key] = find_config(key)
    return _CACHE[key]


def _rules_folder(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "rules"
        try:
            if candidate.is_dir() and any(f.is_file() for f in candidate.glob("*.litmus")):
                return candidate
        except OSError:  # an unreadable folder on the way up: not a ruleset
            continue
    return None


class RulesChoice:
    """The ruleset a command uses and why: `given` (a path on the command line), `config`, `found`
    (a `rules/` folder above the working directory) or `shipped`."""

    __slots__ = ("path", "how", "config")
    __setattr__ = __delattr__ = _frozen

    path: Path
    how: str
    config: Config | None

    def __init__(self, path: Path, how: str, config: Config | None = None) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "how", how)
        object.__setattr__(self, "config", config)

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not RulesChoice:
            return NotImplemented
        return (self.path, self.how, self.config) == (other.path, other.how, other.config)

    def __hash__(self) -> int:
        return hash((RulesChoice, self.path, self.how, self.config))

    def __repr__(self) -> str:
        return f"RulesChoice(path={self.path!r}, how={self.how!r}, config={self.config!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return RulesChoice, (self.path, self.how, self.config)

    def origin(self) -> str:
        if self.how == "given":
            return "given on the command line"
        if self.how == "config":
            assert self.config is not None
            return f"configured in {shown(self.config.file)}"
        if self.how == "found":
            return "found from the working directory"
        return "shipped with litmus-rules"


def choose_rules(explicit: str | Path | None, config: Config | None, start: Path | None = None) -> RulesChoice:
    """The rules a command uses: `explicit`, else the config's, else a `rules/` folder from
    `start` (the working directory) upward, else the shipped ones."""
    if explicit is not None:
        return RulesChoice(Path(explicit), "given", config)
    if config is not None and config.rules is not None:
        return RulesChoice(config.rules, "config", config)
    found = _rules_folder((start or Path.cwd()).absolute())
    if found is not None:
        return RulesChoice(found, "found", config)
    return RulesChoice(default_rules_dir(), "shipped", config)


_PACKAGE_DATA = Path(__file__).resolve().parent / "_data"
SITE_FOLDERS = ("site-packages", "dist-packages")


def installed_package(path: Path) -> str | None:
    """Where `path` is inside an installed package (this package's `_data`, or any folder under a
    `site-packages` / `dist-packages`), or None."""
    real = path.resolve()
    if real == _PACKAGE_DATA or _PACKAGE_DATA in real.parents:
        return f"the shipped rules of litmus-rules, {shown(_PACKAGE_DATA)}"
    for i, part in enumerate(real.parts):
        if part in SITE_FOLDERS:
            return f"under {Path(*real.parts[: i + 1])}"
    return None
