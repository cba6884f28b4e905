"""The scorer worker: imports the harness's scorer and scores runs, in a process of its own.

`scorer_process.py` starts this file as a script (`runpy`), not as part of the package: it
imports nothing from `litmus_rules`, so a worker starts in the time Python itself takes, and a
worker that was killed is replaced quickly. The package re-exports the label contract from here
(`scoring.to_label`, `scoring.load_scorer`), so that the worker and an in-process call agree.

Protocol on the worker's original stdin/stdout (both replaced, so that the scorer's own prints go
to stderr): frames of an 8-byte big-endian length and a body. The first request names the scorer
(`spec`, `sys_path`); the worker answers {"ok": true} or {"ok": false, "error": ...}. Each later
request is one instance's runs; the answer is one result per run: {"label": str} or
{"error": one line, "traceback": text}. Requests are pickles from preflight (trusted); answers
are JSON, so that nothing the user's code returns is ever unpickled by preflight.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import os
import pickle
import struct
import sys
import traceback
from typing import Any, BinaryIO, Callable, Sequence

SAFE = "safe"
HEADER = struct.Struct(">Q")


class ScorerImportError(Exception):
    """The scorer spec is malformed or the scorer cannot be imported."""


class BadLabel(Exception):
    """The scorer returned something that is not a label."""


def to_label(raw: Any, positives: Sequence[str]) -> str:
    """A string is the label. True means "the attack succeeded" (the first positive label, `unsafe`
    by default), False means "safe". Anything else is a scorer failure."""
    if isinstance(raw, bool):
        return positives[0] if raw else SAFE
    if isinstance(raw, str):
        return str.__str__(raw)  # a plain str: a subclass could misbehave when copied or compared
    try:
        shown = repr(raw)
    except Exception:  # noqa: BLE001 - the user's __repr__ failed: say what it was, not what it says
        shown = f"<{type(raw).__name__} object>"
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise BadLabel(f"scorer returned {shown} ({type(raw).__name__}), expected a label string or a bool")


def parse_spec(spec: str) -> tuple[str, str, bool]:
    """(target, attribute, is_file) of `module:function` or `path/to/file.py:function`."""
    target, sep, attr = spec.rpartition(":")
    is_file = target.endswith(".py") or "/" in target or os.sep in target
    if not (sep and target and attr) or (is_file and not os.path.isfile(target)):
        raise ScorerImportError(f"--scorer takes MODULE:FUNCTION or an existing path/to/file.py:FUNCTION, got `{spec}`")
    return target, attr, is_file


def import_scorer(spec: str) -> Callable[[dict[str, Any]], Any]:
    """Import `module:function` (from the current directory or sys.path) or `path/to/file.py:function`.
    This executes the module's top-level code."""
    target, attr, is_file = parse_spec(spec)
    try:
        if is_file:
            name = "litmus_user_scorer_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(target))
            module_spec = importlib.util.spec_from_file_location(name, target)
            assert module_spec is not None and module_spec.loader is not None  # a .py file always has one
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module  # dataclasses and pickling look modules up by name
            module_spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())  # as `python -m` does: the harness's own package
            module = importlib.import_module(target)
    except (Exception, SystemExit) as exc:  # the user's module failed to import: show their traceback
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        raise ScorerImportError(f"--scorer `{spec}` cannot be imported: {type(exc).__name__}: {exc}\n{tb}") from None
    fn: Any = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise ScorerImportError(f"--scorer `{spec}`: `{attr}` is not a callable of `{target}`")
    return fn  # type: ignore[no-any-return]


def summary(exc: BaseException) -> str:
    """One line for a run's `error`: `scorer raised KeyError: 'tools'`."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - the exception's own __str__ failed
        text = ""
    line = f"scorer raised {type(exc).__name__}" + (f": {text.splitlines()[0]}" if text.strip() else "")
    return line if len(line) <= 300 else line[:297] + "..."


def score_one(scorer: Callable[[dict[str, Any]], Any], payload: dict[str, Any], positives: Sequence[str]) -> dict[str, Any]:
    try:
        raw = scorer(copy.deepcopy(payload))  # a scorer that mutates its argument harms no other run
    except SystemExit:
        raise  # the scorer exits the process: preflight reports the exit code
    except BaseException as exc:  # noqa: B036 - user code: even KeyboardInterrupt is its failure, not ours
        frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # from the scorer down
        tb = "".join(traceback.format_exception(type(exc), exc, frames or exc.__traceback__))
        return {"error": summary(exc), "traceback": tb}
    try:
        return {"label": to_label(raw, positives)}
    except BadLabel as exc:
        return {"error": str(exc), "traceback": ""}


def _send(out: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps(message, ensure_ascii=True).encode("ascii")  # ASCII: lone surrogates escaped
    out.write(HEADER.pack(len(body)) + body)
    out.flush()


def _receive(inp: BinaryIO) -> Any:
    header = inp.read(HEADER.size)
    if len(header) < HEADER.size:
        return None  # preflight closed the pipe: done
    (size,) = HEADER.unpack(header)
    return pickle.loads(inp.read(size))


def _exit_with_parent(interval: float = 0.5) -> None:
    """A scorer stuck in a loop never reads the closed pipe: leave when preflight is gone, so that a
    killed preflight leaves no orphaned worker behind."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="litmus-parent-watch", daemon=True).start()


def main() -> None:
    _exit_with_parent()
    inp = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the scorer cannot read the protocol
    os.dup2(2, 1)  # and what it prints goes to stderr, not into the protocol or preflight's output
    hello = _receive(inp)
    if hello is None:
        return
    sys.path[:] = hello["sys_path"]
    try:
        scorer = import_scorer(hello["spec"])
    except ScorerImportError as exc:
        _send(out, {"ok": False, "error": str(exc)})
        return
    except BaseException as exc:  # noqa: B036 - a KeyboardInterrupt at import is the module's failure
        _send(out, {"ok": False, "error": f"--scorer `{hello['spec']}` cannot be imported: {summary(exc)}"})
        return
    _send(out, {"ok": True})
    while (request := _receive(inp)) is not None:
        positives = request["positives"]
        _send(out, {"results": [score_one(scorer, p, positives) for p in request["runs"]]})


if __name__ == "__main__":
    main()
