"""What the commands share: exit codes, which ruleset a command uses (`--rules`, else the config's,
else a `rules/` folder upward, else the shipped rules: `config.py`) and the one line naming it, the
config's params and defaults, output writing and signal handling.

When the output cannot be written (a full disk, a path that cannot be created, a closed stdout)
the run ends with a one-line message and exit 2, and no partial or temporary file is left.
SIGINT exits 130 and SIGTERM 143, after stopping the worker processes and removing temporary files.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

from litmus_rules.atomic import AtomicFile
from litmus_rules.cli._terminal import WRITE_CHUNK, pieces
from litmus_rules.engine.batch import Outcome, RulesSpec, check_inputs
from litmus_rules.render.text import render_verdict
from litmus_rules.engine.ruleset import RuleSet, load_rules
from litmus_rules.engine.verdict import ERROR, REJECTED
from litmus_rules import config as _config
from litmus_rules.config import Config, RulesChoice
from litmus_rules.errors import LitmusConfigError, LitmusError
from litmus_rules.interrupts import SIGNALLED, Interrupted, check_signals, may_raise_now  # noqa: F401 - the commands' API
from litmus_rules.lang.records import replace

# `check` and `explain`: the verdicts' status; the authoring commands: a finding (a failed test, a
# file that would change, a lint warning) is 1, misuse is 2 everywhere.
EXIT_OK, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2
EXIT_FAIL, EXIT_MISUSE = 1, 2

Handler = Callable[[argparse.Namespace], int]
PATHS_HELP = ("rule files or folders; - reads standard input (default: the config's `rules`, else a `rules/` "
              "folder from the working directory upward, else the shipped rules)")  # the authoring commands' PATH
RULES_HELP = ("rule file or folder; - reads standard input (default: the config's `rules`, else a `rules/` "
              "folder from the working directory upward, else the shipped rules)")


# ---- config and rules ------------------------------------------------------------------------------


def project_config() -> Config | None:
    """The config of the working directory (`litmus.toml` or `[tool.litmus-rules]`, upward);
    raises ConfigError (L7xx, located) for a bad one."""
    return _config.project_config()


def config_defaults(p: argparse.ArgumentParser, command: str) -> None:
    """The config's `format` (and `jobs`) as the defaults of `p`, which must have all its options
    declared by now: an option on the command line still wins. A config that does not read is
    not reported here (the parser is also built for `--help`): `choose_rules` reports it."""
    try:
        config = project_config()
    except LitmusError:
        return
    if config is None:
        return
    fmt, named = config.format_for(command)
    for action in p._actions:  # noqa: SLF001 - argparse offers no public list of a parser's options
        if action.dest == "format" and fmt is not None:
            if action.choices is None or fmt in action.choices:
                p.set_defaults(format=fmt)
            elif named:  # `format = {lint = "xml"}` is a mistake; a global `format` applies where it can
                where = config.locate("format", command)
                p.set_defaults(config_problem=_config.ConfigError(
                    _config.BAD_VALUE, where,
                    detail=f"`{command}` has no format `{fmt}`; its formats: {', '.join(map(str, action.choices))}"))
        elif action.dest == "jobs" and config.jobs is not None:
            p.set_defaults(jobs=config.jobs)


def _checked_config(args: argparse.Namespace) -> Config | None:
    problem = getattr(args, "config_problem", None)
    if problem is not None:
        raise problem
    return project_config()


_STDIN_RULES: list[Path] = []  # `--rules -`: standard input, spooled once per process


def stdin_rules() -> Path:
    """Rules read from standard input, as a file `stdin.litmus` (the loader, and `check`'s worker
    processes, read rules from a path). Removed when the process exits."""
    if _STDIN_RULES:
        return _STDIN_RULES[0]
    folder = Path(tempfile.mkdtemp(prefix="litmus-rules-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "stdin.litmus"
    text = sys.stdin.read() if sys.stdin is not None else ""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    _STDIN_RULES.append(path)
    return path


def is_stdin_rules(path: Path) -> bool:
    return path in _STDIN_RULES


def choose_rules(args: argparse.Namespace, explicit: str | None = None) -> RulesChoice:
    """The ruleset a command uses: `explicit` (`--rules`, `-` for stdin), else the config's, else a
    `rules/` folder from the working directory upward, else the shipped rules."""
    config = _checked_config(args)
    if explicit == "-":
        if "-" in (getattr(args, "inputs", None) or ()):
            raise LitmusConfigError("standard input cannot be both the rules (`--rules -`) and an input (`-`)")
        return RulesChoice(stdin_rules(), "given", config)
    return _config.choose_rules(explicit, config)


def ruleset_line(choice: RulesChoice, name: str, version: str, digest: str) -> str:
    """Which ruleset a command used, in one line: name, version, hash, path and why that path."""
    path = "<stdin>" if is_stdin_rules(choice.path) else _config.shown(choice.path)
    return f"ruleset {name} version {version} ({digest}) from {path}, {choice.origin()}"


def announce(args: argparse.Namespace, line: str) -> None:
    """The ruleset line on stderr (the commands whose stdout is data); not with `--quiet`."""
    if not getattr(args, "quiet", False):
        print(line, file=sys.stderr)


def identity(path: Path) -> tuple[str, str, str]:
    """(name, version, hash) of the ruleset at `path`, without checking it: the hash of its files
    and the header of the first one ("?" where that does not parse)."""
    from litmus_rules.engine import stages

    sources = stages.find_and_read(path)
    name = version = "?"
    for file_name, text in sources.texts[:1]:
        lines = text.split("\n")
        head = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ruleset")), None)
        if head is not None:
            with contextlib.suppress(LitmusError):
                tree = stages.parse("\n".join(lines[: head + 1]) + "\n", file_name)
                name, version = tree.name, tree.version
    return name, version, stages.digest(sources.texts)


def parse_params(items: Sequence[str]) -> dict[str, str]:
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise LitmusConfigError(f"--param takes NAME=VALUE, got `{item}`")
        params[name.strip()] = value
    return params


def _params(args: argparse.Namespace, config: Config | None) -> dict[str, Any]:
    """The config's params, then `--param` over them. Both are recorded as overrides in every
    verdict (`params[].override`); the config file itself is in the summary's provenance."""
    return {**(dict(config.params) if config is not None else {}), **parse_params(args.param or ())}


def load(args: argparse.Namespace, header: bool = False) -> RuleSet:
    """The ruleset of `check` and `explain` (`--rules`, config, `rules/` upward, shipped), with the
    config's params under `--param`. Its line goes to stderr, unless the caller puts it in its
    own `header` (`args.ruleset_line`)."""
    choice = choose_rules(args, args.rules)
    config = choice.config
    params = _params(args, config)
    try:
        ruleset = load_rules(choice.path, params)
    except LitmusConfigError as exc:
        raise _config_param_error(exc, config, args) from None
    args.rules_choice = choice
    args.rules_params = params
    if config is not None:  # recorded in every verdict (`ruleset.config`) and in the summary's provenance
        ruleset.info = replace(ruleset.info, config=(str(config.file), config.sha256))
    info = ruleset.info
    args.ruleset_line = ruleset_line(choice, info.name, info.version, info.hash)
    if not header:
        announce(args, args.ruleset_line)
    return ruleset


def _config_param_error(exc: LitmusConfigError, config: Config | None, args: argparse.Namespace) -> LitmusConfigError:
    """A bad param that came from the config is located in the config file."""
    if config is None or exc.span is not None:
        return exc
    given = parse_params(args.param or ())
    for name in config.params:
        if name not in given and f"param `{name}`" in exc.message:
            return _config.ConfigError(_config.BAD_VALUE, config.locate("params", name), detail=exc.message)
    return exc


