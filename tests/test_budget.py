"""Runs that cannot fit in memory are refused before anything runs, with the setting that
would fit; those that need much of it are warned of (sitesim.runs.budget)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sitesim.cli.main import main
from sitesim.errors import ConfigError
from sitesim.runs import budget
from sitesim.runs.budget import (
    SITE_JOB_BYTES,
    USER_BYTES,
    Estimate,
    parse_size,
    site_estimate,
)
from sitesim.runs.config import SiteConfig


@pytest.fixture(autouse=True)
def _limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """16 GB, whatever the machine has."""
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "16G")


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    start = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - start < 5  # (nothing ran)
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line
    return err


def test_a_horizon_of_a_billion_days_is_refused_with_the_longest_that_fits(capsys):
    err = refused(["run", "--users", "3", "--days", "1e9"], capsys)
    assert "a run of 3 complete users for 1e+09 days would submit about 1.4e+10 jobs" in err
    assert "more than the 16 GB available: give --days <= 970,000 with 3 users" in err
    assert "SITESIM_MEMORY_LIMIT" in err


def test_a_billion_users_are_refused_naming_users(capsys):
    err = refused(["run", "--users", "1000000000", "--days", "8"], capsys)
    assert "give --users <= " in err


def test_the_synthetic_workload_on_a_huge_machine_is_refused_naming_procs(capsys):
    err = refused(["run", "--model", "synthetic", "--procs", "1000000000", "--days", "30"], capsys)
    assert "give --procs <= " in err


def test_the_estimate_holds_for_a_run_of_the_shipped_profile():
    config = SiteConfig(users=250, days=182, procs=4096)
    estimate = site_estimate(config)
    assert 0.8 < estimate.jobs / 199_354 < 1.2  # (measured: 199,354 jobs)
    users = 250 * USER_BYTES["complete"]
    assert estimate.memory == budget.BASE_BYTES + users + estimate.jobs * SITE_JOB_BYTES


def test_a_run_needing_more_than_half_the_limit_is_warned_of(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "150M")  # 2 users, 70 days: about 96 MB
    assert main(["run", "--users", "2", "--days", "70", "--warmup", "1"]) == 0
    err = capsys.readouterr().err
    assert (
        "sitesim: warning: a run of 2 complete users for 70 days will submit about 630 jobs" in err
    )
    assert "64 % of the 150 MB available" in err


def test_no_limit_with_zero(monkeypatch):
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "0")
    assert budget.memory_limit() is None
    budget.check_site_run(SiteConfig(users=3, days=1e9))  # (not refused)


@pytest.mark.parametrize(("text", "size"), [("64G", 64 * 2**30), ("512M", 512 * 2**20),
                                            ("1.5T", 1.5 * 2**40), ("2000", 2000.0)])  # fmt: skip
def test_sizes(text, size):
    assert parse_size(text) == size


def test_a_bad_limit_is_one_clear_error(monkeypatch):
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "lots")
    with pytest.raises(ConfigError, match="SITESIM_MEMORY_LIMIT must be a size such as 64G"):
        budget.memory_limit()


def test_a_sweep_of_a_million_runs_is_refused_before_it_is_planned(tmp_path, capsys):
    sweep = tmp_path / "s.toml"
    levels = list(range(1, 101))
    sweep.write_text(f"seeds = 1000\n[factors]\nusers = {levels}\nprocs = {levels}\n")
    out = str(tmp_path / "o")
    err = refused(["sweep", str(sweep), "--out", out, "--max-runs", "10000000"], capsys)
    assert "the sweep plans 1e+07 runs (factor levels x seeds)" in err
    assert not (tmp_path / "o").exists()


def test_a_sweep_whose_runs_do_not_fit_at_once_names_workers(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "8G")  # each run about 5.0 GB
    sweep = tmp_path / "s.toml"
    sweep.write_text('[base]\nusers = 3\ndays = 3e5\n[factors]\nscheduler = ["FCFS", "EASY"]\n')
    err = refused(["sweep", str(sweep), "--out", str(tmp_path / "o"), "--workers", "2",
                   "--results-only"], capsys)  # fmt: skip
    assert "the sweep (2 runs, 2 at once, the largest scheduler=FCFS,seed=1)" in err
    assert "give --workers <= 1" in err
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "4G")
    err = refused(["sweep", str(sweep), "--out", str(tmp_path / "o"), "--serial"], capsys)
    assert "run scheduler=FCFS,seed=1 would submit about 4,050,000 jobs" in err


def test_a_replay_that_cannot_fit_is_refused_naming_an_excerpt(tmp_path, capsys, monkeypatch):
    trace = tmp_path / "t.swf"
    trace.write_text("".join(f"{k} {k} 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n"
                             for k in range(1, 2001)))  # fmt: skip
    monkeypatch.setenv(budget.LIMIT_VARIABLE, "96M")  # (the interpreter alone: 95 MB)
    err = refused(["replay", str(trace), "--procs", "4"], capsys)
    assert "the replay would submit about 2,000 jobs" in err
    assert "give --jobs START:STOP (an excerpt of the trace)" in err


def test_an_estimate_reads_as_jobs_and_memory():
    assert str(Estimate(1.4e10, 17.6 * 2**40)) == "submit about 1.4e+10 jobs and need about 18 TB"
    assert str(Estimate(204_750, 368 * 2**20)) == "submit about 204,750 jobs and need about 368 MB"


def test_the_reference_page_states_the_measured_numbers():
    page = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "run.md").read_text()
    assert "SITESIM_MEMORY_LIMIT" in page
    assert "4.5" in page and "1.3 KB" in page


def test_a_refused_run_leaves_the_out_folder_as_it_was(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "runs.csv").write_text("users\n3\n")
    refused(["run", "--users", "3", "--days", "1e9", "--out", str(out), "--force"], capsys)
    assert (out / "runs.csv").read_text() == "users\n3\n"


def test_the_library_refuses_an_absurd_run_too_and_prints_nothing(capsys):
    import sitesim

    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"^a run of 3 complete users for 1e\+09 days would "):
        sitesim.simulate(3, "EASY", days=1e9)
    with pytest.raises(ConfigError, match="for 1e\\+09 days"):
        sitesim.run(SiteConfig(users=3, days=1e9))
    assert time.perf_counter() - start < 5
    assert capsys.readouterr() == ("", "")


# -- outages (issue 32) ------------------------------------------------------------------------
def test_the_outage_estimate_counts_what_is_drawn():
    from sitesim.platform.downtime import Downtime, Window

    weekly = Window(3600.0, 4 * 3600.0, 7 * 86_400.0, tuple(range(50)))
    downtime = Downtime((weekly,), mtbf=86_400.0, mttr=3600.0, failure_nodes=tuple(range(20)))
    horizon = 200 * 86_400.0
    drawn = downtime.outages(horizon, 4)
    estimate = budget.outage_estimate(downtime, horizon)
    failures = int((drawn.kind == 1).sum())
    assert estimate.events == pytest.approx(29 + failures, rel=0.05)  # (29 weekly windows)
    assert estimate.detail == (
        "3,840 failures of 20 nodes (mtbf 1-00:00:00, mttr 0-01:00:00) and 29 maintenance "
        "windows on 1,450 nodes"
    )


def test_a_storm_of_failures_is_refused_before_anything_runs(tmp_path):
    from sitesim.platform.description import Platform

    platform = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 4, "cores": 8}],
            "partitions": [{"name": "p", "nodes": "n"}],
            "downtime": {"failures": {"mtbf": "0:00:01", "mttr": "0:00:01"}},
        }
    )
    budget.check_outages(platform, 30 * 86_400.0, "storm.toml")  # 4.3 million: a run may
    with pytest.raises(ConfigError) as caught:
        budget.check_outages(platform, 700 * 86_400.0, "storm.toml")
    assert str(caught.value).startswith(
        "storm.toml: downtime: 1.2e+08 failures of 4 nodes (mtbf 0-00:00:01, mttr 0-00:00:01) "
        "over 700 days"
    )
    path = tmp_path / "storm.toml"
    path.write_text(
        '[[nodes]]\ntype = "n"\ncount = 4\ncores = 8\n[[partitions]]\nname = "p"\nnodes = "n"\n'
        '[downtime.failures]\nmtbf = "0:00:01"\nmttr = "0:00:01"\n'
    )
    with pytest.raises(ConfigError, match=r"failures of 4 nodes .* over 90 days"):
        budget.check_site_run(SiteConfig(users=3, days=30, platform=str(path)))


def test_windows_on_many_nodes_that_cannot_fit_in_memory_are_refused():
    from sitesim.platform.description import Platform

    platform = Platform.from_dict(
        {
            "name": "big",
            "nodes": [{"type": "n", "count": 100_000, "cores": 8}],
            "partitions": [{"name": "p", "nodes": "n"}],
            "downtime": {"maintenance": [{"start": 0, "duration": 60, "every": "1-00:00:00"}]},
        }
    )
    with pytest.raises(ConfigError) as caught:
        budget.check_outages(platform, 400 * 86_400.0, limit=2 * 2**30)
    assert str(caught.value).startswith(
        "big: downtime: 400 maintenance windows on 4e+07 nodes over 400 days (the run and the "
        "time it may take to drain) would need about 5.6 GB of memory, more than the 2.0 GB "
        "available"
    )
