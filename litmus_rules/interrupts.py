"""SIGINT and SIGTERM as an exception, raised only where unwinding is safe.

A command's handler (`cli._common.stoppable`) raises `Interrupted` in the main thread, so that
every `finally` runs: workers stopped, temporary files removed. Raised inside the standard
library's process pool, the same exception can land between a lock's acquisition and the `with`
block that would release it, or in a fork hook (logging's, as the pool starts a worker): the
lock stays held and the clean-up, which needs it to stop the pool, waits for ever. The engine
wraps its calls into the pool in `deferred()`: a signal that arrives inside one is recorded, and
raised as the call returns, in the engine's own code.
"""

from __future__ import annotations

from types import TracebackType


class Interrupted(BaseException):
    """SIGTERM or SIGINT, as an exception. A BaseException, so that no per-episode boundary
    (`except Exception`) swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# Signals received while a handler was installed: raised again at the next `check_signals` (a
# raise that landed in a finaliser or a weakref callback is swallowed by Python) or as the
# `deferred()` call they arrived in returns.
SIGNALLED: list[int] = []


def check_signals() -> None:
    """Raise `Interrupted` for a signal received and not raised yet (at a point where it is safe)."""
    if SIGNALLED:
        raise Interrupted(SIGNALLED[0])


class _Deferred:
    """`with deferred():` a signal handler that calls `may_raise_now()` does not raise inside
    the block; a signal recorded meanwhile is raised when the outermost block ends normally."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        self.depth = 0

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.depth -= 1
        if kind is None and self.depth == 0:
            check_signals()


_DEFERRED = _Deferred()


def deferred() -> _Deferred:
    return _DEFERRED


def may_raise_now() -> bool:
    """Whether a signal handler may raise here: not inside a `deferred()` call."""
    return _DEFERRED.depth == 0