def spec(args: argparse.Namespace, explain: str, want_text: bool) -> RulesSpec:
    """How `check`'s worker processes load the same ruleset: the path and params `load` chose."""
    with_traces = not getattr(args, "no_traces", False)
    choice: RulesChoice | None = getattr(args, "rules_choice", None)
    path = str(choice.path) if choice is not None else args.rules
    params = getattr(args, "rules_params", None)
    if params is None:
        params = parse_params(args.param or ())
    return RulesSpec(path, params, explain, want_text, render_verdict, with_traces)


def config_provenance(args: argparse.Namespace) -> dict[str, Any] | None:
    """The config file a command read (`{path, sha256}`), for the summary's provenance."""
    choice: RulesChoice | None = getattr(args, "rules_choice", None)
    config = choice.config if choice is not None else None
    return config.to_json() if config is not None else None


def rule_paths(args: argparse.Namespace, announced: bool = True) -> list[Path]:
    """The authoring commands' PATH arguments (`-`: standard input), else the rules `choose_rules`
    picks; then, unless the caller prints it itself, that ruleset's line on stderr."""
    if args.paths:
        _checked_config(args)  # a bad config is an error wherever it is read
        return [stdin_rules() if p == "-" else Path(p) for p in args.paths]
    choice = choose_rules(args)
    args.rules_choice = choice
    if announced:
        announce(args, ruleset_line(choice, *identity(choice.path)))
    if getattr(args, "command", None) == "test" and choice.path.is_file():
        return [choice.path.parent]  # `test` takes test folders: a rule file's tests are beside it
    return [choice.path]


def fail(message: str) -> int:
    print(f"litmus-rules: {message}", file=sys.stderr)
    return EXIT_MISUSE


def guarded(handler: Handler) -> Handler:
    """Config errors (a missing path, a bad param) are misuse: exit 2 with the message; a located
    one (a config file's key) with its location, code and source line."""

    def run(args: argparse.Namespace) -> int:
        try:
            return int(handler(args))
        except LitmusError as exc:
            if type(exc).__name__ in ("RuleCheckError", "LitmusSyntaxError"):
                raise  # cli.main renders these with every diagnostic
            print(exc.render() if exc.span is not None else f"litmus-rules: {exc}", file=sys.stderr)
            return EXIT_MISUSE

    return run


def add_rules_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", metavar="PATH", help=RULES_HELP)
    p.add_argument(
        "--param", action="append", metavar="NAME=VALUE",
        help="override a ruleset param (repeatable; over the config's `params`)",
    )


# ---- episodes --------------------------------------------------------------------------------------


def spool_stdin(directory: str) -> str:
    """Standard input is read twice (two passes): keep it in a file, as bytes (decoding is the
    reader's job, so that bad UTF-8 is a located ERROR, not a traceback here)."""
    path = os.path.join(directory, "stdin")
    with open(path, "wb") as fh:
        if sys.stdin is None:  # closed: an empty input, reported as such
            return path
        binary = getattr(sys.stdin, "buffer", None)
        if binary is not None:
            shutil.copyfileobj(binary, fh, 2**20)
        else:  # a text stream (tests, embedding)
            for chunk in iter(lambda: sys.stdin.read(2**20), ""):
                fh.write(chunk.encode("utf-8", "surrogatepass"))
    return path


