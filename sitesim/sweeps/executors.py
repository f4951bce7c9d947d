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
- On a Dask cluster the tasks not started are cancelled; a LocalCluster is then closed, and
  any of its processes still alive then are killed.
- :func:`stop_all` stops every pool and cluster still open, for a caller that was interrupted
  outside the loop over :func:`execute_all` (the command line calls it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Literal, TypeVar

from sitesim.errors import ConfigError
from sitesim.sweeps.dask import run_on_dask
from sitesim.sweeps.pool import run_on_pool
from sitesim.sweeps.stopping import GRACE, Stopped, stop_all

Executor = Literal["serial", "process", "dask"]
EXECUTORS: tuple[Executor, ...] = ("serial", "process", "dask")
Item = TypeVar("Item")
Result = TypeVar("Result")
#: What :func:`execute_all` yields: the item's position, and its result or why it was lost.
Done = tuple[int, Result | None, str | None]


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
        yield from run_on_pool(function, items, workers)
    else:
        yield from run_on_dask(function, items, workers, address)


__all__ = [
    "EXECUTORS",
    "GRACE",
    "Executor",
    "Stopped",
    "available_cores",
    "execute_all",
    "stop_all",
]
