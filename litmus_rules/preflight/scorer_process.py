"""The harness's scorer (`preflight --scorer`) in a child process that preflight can kill.

The user's scorer is their code: it may hang, exit the process, raise anything (KeyboardInterrupt
and SystemExit included) or return something that is not a label. None of that may stop or hang
preflight. One long-lived worker process imports the scorer once and scores one instance's runs per
request; the parent waits at most `timeout` seconds per instance, kills the worker's whole process
group when it is late or misbehaves, and starts a fresh one for the next instance. A failure is
the instance's, with the cause in words; the rest of the batch goes on.

The worker itself, and the protocol, are in `_scorer_worker.py`.
"""

from __future__ import annotations

import json
import os
import pickle
import select
import signal
import subprocess
import sys
import time
import weakref
from typing import Any, Sequence

from litmus_rules.errors import LitmusConfigError
from litmus_rules.preflight import DEFAULT_TIMEOUT, _scorer_worker

MIN_IMPORT_TIMEOUT = 60.0  # importing a harness can be slow; a hang still ends
MAX_REPLY = 64 << 20  # bytes: a reply larger than this is a misbehaving scorer, not a label
_HEADER = _scorer_worker.HEADER
_WORKER = os.path.abspath(_scorer_worker.__file__)


def describe_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


class _Late(Exception):
    """The worker did not answer in time."""


class _Gone(Exception):
    """The worker's pipe closed: it exited or was killed."""


def _exit_cause(returncode: int | None) -> str:
    if returncode is None:
        return "scorer process closed its pipe"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"scorer process was killed by {name}"
    return f"scorer process exited with code {returncode}"


class ScorerProcess:
    """Scores instances with the scorer `spec` in a killable worker. Use as a context manager, or
    call `close()`; `start()` imports the scorer (raising LitmusConfigError when it cannot)."""

    def __init__(self, spec: str, timeout: float = DEFAULT_TIMEOUT, import_timeout: float | None = None) -> None:
        if not (timeout > 0 and timeout != float("inf")):
            raise LitmusConfigError(f"--scorer-timeout must be a positive number of seconds, got {timeout!r}")
        self.spec, self.timeout = spec, float(timeout)
        self.import_timeout = max(self.timeout, MIN_IMPORT_TIMEOUT) if import_timeout is None else import_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0  # workers started: one, plus one after each kill
        self._finalizer: weakref.finalize | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> ScorerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start a worker and import the scorer in it. LitmusConfigError when that fails."""
        # The worker runs as a script that imports nothing from the package: it starts fast.
        # `-c` puts the current folder first on sys.path: drop it before importing anything, so that a
        # `json.py` there cannot stand in for the standard library (the hello gives our sys.path).
        boot = f"import sys; sys.path.pop(0); import runpy; runpy.run_path({_WORKER!r}, run_name='__main__')"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", boot], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            start_new_session=True,  # its own process group: killed whole, and no terminal Ctrl-C
        )
        self.starts += 1
        self._finalizer = weakref.finalize(self, _kill, self.proc)
        assert self.proc.stdin is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        try:
            self._send({"spec": self.spec, "sys_path": list(sys.path)}, self.import_timeout)
            reply = self._receive(self.import_timeout)
        except _Late:
            self.close()
            raise LitmusConfigError(f"--scorer `{self.spec}`: importing it did not finish within "
                                    f"{describe_seconds(self.import_timeout)}") from None
        except _Gone:
            cause = _exit_cause(self._reap())
            self.close()
            raise LitmusConfigError(f"--scorer `{self.spec}` cannot be imported: {cause}") from None
        if not reply.get("ok"):
            self.close()
            raise LitmusConfigError(str(reply.get("error") or f"--scorer `{self.spec}` cannot be imported"))

    def close(self) -> None:
        if self.proc is not None:
            _kill(self.proc)
            if self._finalizer is not None:
                self._finalizer.detach()
            self.proc = None

    # -- scoring -----------------------------------------------------------------------------------

    def score_instance(self, payloads: Sequence[dict[str, Any]], positives: Sequence[str]) -> list[dict[str, Any]]:
        """One result per payload: {"label": str} or {"error": one line, "traceback": text}. When the
        worker hangs, dies or answers nonsense, every payload gets the same error, and the next
        call starts a new worker."""
        try:
            if self.proc is None:
                self.start()
            reply = self._exchange({"runs": list(payloads), "positives": list(positives)})
            results = reply.get("results")
            if not isinstance(results, list) or len(results) != len(payloads) or not all(_valid(r) for r in results):
                raise _Gone("the scorer process answered something that is not a result")
            return results
        except _Late:
            cause = f"scorer timed out after {describe_seconds(self.timeout)}"
        except _Gone as exc:
            cause = str(exc) or _exit_cause(self._reap())
        except LitmusConfigError as exc:  # a fresh worker could not import the scorer again
            cause = str(exc).splitlines()[0]
        self.close()
        return [{"error": cause, "traceback": ""} for _ in payloads]

    def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        self._send(request, deadline - time.monotonic())
        return self._receive(deadline - time.monotonic())

    def _reap(self) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return None

    def _send(self, message: Any, timeout: float) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            raise _Gone(f"the instance cannot be sent to the scorer process: {exc}") from None
        data = memoryview(_HEADER.pack(len(body)) + body)
        fd, deadline = self.proc.stdin.fileno(), time.monotonic() + timeout
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [fd], [], remaining)[1]:
                raise _Late()
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _Gone() from None
            data = data[written:]

    def _receive(self, timeout: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        fd, deadline = self.proc.stdout.fileno(), time.monotonic() + timeout
        (size,) = _HEADER.unpack(_read(fd, _HEADER.size, deadline))
        if size > MAX_REPLY:
            raise _Gone(f"the scorer process sent a reply of {size} bytes (limit {MAX_REPLY})")
        try:
            reply = json.loads(_read(fd, size, deadline))
        except ValueError:
            raise _Gone("the scorer process sent a reply that is not JSON") from None
        if not isinstance(reply, dict):
            raise _Gone("the scorer process sent a reply that is not an object")
        return reply


def _valid(result: Any) -> bool:
    return isinstance(result, dict) and (
        isinstance(result.get("label"), str) or (isinstance(result.get("error"), str) and isinstance(result.get("traceback"), str)))


def _read(fd: int, n: int, deadline: float) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise _Late()
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            raise _Gone()
        buf += chunk
    return bytes(buf)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the worker and anything it started (its process group), and reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass
