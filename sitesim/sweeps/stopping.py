"""How the executors stop: every pool and cluster still open is registered, so that an
interrupt anywhere stops them all (:func:`stop_all`); a pool worker told to stop in the middle
of a run raises :class:`Stopped` there, so the run's clean-ups remove what it was writing.
See :mod:`sitesim.sweeps.executors` for the rules each executor follows.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from multiprocessing.process import BaseProcess

#: Seconds a stopped worker has to clean up and exit before it is killed.
GRACE = 1.0
#: The signals held back while a pool starts a worker.
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
#: How to stop each pool and cluster still open.
OPEN: dict[int, Callable[[], None]] = {}


class Stopped(BaseException):
    """Raised in a pool worker's run when the parent stops the pool (not an ``Exception``, so
    a run's ``except Exception`` does not take it for a failure)."""


def stop_all() -> None:
    """Stop every pool and Dask cluster :func:`execute_all` still has open (their workers
    ended, within :data:`GRACE` seconds or killed)."""
    with uninterrupted():
        for stop in list(OPEN.values()):
            stop()


@contextmanager
def registered(stop: Callable[[], None]) -> Iterator[None]:
    """Keep ``stop`` (how to stop a pool or cluster) while it is open."""
    key = id(stop)
    OPEN[key] = stop
    try:
        yield
    finally:
        OPEN.pop(key, None)


def end_processes(processes: Sequence[BaseProcess]) -> None:
    """SIGTERM every process, wait up to :data:`GRACE` seconds, kill those still alive."""
    for process in processes:
        with suppress(OSError, ValueError, AttributeError):
            process.terminate()
    deadline = time.monotonic() + GRACE
    for process in processes:
        with suppress(OSError, ValueError, AttributeError):
            process.join(max(deadline - time.monotonic(), 0.0))
    for process in processes:
        with suppress(OSError, ValueError, AttributeError):
            if process.is_alive():
                process.kill()
                process.join()


@contextmanager
def signals_blocked(signals: set[signal.Signals] = STOP_SIGNALS) -> Iterator[None]:
    """Hold ``signals`` back in this thread: processes it starts inherit the mask, so a signal
    cannot reach them before they set their handlers; here, a held signal arrives when the
    block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Ignore SIGINT (a second Ctrl-C) and SIGTERM while stopping, when in the main thread:
    the stop takes at most a few seconds and must not be cut short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