def outcomes(
    args: argparse.Namespace,
    ruleset: RuleSet,
    rules_spec: RulesSpec,
    tmp: str,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> Iterator[Outcome]:
    """Every episode of `args.inputs`, decided (`engine.batch.check_inputs`) with the jobs of the
    command line or the config, each verdict recording the config it was given under."""
    stdin_path = spool_stdin(tmp) if "-" in args.inputs else None
    jobs = getattr(args, "jobs", None)
    config = getattr(getattr(args, "rules_choice", None), "config", None)
    if jobs is None and config is not None:
        jobs = config.jobs
    found = check_inputs(ruleset, rules_spec, args.inputs, jobs=jobs, stdin_path=stdin_path, on_progress=on_progress)
    if config is None:
        return found
    return _with_config(found, config.to_json())


def _with_config(found: Iterator[Outcome], config: dict[str, str]) -> Iterator[Outcome]:
    """Every verdict records the config file it was given under (`ruleset.config`), also the
    ones a worker process decided (its ruleset was loaded from the path, without the config)."""
    try:
        for outcome in found:
            recorded = outcome.json.get("ruleset")
            if isinstance(recorded, dict):
                recorded["config"] = config
            yield outcome
    finally:
        close = getattr(found, "close", None)
        if close is not None:
            close()


def exit_code(verdicts: Iterable[str]) -> int:
    kinds = set(verdicts)
    if ERROR in kinds:
        return EXIT_ERROR
    if REJECTED in kinds:
        return EXIT_REJECTED
    return EXIT_OK


# ---- signals ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def stoppable() -> Iterator[None]:
    """SIGTERM and SIGINT raise `Interrupted` in the main thread for the duration; a second one,
    during the clean-up, is ignored rather than cutting the clean-up short. Inside the engine's
    calls into the process pool (`interrupts.deferred`) the signal is only recorded, and raised
    as the call returns. A raise that lands in a finaliser or a weakref callback is swallowed by
    Python, so the signal is recorded in any case and `check_signals` raises it again at the next
    episode."""

    owner = os.getpid()

    def stop(signum: int, _frame: Any) -> None:
        if os.getpid() != owner:
            # a worker process forked while this handler was set, stopped before its initializer
            # put its own handlers in place: it dies of the signal as a worker should, not with
            # the parent's exception (which would fail its initializer with a traceback)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        signal.signal(signum, signal.SIG_IGN)
        SIGNALLED.append(signum)
        if may_raise_now():  # else inside the process pool: raised as the engine's call returns
            raise Interrupted(signum)

    try:
        previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        SIGNALLED.clear()


# ---- output ----------------------------------------------------------------------------------------


class WriteError(Exception):
    """The output could not be written; the message is the one line the user sees."""


def _copy(chunks: Iterator[str], stream: TextIO, name: str) -> None:
    """Write every chunk; an OSError of the *write* (not of producing a chunk) is a WriteError.
    A chunk goes out in slices (`_terminal.pieces`): one large write to a pipe whose reader left can
    come back short without raising, and the rest would be lost without a word."""
    for chunk in chunks:
        try:
            for piece in pieces(chunk) if len(chunk) > WRITE_CHUNK else (chunk,):
                stream.write(piece)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise WriteError(f"cannot write {name}: {e.strerror or e}") from None


def write(text_chunks: Iterator[str], output: str | None) -> None:
    """Write to stdout, or atomically to a file (`atomic.AtomicFile`: an interrupted or failed run
    never leaves a truncated file or a temporary one; an existing file keeps its mode, a new one
    gets the umask's; /dev/null or a FIFO is written in place)."""
    if output is None or output == "-":
        stream = sys.stdout
        if stream is None:
            raise WriteError("cannot write to standard output: it is closed")
        if hasattr(stream, "reconfigure"):
            # The output is UTF-8 whatever the locale; a lone surrogate in text output (an id) is
            # written as its \\uXXXX escape (JSON output has none left: render.json.dumps escaped them).
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(encoding="utf-8", errors="backslashreplace")
        _copy(text_chunks, stream, "to standard output")
        return
    name = f"`{output}`"
    target = AtomicFile(output, errors="backslashreplace")
    try:
        fh = target.open()
    except OSError as e:
        raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    try:
        _copy(text_chunks, fh, name)
        target.commit()
    except OSError as e:  # the close's flush (ENOSPC), or the rename
        target.abort()
        raise WriteError(f"cannot write {name}: {e.strerror or e}") from None
    except BaseException:
        target.abort()
        raise


def quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's own final flush
    does not print a second error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
