"""Rule tests: YAML cases beside the rules, run against the engine, with coverage.

A test file (`rules/**/tests/*.yaml` or `*_test.yaml`) holds `cases`; each gives facts (a whole
episode, or a partial one deep-merged over a named base episode), optional params and batch mates,
and what the verdict must be. The format is documented in `docs/authoring.md`. Test files are read
here rather than by `load.py` because a failure must point at the line of the expectation, which
needs YAML's node positions, and because they are not episodes.

Coverage records, for every rule, classification cell and let, whether the tests ever saw it true,
false and unknown (for a let that is not a condition: non-empty, empty and unknown).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import attrs
import yaml

from litmus_rules.authoring.coverage import Coverage, CoverageItem
from litmus_rules.authoring.evidence import Evidence
from litmus_rules.authoring.fmt import display_path
from litmus_rules.engine import stages
from litmus_rules.engine.ruleset import RuleSet, canary_owners, load_rules
from litmus_rules.engine.verdict import ERROR, Verdict
from litmus_rules.diagnostics import code_for
from litmus_rules.errors import LitmusError
from litmus_rules.io.inputs import read_text_file
from litmus_rules.lang.trace import RuleTrace

__all__ = ["Case", "CaseResult", "Coverage", "CoverageItem", "Problem", "TestRun", "discover_tests", "run_tests"]

FILE_KEYS = ("rules", "base", "bases", "params", "cases")
CASE_KEYS = ("name", "base", "facts", "unset", "batch", "params", "expect")
EXPECT_KEYS = ("verdict", "rejected_by", "rejects", "passes", "classification", "classifications", "message")
_SUFFIXES = (".yaml", ".yml")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loading that keeps documents JSON-shaped, like episodes: a mapping key is its source
    text (`null:` under `controls` is "null"), and a repeated key is an error, not a silent override."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[str, Any]:
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep)  # raises
        seen: set[str] = set()
        for key, _ in node.value:
            if key.tag != "tag:yaml.org,2002:merge" and (not isinstance(key, yaml.ScalarNode) or key.value in seen):
                problem = f"duplicate key `{key.value}`" if isinstance(key, yaml.ScalarNode) else "keys must be strings"
                raise yaml.constructor.ConstructorError(None, None, problem, key.start_mark)
            seen.add(key.value)
        self.flatten_mapping(node)  # `<<: *anchor` merges, for test files that share fragments
        return {k.value: self.construct_object(v, deep=deep) for k, v in node.value}


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_scalar)


class TestDefinitionError(LitmusError):
    """A test file that cannot be run as written (bad YAML, unknown key, missing base)."""

    __test__ = False  # not a pytest class
    code = code_for("bad-test-file")

    def __init__(self, message: str, file: str, line: int | None = None) -> None:
        super().__init__(message)
        self.file, self.line = file, line

    def render(self) -> str:
        return f"{self.file}:{self.line}: error: {self.message}" if self.line else f"{self.file}: error: {self.message}"

    __str__ = render


@attrs.frozen
class Case:
    file: str
    line: int
    name: str
    rules: Path
    episode: Mapping[str, Any]
    batch: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    expect: Mapping[str, tuple[Any, int]]  # key -> (expected value, line)


@attrs.frozen
class Problem:
    key: str
    line: int
    expected: str
    actual: str
    traces: tuple[RuleTrace, ...] = ()


@attrs.frozen
class CaseResult:
    case: Case
    verdict: Verdict | None
    problems: tuple[Problem, ...]

    @property
    def passed(self) -> bool:
        return not self.problems


# ---- reading test files --------------------------------------------------------------------------


def discover_tests(paths: Iterable[Path]) -> list[Path]:
    """Test files under the paths: YAML files directly inside a `tests/` folder, or `*_test.yaml`."""
    out: list[Path] = []
    for path in paths:
        if path.is_file():
            out.append(path)
        elif not path.is_dir():
            raise LitmusError(f"test path `{path}` does not exist")
        else:
            out.extend(
                f for f in sorted(path.rglob("*"))
                if f.suffix in _SUFFIXES and not any(p.startswith(".") for p in f.relative_to(path).parts[:-1])
                and (f.parent.name == "tests" or f.stem.endswith("_test"))
            )
    return out


def _line(node: yaml.Node, *path: str | int) -> int:
    """1-based line of the key (or item) at `path`; the nearest enclosing one if it is absent."""
    line = int(node.start_mark.line) + 1
    for step in path:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == step), None)
            if pair is None:
                return line
            line, node = int(pair[0].start_mark.line) + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
            line = int(node.start_mark.line) + 1
        else:
            return line
    return line


def _check_keys(data: Mapping[str, Any], allowed: Sequence[str], what: str, name: str, line: int) -> None:
    for key in data:
        if key not in allowed:
            guess = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean `{guess[0]}`?" if guess else f"; keys: {', '.join(allowed)}"
            raise TestDefinitionError(f"unknown key `{key}` in {what}{hint}", name, line)


def _merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key, recursively; anything else (lists included) replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base[k], v) if k in base else copy.deepcopy(v) for k, v in over.items()}}
    return copy.deepcopy(over)


_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def _unset(doc: dict[str, Any], path: str) -> bool:
    """Remove the fact at a dotted path (`controls.positive.fired`, `context.tools[0].injected`)."""
    steps: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return False
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    node: Any = doc
    try:
        for step in steps[:-1]:
            node = node[step]
        del node[steps[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return bool(steps)


class _Reader:
    def __init__(self, rules_override: Path | None) -> None:
        self.rules_override = rules_override
        self._bases: dict[Path, Any] = {}

    @staticmethod
    def _yaml(path: Path) -> tuple[Any, yaml.Node | None]:
        try:
            loader = _Loader(read_text_file(path, stages.RULE_FILE_READ_LIMIT))
            try:
                node = loader.get_single_node()
                return (loader.construct_document(node) if node is not None else None), node
            finally:
                loader.dispose()
        except (OSError, UnicodeDecodeError) as exc:
            raise TestDefinitionError(f"cannot read: {exc}", display_path(path)) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc)
            line = mark.line + 1 if mark else None
            raise TestDefinitionError(f"not valid YAML: {problem}", display_path(path), line) from None

    def _base(self, ref: str, file: Path, inline: Mapping[str, Any], line: int) -> Any:
        if ref in inline:
            return copy.deepcopy(inline[ref])
        for suffix in (*_SUFFIXES, ".json"):
            candidate = file.parent / "bases" / f"{ref}{suffix}"
            if candidate.is_file():
                if candidate not in self._bases:
                    self._bases[candidate] = self._yaml(candidate)[0]
                return copy.deepcopy(self._bases[candidate])
        raise TestDefinitionError(
            f"unknown base `{ref}`: not in this file's `bases`, and no `bases/{ref}.yaml` beside it",
            display_path(file), line,
        )

    def read(self, file: Path) -> list[Case]:
        name = display_path(file)
        data, root = self._yaml(file)
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or root is None:
            raise TestDefinitionError("a test file is a mapping with a `cases` list", name, 1)
        _check_keys(data, FILE_KEYS, "the test file", name, 1)
        if self.rules_override is not None:
            rules = self.rules_override
        elif "rules" in data:
            rules = (file.parent / str(data["rules"])).resolve()
        else:
            rules = file.parent.parent if file.parent.name == "tests" else file.parent
        cases: list[Case] = []
        for i, raw in enumerate(data["cases"]):
            line = _line(root, "cases", i)

            def need(ok: bool, problem: str, *at: str, line: int = line, i: int = i) -> None:
                if not ok:
                    raise TestDefinitionError(problem, name, _line(root, "cases", i, *at) if at else line)

            need(isinstance(raw, dict) and isinstance(raw.get("name"), str), "each case is a mapping with a `name`")
            _check_keys(raw, CASE_KEYS, f"case `{raw['name']}`", name, line)
            need(all(c.name != raw["name"] for c in cases), f"two cases are named `{raw['name']}`")
            expect = raw.get("expect")
            need(isinstance(expect, dict) and bool(expect), f"case `{raw['name']}` has no `expect`")
            _check_keys(expect, EXPECT_KEYS, "`expect`", name, _line(root, "cases", i, "expect"))
            facts, unset = raw.get("facts") or {}, raw.get("unset") or []
            batch, params = raw.get("batch") or [], {**(data.get("params") or {}), **(raw.get("params") or {})}
            need(isinstance(facts, dict), "`facts` is a mapping (an episode, or part of one)", "facts")
            need(isinstance(unset, list), "`unset` is a list of fact paths", "unset")
            need(isinstance(batch, list) and all(isinstance(m, dict) for m in batch), "`batch` is a list of mappings",
                 "batch")
            ref = raw.get("base", data.get("base"))
            episode = _merge(self._base(str(ref), file, data.get("bases") or {}, line), facts) if ref else facts
            need(isinstance(episode, dict), f"base `{ref}` is not an episode mapping")
            for path in unset:
                need(_unset(episode, str(path)), f"`unset`: no fact at `{path}` to remove", "unset")
            mates = []
            for j, mate in enumerate(batch):
                other = _merge(episode, mate)  # another instance like this one, with these changes
                if other.get("id") in (None, episode.get("id")):
                    other["id"] = f"{episode.get('id', 'case')}~batch{j + 1}"
                mates.append(other)
            lines = {k: (v, _line(root, "cases", i, "expect", k)) for k, v in expect.items()}
            cases.append(Case(name, line, raw["name"], rules, episode, tuple(mates), params, lines))
        return cases


# ---- running -------------------------------------------------------------------------------------


def _rule_traces(v: Verdict, names: Iterable[str | None]) -> tuple[RuleTrace, ...]:
    wanted = set(names)
    traces = [r.trace for r in v.reasons if r.rule in wanted and r.trace is not None]
    return tuple(traces + [p for p in v.passed if p.rule in wanted])


def _unknown(kind: str, names: Iterable[str], known: Sequence[str], key: str, line: int) -> list[Problem]:
    out = []
    for n in (n for n in names if n not in known):
        guess = difflib.get_close_matches(n, known, n=1)
        hint = f" (did you mean `{guess[0]}`?)" if guess else ""
        out.append(Problem(key, line, f"a {kind} of the ruleset", f"unknown {kind} `{n}`{hint}"))
    return out


def check_case(case: Case, v: Verdict, ruleset: RuleSet) -> list[Problem]:  # noqa: C901 - one branch per key
    """Every expectation of the case that the verdict does not meet, with the traces that explain it."""
    out: list[Problem] = []
    rejected = {r.rule for r in v.reasons} if v.verdict != ERROR else set()
    rules = ruleset.rule_names

    def show(names: Iterable[str]) -> str:
        return "[" + ", ".join(sorted(names)) + "]"

    for key, (want, line) in case.expect.items():
        if key == "verdict" and str(want).upper() != v.verdict:
            got = v.verdict + (f" ({v.reasons[0].message})" if v.verdict == ERROR and v.reasons else "")
            shown = rejected if str(want).upper() == "SCORED" else ()
            out.append(Problem(key, line, str(want).upper(), got, _rule_traces(v, shown)))
        elif key in ("rejected_by", "rejects", "passes"):
            names = {str(n) for n in (want if isinstance(want, list) else [want])}
            if bad := _unknown("rule", sorted(names), rules, key, line):
                out += bad
            elif key == "rejected_by" and names != rejected:
                out.append(Problem(key, line, show(names), show(rejected), _rule_traces(v, names ^ rejected)))
            elif key == "rejects" and not names <= rejected:
                out.append(Problem(key, line, f"{show(names - rejected)} to reject", f"rejected by {show(rejected)}",
                                   _rule_traces(v, names - rejected)))
            elif key == "passes" and names & rejected:
                out.append(Problem(key, line, f"{show(names & rejected)} to pass", f"rejected by {show(rejected)}",
                                   _rule_traces(v, names & rejected)))
        elif key == "classification":
            labels = [c.label for k in ruleset.ast.classifiers for c in k.cells]
            if want is not None and str(want) not in labels:
                out += _unknown("label", [str(want)], labels, key, line)
            elif want != v.classification:
                cells = {want, v.classification}  # the cell that should have matched, and the one that did
                traces = tuple(t for t in v.classification_traces if t.rule in cells or t.outcome == "undecided")
                out.append(Problem(key, line, json.dumps(want), json.dumps(v.classification), traces))
        elif key == "classifications":
            for cls, label in dict(want or {}).items():
                if bad := _unknown("classifier", [str(cls)], [k.name for k in ruleset.ast.classifiers], key, line):
                    out += bad
                elif v.classifications.get(cls) != label:
                    actual = v.classifications.get(cls)
                    out.append(Problem(key, line, f"{cls}: {json.dumps(label)}", f"{cls}: {json.dumps(actual)}",
                                       v.classification_traces))
        elif key == "message":
            for rule, text in (want if isinstance(want, dict) else {None: want}).items():
                if rule is not None and rule not in rules:
                    out += _unknown("rule", [str(rule)], rules, key, line)
                    continue
                messages = [r.message for r in v.reasons if rule is None or r.rule == rule]
                if not any(str(text) in m for m in messages):
                    where = f"a message of `{rule}`" if rule else "a message"
                    got = "; ".join(messages) or ("no message: it did not reject" if rule else "no reasons")
                    out.append(Problem(key, line, f"{where} containing {json.dumps(text)}", got, _rule_traces(v, [rule])))
    return out


@attrs.define
class TestRun:
    __test__ = False  # not a pytest class

    results: list[CaseResult] = attrs.Factory(list)
    errors: list[LitmusError] = attrs.Factory(list)
    coverage: dict[Path, Coverage] = attrs.Factory(dict)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.passed)

    @property
    def exit_code(self) -> int:
        return 2 if self.errors else (1 if self.failed else 0)


def run_tests(paths: Sequence[Path], *, rules: Path | None = None, select: str | None = None,
              coverage: bool = False, exitfirst: bool = False) -> TestRun:
    """Run every case under the paths. Problems in test files and rules are collected, not raised.
    `exitfirst` (`test -x`): stop at the first failed case or the first problem of a test file."""
    run = TestRun()
    reader = _Reader(rules)
    loaded: dict[tuple[Path, str], RuleSet | LitmusError] = {}
    for file in discover_tests(paths):
        if exitfirst and (run.errors or run.failed):
            break
        try:
            cases = reader.read(file)
        except TestDefinitionError as exc:
            run.errors.append(exc)
            continue
        for case in cases:
            if select and select.lower() not in case.name.lower():
                continue
            key = (case.rules, json.dumps(case.params, sort_keys=True, default=str))
            if key not in loaded:
                try:
                    loaded[key] = load_rules(case.rules, case.params)
                except LitmusError as exc:
                    where = f"`{display_path(case.rules)}`" + (f" with params {key[1]}" if case.params else "")
                    error = TestDefinitionError(f"the rules {where} do not load: {exc.render()}", case.file, case.line)
                    loaded[key] = error
                    run.errors.append(error)
            ruleset = loaded[key]
            if isinstance(ruleset, LitmusError):
                if exitfirst:
                    break
                continue
            batch = {"canary_owners": canary_owners([case.episode, *case.batch])}
            verdict = ruleset.evaluate(case.episode, batch=batch, explain="full", source=f"{case.file}:{case.line}")
            run.results.append(CaseResult(case, verdict, tuple(check_case(case, verdict, ruleset))))
            if coverage:
                cov = run.coverage.get(case.rules)
                if cov is None:
                    cov = run.coverage[case.rules] = Coverage(ruleset, Evidence(ruleset.checked))
                cov.record(verdict)
            if exitfirst and not run.results[-1].passed:
                break
    return run
