"""Regression: golden summaries, and byte-identical output for the same input.

The golden files were produced by this code and committed; a change in any number means a
change in behaviour that must be explained. Rebuild them (after checking why they changed) with
``SITESIM_UPDATE_GOLDEN=1 pytest tests/regression``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sitesim.cli.main import main
from sitesim.engine.metrics import Summary
from sitesim.engine.site import Site
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.output import to_json
from sitesim.runs.replay import replay
from sitesim.runs.simulate import simulate
from sitesim.schedulers import REGISTRY, create
from sitesim.workload.swf import read_swf
from tests.conftest import trace_path

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SITESIM_UPDATE_GOLDEN") == "1"
#: The summary fields pinned by the golden files.
STATS = ("mean", "p25", "p50", "p75", "p98", "max")
KEYS = (
    "jobs", "utilization", "throughput_per_h", "makespan_d", "jobs_killed",
    *(f"{m}_{s}_min" for m in ("wait", "response") for s in STATS),
    *(f"{m}_{s}" for m in ("slowdown", "bsld") for s in STATS),
)  # fmt: skip


def synthetic_workload() -> TraceWorkload:
    """400 jobs on 32 processors: Poisson arrivals, power-of-two sizes, loose estimates."""
    rng = np.random.default_rng(20261122)
    n = 400
    submit = np.cumsum(rng.exponential(600.0, n)).round()  # offered load about 0.7
    size = 2 ** rng.integers(0, 6, n)
    runtime = rng.lognormal(6.0, 1.5, n).round()
    estimate = (runtime * rng.choice([1.0, 1.5, 3.0, 0.8], n)).round()
    return TraceWorkload.from_jobs(submit, size, runtime, estimate)


def digest(summary: Summary, *extra: str) -> dict[str, Any]:
    return json.loads(to_json({key: getattr(summary, key) for key in (*KEYS, *extra)}))


def check_golden(name: str, actual: dict) -> None:  # type: ignore[type-arg]
    path = GOLDEN / f"{name}.json"
    if UPDATE:
        path.write_text(to_json(actual))
    expected = json.loads(path.read_text())
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_golden_synthetic_summary(name):
    site = Site(32, create(name))
    site.add_user(TraceUser(synthetic_workload()))
    check_golden(f"synthetic-{name}", digest(site.run().summary))


@pytest.mark.parametrize(
    ("kind", "users", "scheduler"),
    [("complete", 30, "EASY"), ("complete", 30, "CREASY"), ("static", 5, "FCFS")],
)
def test_golden_site_level_summary(kind, users, scheduler):
    """Site-level runs on the shipped profile: 28 days, one week of warm-up."""
    result = simulate(users, scheduler, model=kind, days=28, seed=3)
    check_golden(
        f"site-{kind}-{users}-{scheduler}",
        digest(result.summary, "jobs_per_session", "sessions", "batches_per_session"),
    )


@pytest.mark.traces
@pytest.mark.parametrize("name", ["FCFS", "EASY", "CONSERVATIVE", "CREASY"])
def test_golden_sdsc_sp2_first_year(name, tmp_path):
    """The first 20,000 lines of SDSC-SP2 under the main schedulers."""
    full = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz"))
    part = type(full)(full.name, full.header, full.data[:20_000])  # not the file: no sha256
    result = replay(part, name)
    check_golden(f"sdsc-sp2-20k-{name}", digest(result.summary))


def test_same_input_gives_byte_identical_outputs(tmp_path, capsys):
    trace = tmp_path / "w.swf"
    work = synthetic_workload()
    lines = [
        f"{i + 1} {s:.0f} -1 {r:.0f} {z} -1 -1 {z} {e:.0f} -1 1 {1 + i % 5} 1 -1 0 -1 -1 -1"
        for i, (s, r, z, e) in enumerate(
            zip(work.submit, work.runtime, work.size, work.estimate, strict=True)
        )
    ]
    trace.write_text("; MaxProcs: 32\n" + "\n".join(lines) + "\n")
    for out in ("a", "b"):
        assert (
            main(["replay", str(trace), "-s", "EASY,CONSERVATIVE", "--out", str(tmp_path / out)])
            == 0
        )
    for sub in ("EASY", "CONSERVATIVE"):
        for name in ("simulated.swf", "results.json", "jobs.csv"):
            a = (tmp_path / "a" / sub / name).read_bytes()
            assert a == (tmp_path / "b" / sub / name).read_bytes(), name
            assert len(a) > 1000
