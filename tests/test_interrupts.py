"""SIGINT/SIGTERM during a run: raised where unwinding is safe, never inside the process pool's code.

A signal raised inside concurrent.futures could leave one of its locks held (or fire in a fork
hook), and stopping the pool then waited for ever: `check --jobs 2` interrupted under load hung
about once in 17 runs. tests/test_hostile_io_output.py interrupts whole runs; these tests pin
down the mechanism.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from litmus_rules.cli._common import stoppable
from litmus_rules.engine.batch import RESULT_POLL, RulesSpec, _Workers
from litmus_rules.interrupts import SIGNALLED, Interrupted, deferred, may_raise_now


def _signal_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    for _ in range(100):  # the handler runs at the next bytecode boundary of the main thread
        time.sleep(0.001)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_a_deferred_call_is_raised_as_the_call_returns(signum: int) -> None:
    reached_the_end_of_the_block = False
    with stoppable():
        with pytest.raises(Interrupted) as caught:
            with deferred():
                assert not may_raise_now()
                _signal_self(signum)
                assert SIGNALLED == [signum]
                reached_the_end_of_the_block = True
        assert caught.value.signum == signum
    assert reached_the_end_of_the_block
    assert SIGNALLED == []  # the handler's record goes with it
    assert may_raise_now()


def test_nested_deferred_calls_raise_once_at_the_outermost_end() -> None:
    steps = []
    with stoppable():
        with pytest.raises(Interrupted):
            with deferred():
                with deferred():
                    _signal_self(signal.SIGINT)
                    steps.append("inner")
                steps.append("outer")  # the inner block's end did not raise
    assert steps == ["inner", "outer"]


def test_outside_a_deferred_call_the_signal_is_raised_at_once() -> None:
    with stoppable():
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                time.sleep(0.001)
            pytest.fail("the signal was not raised")


@pytest.fixture
def workers() -> Iterator[_Workers]:
    pool = _Workers(1, RulesSpec(None, {}, "fails", False))
    try:
        yield pool
    finally:
        pool.stop(kill=True)


def test_waiting_for_a_result_is_interrupted_within_a_poll(workers: _Workers) -> None:
    never: cf.Future[int] = cf.Future()
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
    with stoppable():
        start = time.monotonic()
        timer.start()
        with pytest.raises(Interrupted):
            workers.result(never)
        assert time.monotonic() - start < 0.1 + RESULT_POLL + 5  # not for ever (a loaded machine: slack)
    timer.join()


def test_a_result_that_comes_after_several_polls_is_returned(workers: _Workers) -> None:
    later: cf.Future[str] = cf.Future()
    timer = threading.Timer(RESULT_POLL * 2.5, later.set_result, ("done",))
    timer.start()
    assert workers.result(later) == "done"
    timer.join()


def test_a_unit_s_own_timeout_error_is_raised_not_waited_on(workers: _Workers) -> None:
    failed: cf.Future[str] = cf.Future()
    failed.set_exception(TimeoutError("the unit's own"))
    with pytest.raises(TimeoutError, match="the unit's own"):
        workers.result(failed)


class _SignallingDigest:
    """A hash whose updates (on the report's hashing thread) send the process a SIGINT, once."""

    def __init__(self) -> None:
        self.sent = False

    def update(self, chunk: bytes) -> None:
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)


def test_the_report_s_hashing_thread_is_stopped_cleanly_when_interrupted() -> None:
    from litmus_rules.io.verdicts import _Hashing

    digest = _SignallingDigest()
    hashing = _Hashing(digest)
    with stoppable():
        with pytest.raises(Interrupted):
            with hashing as update:
                for _ in range(50):  # the signal lands while the main thread is in the pool's code, or after
                    update(b"x" * 1024)
    assert digest.sent
    assert hashing.pool is not None and hashing.pool._shutdown  # shut down, not left waiting on a lock
