"""The named stages from rule files to verdicts (cel-go's `Env.Compile` -> `Program`; OPA's
compiler stage list):

    find -> read -> parse -> merge -> check -> compile          (once per ruleset)
    validate -> evaluate                                         (once per episode)

Each stage is a function of the previous one's output. `load_rules`, `load_rules_text`, `lint`,
`rules info` and the rule tests all go through them, so a ruleset is found, merged and checked in
one way only:
- find: the `*.litmus` files of a ruleset: a file is itself; under a folder every such file
  outside `tests/` folders and hidden folders (`.git`, virtualenvs);
- read: one file's text, refused past `RULE_FILE_READ_LIMIT` before it is read whole;
- parse: text -> AST (lang/syntax), or the tree of the same text parsed before (engine/rulecache.py);
- merge: the files of one ruleset share one namespace, and their headers must agree (L215);
- check: every name, path and call against the environment (lang/checker.py), keeping the type
  of every node for later passes (the lints, coverage);
- compile: the checked AST -> closures, with the params bound (engine/program.py);
- validate: one episode against its version's schema, then the wire normalisation (io/load.py
  `prepare_episode`, as files are read), before it is evaluated;
- evaluate: `RuleSet.evaluate` (engine/ruleset.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping, Sequence

from litmus_rules.domain.environment import build_environment
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import Diagnostic, FactsError, LitmusConfigError
from litmus_rules.io.inputs import read_text_file
from litmus_rules.io.load import prepare_episode
from litmus_rules.lang import ast
from litmus_rules.lang import types as t
from litmus_rules.lang.checker import Checker
from litmus_rules.lang.environment import Environment
from litmus_rules.lang.syntax._limits import MAX_RULE_FILE_BYTES
from litmus_rules.lang.syntax import parse as _parse
from litmus_rules.engine.rulecache import cached_parse

RULE_SUFFIX = ".litmus"
# Characters are at most 4 bytes: a file that parse() would refuse is not read whole first.
RULE_FILE_READ_LIMIT = 4 * MAX_RULE_FILE_BYTES


# ---- find ------------------------------------------------------------------------------------------


def find(path: Path, *, include_tests: bool = False) -> list[Path]:
    """The rule files at `path`, sorted: a file is itself (a FIFO or device too: reading it says what
    it is, without blocking); under a folder, `*.litmus` outside hidden folders and, unless
    `include_tests` (`fmt` formats those too), outside `tests/` folders. Empty when there are none."""
    if path.exists() and not path.is_dir():
        return [path]
    if not path.is_dir():
        raise LitmusConfigError(f"rules path `{path}` does not exist")
    out = []
    for file in sorted(path.rglob(f"*{RULE_SUFFIX}")):
        parts = file.relative_to(path).parts[:-1]
        if any(p.startswith(".") for p in parts) or (not include_tests and "tests" in parts):
            continue
        out.append(file)
    return out


# ---- read and parse ------------------------------------------------------------------------------


def read(file: Path, shown: str | Path) -> str:
    """One rule file's text; `shown` is how an error names it."""
    try:
        return read_text_file(file, RULE_FILE_READ_LIMIT)
    except (OSError, UnicodeDecodeError) as exc:
        raise LitmusConfigError(f"cannot read rule file `{shown}`: {exc}") from None


def parse(text: str, name: str) -> ast.RuleSet:
    """Text -> AST; raises LitmusSyntaxError (L100). A text parsed before, in this process or an
    earlier run, is read back instead (engine/rulecache.py)."""
    return cached_parse(text, name, _parse)


def digest(sources: Sequence[tuple[str, str]]) -> str:
    """The content hash of a ruleset's (name, text) sources, in any order."""
    h = hashlib.sha256()
    for name, text in sorted(sources):
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    return "sha256:" + h.hexdigest()


# ---- merge ---------------------------------------------------------------------------------------------


class Merged:
    """The stages' results are plain slotted classes, never changed once made: attrs would
    generate their methods on every start of the command line."""

    __slots__ = ("tree", "diagnostics")

    def __init__(self, tree: ast.RuleSet, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.tree = tree
        self.diagnostics = diagnostics  # L215: a file whose header differs from the first's


def merge(parsed: Sequence[ast.RuleSet]) -> Merged:
    """Several files of one ruleset share one namespace; their headers must agree."""
    first = parsed[0]
    if len(parsed) == 1:
        return Merged(first, ())
    diags = []
    for other in parsed[1:]:
        if (other.name, other.version) != (first.name, first.version):
            diags.append(
                Diagnostic.of(
                    code_for("header-mismatch"),
                    other.span,
                    name=other.name, version=other.version, first_name=first.name, first_version=first.version,
                )
            )
    items = tuple(i for rs in parsed for i in rs.items)
    comments = tuple(c for rs in parsed for c in rs.comments)
    return Merged(ast.RuleSet(first.name, first.version, items, span=first.span, comments=comments), tuple(diags))


# ---- check ---------------------------------------------------------------------------------------------


class Checked:
    """A ruleset after the checker: its diagnostics (with the merge's), and the static type of every
    expression node it typed, for the passes after it."""

    __slots__ = ("tree", "environment", "diagnostics", "types", "checker")

    def __init__(self, tree: ast.RuleSet, environment: Environment, diagnostics: tuple[Diagnostic, ...],
                 types: Mapping[int, t.T], checker: Checker) -> None:
        self.tree = tree
        self.environment = environment
        self.diagnostics = diagnostics
        self.types = types  # id(node) -> type; the tree holds the nodes, so ids stay theirs
        self.checker = checker

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    def type_of(self, node: ast.Expr) -> t.T | None:
        return self.types.get(id(node))

    def type_expression(self, expr: ast.Expr) -> t.T:
        """Type an expression that is not part of the tree (as a condition of it would be); its
        diagnostics are dropped. Its nodes' types join `types`."""
        return self.checker.annotate(expr)


def check(
    tree: ast.RuleSet, environment: Environment | None = None, extra: Sequence[Diagnostic] = ()
) -> Checked:
    """Check a (merged) ruleset; `extra` are the earlier stages' diagnostics (the merge's L215)."""
    env = environment if environment is not None else build_environment()
    checker = Checker(tree, env)
    diagnostics = sorted([*extra, *checker.run()], key=Diagnostic.sort_key)
    return Checked(tree, env, tuple(diagnostics), checker.types, checker)


# ---- validate ------------------------------------------------------------------------------------------


def validate(episode: Any, source: str) -> tuple[Any, FactsError | None]:
    """The io stage before evaluation, as the loader runs it on files (io/load.py `prepare_episode`:
    the episode's own version's schema, then `wire.normalise`): `(the canonical episode, None)` or
    `(None, its problem)`."""
    return prepare_episode(episode, source=source)


# ---- the stages in a row ----------------------------------------------------------------------------


class Sources:
    """The texts of a ruleset's files, named as its locations will read."""

    __slots__ = ("base", "files", "texts")

    def __init__(self, base: Path | None, files: tuple[Path, ...], texts: tuple[tuple[str, str], ...]) -> None:
        self.base = base
        self.files = files
        self.texts = texts  # (name, text)


def display_name(file: Path, base: Path) -> str:
    """Rule locations read `rules/validity.litmus:14`: relative to the parent of the folder (or
    file) the rules were loaded from."""
    try:
        return str(file.relative_to(base.parent))
    except ValueError:
        return str(file)


def find_and_read(base: Path) -> Sources:
    """find -> read, as the loader does: no file is an error, and so is one that cannot be read."""
    files = find(base)
    if not files:
        raise LitmusConfigError(f"no `*{RULE_SUFFIX}` files under `{base}`")
    return Sources(base, tuple(files), tuple((display_name(f, base), read(f, f)) for f in files))


def parse_and_check(sources: Sources | Sequence[tuple[str, str]], environment: Environment | None = None) -> Checked:
    """parse -> merge -> check (raises LitmusSyntaxError at the first file that does not parse)."""
    texts = sources.texts if isinstance(sources, Sources) else sources
    merged = merge([parse(text, name) for name, text in texts])
    return check(merged.tree, environment, merged.diagnostics)


__all__ = [
    "RULE_FILE_READ_LIMIT",
    "RULE_SUFFIX",
    "Checked",
    "Merged",
    "Sources",
    "check",
    "digest",
    "display_name",
    "find",
    "find_and_read",
    "merge",
    "parse",
    "parse_and_check",
    "read",
    "validate",
]
