"""Where many independent runs execute: in this process, on a local process pool, or on a Dask
cluster. Sweeps and comparisons hand :func:`execute_all` a top-level function (so that it can
travel to other processes) and the items to call it with.

Stopping. An interrupt (Ctrl-C, or SIGTERM where the program turns it into one, as the command
line does) stops every executor within seconds and leaves no process behind; what finished
before it was yielded, what did not leaves nothing (a sweep's run writes into a staging folder
that is removed). The parent decides:

- A pool's workers ignore SIGINT (a terminal sends it to every process of the command). The
  parent, interrupted, cancels what has not started and sends each worker SIGTERM; a worker in
  the middle of a run raises :class:`Stopped` there, so the run's clean-ups remove its staging
  folder and temporary files, then exits; an idle worker exits at once; one still alive after
  :data:`GRACE` seconds is killed. A worker whose parent died stops by itself within a second.
  Items are handed out two per worker at a time, so nothing waits in a queue.
- A Dask LocalCluster is closed, and any of its processes still alive then are killed; on a
  running cluster the tasks are cancelled.
- :func:`stop_all` stops every pool and cluster still open, for a caller that was interrupted
  outside the loop over :func:`execute_all` (the command line calls it).
"""

from __future__ import annotations

import concurrent.futures
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import Any, Literal, TypeVar

from sitesim.errors import ConfigError, SitesimError

Executor = Literal["serial", "process", "dask"]
EXECUTORS: tuple[Executor, ...] = ("serial", "process", "dask")
Item = TypeVar("Item")
Result = TypeVar("Result")
#: What :func:`execute_all` yields: the item's position, and its result or why it was lost.
Done = tuple[int, Result | None, str | None]

#: Seconds a stopped worker has to clean up and exit before it is killed.
GRACE = 1.0
#: Seconds between a pool worker's checks that its parent is alive.
WATCH_PARENT = 0.5
#: Items in flight per pool worker: one running, one ready to start.
IN_FLIGHT = 2

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}  # (held back while a pool starts a worker)
_open: dict[int, Callable[[], None]] = {}  # how to stop each pool and cluster still open


class Stopped(BaseException):
    """Raised in a pool worker's run when the parent stops the pool (not an ``Exception``, so
    a run's ``except Exception`` does not take it for a failure)."""


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def execute_all(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    executor: Executor = "process",
    *,
    workers: int | None = None,
    address: str | None = None,
) -> Iterator[tuple[int, Result | None, str | None]]:
    """Call ``function`` on every item; yield ``(position, result, None)`` as each completes
    (in any order), or ``(position, None, message)`` when the process running it was lost.

    ``function`` should catch its own exceptions (a sweep's run returns its traceback). An
    interrupt, or closing the iterator early, stops the pool or cluster at once (see the
    module's notes).

    Args:
        function: a module-level function (it is pickled for other processes).
        items: its arguments.
        executor: ``"serial"``, ``"process"`` or ``"dask"``.
        workers: processes of the pool or LocalCluster (default: every core).
        address: for Dask, a running scheduler (``tcp://host:8786``) or its scheduler file;
            None or ``"local"`` starts a LocalCluster.
    """
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    workers = workers or available_cores()
    if executor == "serial":
        for position, item in enumerate(items):
            yield position, function(item), None
    elif executor == "process":
        yield from _pool(function, items, workers)
    else:
        yield from _dask(function, items, workers, address)


def stop_all() -> None:
    """Stop every pool and Dask cluster :func:`execute_all` still has open (their workers
    ended, within :data:`GRACE` seconds or killed)."""
    with _uninterrupted():
        for stop in list(_open.values()):
            stop()


@contextmanager
def _registered(stop: Callable[[], None]) -> Iterator[None]:
    key = id(stop)
    _open[key] = stop
    try:
        yield
    finally:
        _open.pop(key, None)


