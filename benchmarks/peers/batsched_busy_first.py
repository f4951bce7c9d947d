"""Make a copy of batsched's sources reserve busy machines first (for bench_batsim.py).

    python benchmarks/peers/batsched_busy_first.py BATSCHED_SOURCE_FOLDER

batsched's ``Schedule::add_job_first_fit_after_time_slice`` (``src/schedule.cpp``) gives a job
the machines its resource selector picks among those free over the job's whole window: with
the ``basic`` selector the lowest-numbered ones (``src/locality.cpp``, ``left``). For the
reservation of EASY's blocked first job (a window that starts later than now) these may be
machines that are free now, which backfilling then cannot use even for a job that would give
them back in time; count-based EASY ("extra processors") lets such a job start. This edit
makes a window that starts later than now take the machines busy now first, then the free
ones, lowest-numbered first within each group: on identical machines EASY's extra
processors then stay free for backfilling, as in sitesim (whose reservations on a platform
prefer nodes busy now). A window starting now is unchanged. Only ``src/schedule.cpp`` is
edited, in place; the edit is checked to apply exactly once per call it changes.
"""

from __future__ import annotations

import sys
from pathlib import Path

MARK = "// sitesim bench_batsim: busy-first reservations"

HELPER = f"""
{MARK}
static bool fit_busy_first(ResourceSelector * selector, const Job * job,
                           const IntervalSet & available, const IntervalSet & free_now,
                           bool starts_now, IntervalSet & allocated)
{{
    if (starts_now)
        return selector->fit(job, available, allocated);
    const unsigned int wanted = job->nb_requested_resources;
    if (available.size() < wanted)
        return false;
    IntervalSet busy_now = available - free_now;
    if (busy_now.size() >= wanted)
        allocated = busy_now.left(wanted);
    else
        allocated = busy_now + (available & free_now).left(wanted - busy_now.size());
    return true;
}}
"""

#: (text in src/schedule.cpp, its replacement); each must occur exactly once.
EDITS = (
    ("using namespace std;\n", "using namespace std;\n" + HELPER),
    (
        "selector->fit(job, pit->available_machines, alloc->used_machines)",
        "fit_busy_first(selector, job, pit->available_machines,"
        " _profile.begin()->available_machines, pit == _profile.begin(), alloc->used_machines)",
    ),
    (
        "selector->fit(job, availableMachines, alloc->used_machines)",
        "fit_busy_first(selector, job, availableMachines,"
        " _profile.begin()->available_machines, pit == _profile.begin(), alloc->used_machines)",
    ),
)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: batsched_busy_first.py BATSCHED_SOURCE_FOLDER", file=sys.stderr)
        return 2
    path = Path(sys.argv[1]) / "src" / "schedule.cpp"
    text = path.read_text()
    if MARK in text:
        return 0  # already edited
    for old, new in EDITS:
        if text.count(old) != 1:
            print(f"{path}: expected once, found {text.count(old)} times: {old!r}", file=sys.stderr)
            return 1
        text = text.replace(old, new)
    path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
