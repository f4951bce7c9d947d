"""Runs on a Dask distributed cluster: a LocalCluster started for the runs, or a running
one named by its address or scheduler file. When the runs are interrupted, the tasks not
started are cancelled; a LocalCluster is closed when the runs end or are interrupted, and any
of its processes still alive then are killed."""

from __future__ import annotations

import logging
import multiprocessing
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, TypeVar

from sitesim.errors import SitesimError
from sitesim.sweeps.stopping import (
    GRACE,
    end_processes,
    registered,
    signals_blocked,
    uninterrupted,
)

Item = TypeVar("Item")
Result = TypeVar("Result")


def run_on_dask(
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
        with signals_blocked({signal.SIGINT}):  # (its processes then ignore it: dask_setup)
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # (no dashboard, and its HTTP server on a free port: Dask's default 8787 may
                # be another cluster's, and taking another would print a warning)
                scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"},
                # (a worker's heartbeat failing while the cluster closes is no error of the
                # sweep's; a task that fails is reported from its future)
                silence_logs=logging.CRITICAL,
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
                if futures:  # (what has not started; a LocalCluster's workers would start
                    # the tasks queued on them while it closes)
                    client.cancel(list(futures), force=True)
            _close_dask(client, cluster, children)
        finally:
            log.setLevel(level)

    with registered(stop):
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
            with uninterrupted():
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
        end_processes([p for p in multiprocessing.active_children() if p not in children])
