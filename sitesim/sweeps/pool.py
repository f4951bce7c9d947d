"""Runs on a local process pool: workers that ignore SIGINT (the parent decides), stop on
SIGTERM with their run's clean-ups done, and watch their parent; items handed out
:data:`IN_FLIGHT` per worker at a time, so nothing waits in a queue."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import TypeVar

from sitesim.sweeps.stopping import (
    STOP_SIGNALS,
    Stopped,
    end_processes,
    registered,
    signals_blocked,
    uninterrupted,
)

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Seconds between a pool worker's checks that its parent is alive.
WATCH_PARENT = 0.5
#: Items in flight per pool worker: one running, one ready to start.
IN_FLIGHT = 2


def run_on_pool(
    function: Callable[[Item], Result], items: Sequence[Item], workers: int
) -> Iterator[tuple[int, Result | None, str | None]]:
    """A local process pool; a worker that dies fails the items the pool had, which are
    yielded as lost (a sweep retries them on a new pool)."""
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, initializer=_start_worker)
    processes: dict[int, BaseProcess] = {}  # every worker the pool started

    def stop() -> None:  # (the pool's own processes: Python 3.14 adds terminate_workers())
        processes.update(getattr(pool, "_processes", None) or {})
        pool.shutdown(wait=False, cancel_futures=True)
        end_processes(list(processes.values()))

    with registered(stop):
        try:
            waiting = iter(enumerate(items))
            running: dict[concurrent.futures.Future[Result], int] = {}
            lost = None
            while True:
                while lost is None and len(running) < IN_FLIGHT * workers:
                    entry = next(waiting, None)
                    if entry is None:
                        break
                    k, item = entry
                    try:
                        with signals_blocked():  # (until a new worker ignores SIGINT)
                            running[pool.submit(_call, function, item)] = k
                    except concurrent.futures.process.BrokenProcessPool as err:
                        lost = f"the worker process died: {err}\n"
                        yield k, None, lost
                    processes.update(getattr(pool, "_processes", None) or {})
                if lost is not None:  # (a broken pool takes nothing more)
                    for k, _ in waiting:
                        yield k, None, lost
                if not running:
                    break
                done, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in done:
                    k = running.pop(future)
                    try:
                        yield k, future.result(), None
                    except concurrent.futures.process.BrokenProcessPool as err:
                        lost = f"the worker process died: {err}\n"
                        yield k, None, lost
            pool.shutdown(wait=True)
        except BaseException:  # an interrupt, or the caller closed the iterator
            with uninterrupted():
                stop()
            raise


def _start_worker() -> None:
    """Set a pool worker up: SIGINT ignored (the parent decides), SIGTERM a prompt, clean
    exit, and a watch on the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # (blocked by the parent)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()


_in_run = False  # (in a pool worker: whether it is inside ``function``)


def _call(function: Callable[[Item], Result], item: Item) -> Result:
    """Call ``function`` in a pool worker; a :class:`Stopped` run exits the worker once its
    clean-ups are done."""
    global _in_run
    try:
        _in_run = True
        return function(item)
    except Stopped:
        os._exit(1)
    finally:
        _in_run = False


def _terminated(signum: int, frame: FrameType | None) -> None:
    """A pool worker's SIGTERM: stop the run (its clean-ups run), or exit now if idle."""
    if _in_run:
        raise Stopped
    os._exit(1)


def _watch_parent(parent: int) -> None:
    """Stop this worker once its parent is gone (killed, or ended without stopping it): the
    worker is then adopted by another process."""
    while os.getppid() == parent:
        time.sleep(WATCH_PARENT)
    os.kill(os.getpid(), signal.SIGTERM)