# -- the local process pool -----------------------------------------------------------------
def _pool(
    function: Callable[[Item], Result], items: Sequence[Item], workers: int
) -> Iterator[tuple[int, Result | None, str | None]]:
    """A local process pool; a worker that dies fails the items the pool had, which are
    yielded as lost (a sweep retries them on a new pool)."""
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, initializer=_start_worker)
    processes: dict[int, BaseProcess] = {}  # every worker the pool started

    def stop() -> None:  # (the pool's own processes: Python 3.14 adds terminate_workers())
        processes.update(getattr(pool, "_processes", None) or {})
        pool.shutdown(wait=False, cancel_futures=True)
        _end(list(processes.values()))

    with _registered(stop):
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
                        with _signals_blocked():  # (until a new worker ignores SIGINT)
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
            with _uninterrupted():
                stop()
            raise


def _start_worker() -> None:
    """Set a pool worker up: SIGINT ignored (the parent decides), SIGTERM a prompt, clean
    exit, and a watch on the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # (blocked by the parent)
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


def _end(processes: Sequence[BaseProcess]) -> None:
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
def _signals_blocked(signals: set[signal.Signals] = _STOP_SIGNALS) -> Iterator[None]:
    """Hold ``signals`` back in this thread: processes it starts inherit the mask, so a signal
    cannot reach them before they set their handlers; here, a held signal arrives when the
    block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _uninterrupted() -> Iterator[None]:
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


# -- Dask -------------------------------------------------------------------------------------
def _dask(
    function: Callable[[Item], Result], items: Sequence[Item], workers: int, address: str | None
) -> Iterator[tuple[int, Result | None, str | None]]:
    """A Dask distributed cluster: a LocalCluster, or a running one named by its address or
    scheduler file (``dask scheduler --scheduler-file``)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SitesimError(
            "Dask is not installed: pip install 'sitesim[dask]' (or dask[distributed])"
        ) from None
    cluster = None
    children = set(multiprocessing.active_children())  # (those of the LocalCluster are new)
    if address in (None, "local"):
        with _signals_blocked({signal.SIGINT}):  # (its processes then ignore it: dask_setup)
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
                preload=[__name__],  # (its dask_setup: the workers ignore SIGINT)
            )
        client = Client(cluster)
    else:
        is_file = Path(address).is_file()
        try:
            client = Client(scheduler_file=address) if is_file else Client(address, timeout=30)
        except (OSError, ValueError) as err:
            raise SitesimError(f"cannot reach the Dask scheduler at {address}: {err}") from None
        except TypeError as err:  # (Dask's answer to tls:// without a client certificate)
            raise SitesimError(
                f"cannot connect to the Dask scheduler at {address}: {err}; a tls:// scheduler "
                "needs the client's TLS settings (docs/howto/dask-cluster.md)"
            ) from None
    futures: dict[Any, int] = {}

    def stop() -> None:
        log = logging.getLogger("distributed")
        level = log.level
        log.setLevel(logging.CRITICAL)  # (not an error per task it forgets)
        try:
            with suppress(Exception):
                if futures and cluster is None:  # (a running cluster: our work to cancel)
                    client.cancel(list(futures), force=True)
            _close_dask(client, cluster, children)
        finally:
            log.setLevel(level)

    with _registered(stop):
        try:
            futures.update(
                {client.submit(function, item, pure=False): k for k, item in enumerate(items)}
            )
            for future in as_completed(futures):
                try:
                    yield futures[future], future.result(), None
                except Exception as err:  # a worker lost (KilledWorker), a cancelled task
                    yield futures[future], None, f"the Dask task failed: {err!r}\n"
            _close_dask(client, cluster, children)
        except BaseException:
            with _uninterrupted():
                stop()
            raise


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each worker process of a LocalCluster that
    :func:`execute_all` starts: SIGINT ignored there (the parent stops the cluster)."""
    with suppress(ValueError):  # (not the process's main thread: leave it)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # (held back at its start)


def _close_dask(client: Any, cluster: Any, children: set[BaseProcess]) -> None:
    """Close the client and the LocalCluster (if any); kill the processes it left."""
    with suppress(Exception):
        client.close(timeout=2 * GRACE)
    if cluster is not None:
        with suppress(Exception):
            cluster.close(timeout=2 * GRACE)
        _end([p for p in multiprocessing.active_children() if p not in children])
