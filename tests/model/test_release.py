"""A run made whole lets go of its users and jobs: freed at once, not at the collector's next
full scan."""

from __future__ import annotations

import gc
import weakref

from sitesim.runs.config import SiteConfig
from sitesim.runs.runner import prepare


def test_a_whole_run_frees_its_users_processes_without_the_collector() -> None:
    prepared = prepare(SiteConfig(users=4, days=2, warmup_days=0, procs=16, scheduler="EASY"))
    processes = [weakref.ref(process) for process in prepared.site._users]
    assert processes
    was_enabled = gc.isenabled()
    gc.disable()  # (only reference counting frees objects now)
    try:
        result = prepared.run()
        assert prepared.site.jobs == [] and len(result.records) > 0
        assert all(process() is None for process in processes)
    finally:
        if was_enabled:
            gc.enable()
