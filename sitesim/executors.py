"""Where many independent runs execute: in this process, on a local process pool, or on a Dask
cluster. Sweeps and comparisons hand :func:`execute_all` a top-level function (so that it can
travel to other processes) and the items to call it with."""

from __future__ import annotations

import concurrent.futures
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from sitesim.errors import ConfigError, SitesimError

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

    ``function`` should catch its own exceptions (a sweep's run returns its traceback).

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


def _pool(
    function: Callable[[Item], Result], items: Sequence[Item], workers: int
) -> Iterator[tuple[int, Result | None, str | None]]:
    """A local process pool; a worker that dies fails the items it had, not the others."""
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(function, item): k for k, item in enumerate(items)}
        for future in concurrent.futures.as_completed(futures):
            try:
                yield futures[future], future.result(), None
            except concurrent.futures.process.BrokenProcessPool as err:
                yield futures[future], None, f"the worker process died: {err}\n"


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
    if address in (None, "local"):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
    else:
        is_file = Path(address).is_file()
        try:
            client = Client(scheduler_file=address) if is_file else Client(address, timeout=30)
        except (OSError, ValueError) as err:
            raise SitesimError(f"cannot reach the Dask scheduler at {address}: {err}") from None
    try:
        futures = {client.submit(function, item, pure=False): k for k, item in enumerate(items)}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result(), None
            except Exception as err:  # a worker lost (KilledWorker), a cancelled task
                yield futures[future], None, f"the Dask task failed: {err!r}\n"
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
