"""Sweeps: the grid, the same numbers on every executor, resuming, retries, statistics."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scipy import stats

import sitesim
from sitesim.cli.main import main
from sitesim.errors import ConfigError
from sitesim.runs.config import ReplayConfig, SiteConfig
from sitesim.sweeps.sweep import (
    SweepPlan,
    paired_differences,
    run_name,
    summarize_runs,
    sweep,
    with_competitive_ratios,
)

ROOT = Path(__file__).resolve().parents[1]
BASE = SiteConfig(days=28, warmup_days=7)
GRID = {"scheduler": ["EASY", "CREASY"], "users": [2, 4, 8]}


def rows_of(path: Path, drop: tuple[str, ...] = ("wall_s",)) -> list[dict[str, str]]:
    """The rows of a CSV file without the timing columns."""
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    return [{k: v for k, v in row.items() if k not in drop} for row in rows]


def test_the_grid_in_order_with_factors_that_do_not_apply_left_out():
    plan = SweepPlan(BASE, {"scheduler": ["EASY", "CREASY"], "alpha": [0, 6000]}, (1, 2))
    names = [run.name for run in plan.runs()]
    assert names == [
        "scheduler=EASY,seed=1",
        "scheduler=EASY,seed=2",
        "scheduler=CREASY,alpha=0,seed=1",
        "scheduler=CREASY,alpha=0,seed=2",
        "scheduler=CREASY,alpha=6000,seed=1",
        "scheduler=CREASY,alpha=6000,seed=2",
    ]
    creasy = plan.runs()[-1]
    assert creasy.config.scheduler_params == {"alpha": 6000.0} and creasy.config.seed == 2
    assert creasy.factors == {"scheduler": "CREASY", "alpha": 6000}
    assert run_name({"profile": "/data/site a.json", "pcont_b": 0.05}, 3) == (
        "profile=site_a.json,pcont_b=0.05,seed=3"
    )


@pytest.mark.parametrize(
    ("factors", "seeds", "message"),
    [
        ({"userz": [1]}, (1,), "factor 'userz' is not a setting of a site run"),
        ({"users": 5}, (1,), "factor 'users' needs a list of levels"),
        ({"users": []}, (1,), "factor 'users' needs a list of levels"),
        ({"seed": [1, 2]}, (1,), "give replications as seeds"),
        ({}, (1, 1), "seeds must differ"),
        ({}, (-1,), "seeds must be whole numbers >= 0"),
        ({"users": [0]}, (1,), "run users=0,seed=1: users must be a whole number >= 1"),
    ],
)
def test_a_bad_plan_is_refused_before_anything_runs(factors, seeds, message):
    with pytest.raises(ConfigError, match=message):
        SweepPlan(BASE, factors, seeds).runs()


def test_a_sweep_file(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "p.json").write_bytes(
        (ROOT / "sitesim" / "data" / "default_profile.json").read_bytes()
    )
    path = tmp_path / "s.toml"
    path.write_text(
        'out = "results"\nseeds = 3\n[base]\ndays = 14\nprofile = "profiles/p.json"\n'
        '[factors]\nusers = [5, 10]\nscheduler = ["FCFS", "EASY"]\n'
    )
    plan = SweepPlan.load(path)
    assert plan.out == tmp_path / "results" and plan.seeds == (1, 2, 3)
    assert plan.base.profile == str(tmp_path / "profiles" / "p.json")  # relative to the file
    assert len(plan.runs()) == 12
    path.write_text("[base]\nmode = 'replay'\nprocs = 3\n")
    with pytest.raises(ConfigError, match=r"s\.toml: base: a replay run needs trace"):
        SweepPlan.load(path)
    path.write_text("[bse]\n")
    with pytest.raises(ConfigError, match=r"s\.toml: unknown key bse"):
        SweepPlan.load(path)
    path.write_text("seeds = 0\n")
    with pytest.raises(ConfigError, match="seeds must be a count >= 1 or a list, got 0"):
        SweepPlan.load(path)


@pytest.mark.slow
def test_every_executor_gives_the_same_runs(tmp_path):
    """2 schedulers x 3 user counts x 4 seeds, 28 days: serial, process pool, LocalCluster."""
    tables = {}
    for executor in ("serial", "process", "dask"):
        out = tmp_path / executor
        result = sweep(BASE, GRID, seeds=4, out=out, executor=executor, workers=2)
        assert len(result.runs) == 24 and not result.failed
        tables[executor] = (out / "runs.csv").read_text()
        assert rows_of(out / "runs.csv") == rows_of(tmp_path / "serial" / "runs.csv")
        assert (out / "summary.csv").read_text() == (
            tmp_path / "serial" / "summary.csv"
        ).read_text()
        for name in ("scheduler=CREASY,users=8,seed=4", "scheduler=EASY,users=2,seed=1"):
            swf = (out / name / "simulated.swf").read_bytes()
            assert swf == (tmp_path / "serial" / name / "simulated.swf").read_bytes()
    assert len(rows_of(tmp_path / "serial" / "runs.csv")) == 24


def test_the_python_table_is_the_files_table(tmp_path):
    result = sitesim.sweep(BASE, {"users": [2, 3]}, seeds=2, out=tmp_path, executor="serial")
    on_disk = rows_of(tmp_path / "runs.csv", drop=())
    assert [(row["users"], row["seed"]) for row in on_disk] == [
        ("2", "1"), ("2", "2"), ("3", "1"), ("3", "2"),
    ]  # fmt: skip
    for row, file_row in zip(result.runs, on_disk, strict=True):
        assert list(row) == list(file_row)
        assert float(file_row["response_mean_min"]) == row["response_mean_min"]
    in_memory = sitesim.sweep(BASE, {"users": [2, 3]}, seeds=2, executor="serial")
    assert in_memory.out is None and not list(Path(".").glob("users=*"))
    untimed = [{k: v for k, v in row.items() if k != "wall_s"} for row in result.runs]
    assert [{k: v for k, v in row.items() if k != "wall_s"} for row in in_memory.runs] == untimed


def test_confidence_intervals_by_students_t():
    rows = [
        {"users": 5, "seed": s, **dict.fromkeys(sitesim.Summary.fields(), float(v))}
        for s, v in enumerate([1.0, 2.0, 4.0], start=1)
    ]
    rows.append({"users": 9, "seed": 1, **dict.fromkeys(sitesim.Summary.fields(), 7.0)})
    first, second = summarize_runs(rows, ["users"])
    assert (first["users"], first["n"], second["n"]) == (5, 3, 1)
    sd = math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2)
    assert first["utilization"] == pytest.approx(7 / 3)
    assert first["utilization_sd"] == pytest.approx(sd)
    assert first["utilization_ci95"] == pytest.approx(stats.t.ppf(0.975, 2) * sd / math.sqrt(3))
    assert second["utilization"] == 7.0 and math.isnan(second["utilization_ci95"])


def test_a_failing_run_is_retried_once_then_reported(tmp_path, monkeypatch, capsys):
    from sitesim.runs import runner

    real = runner.run
    calls: dict[int, int] = {}

    def flaky(config, progress=None):  # type: ignore[no-untyped-def]
        calls[config.users] = calls.get(config.users, 0) + 1
        if config.users == 3 or (config.users == 2 and calls[2] == 1):
            raise RuntimeError(f"broken model for {config.users} users")
        return real(config, progress=progress)

    monkeypatch.setattr(runner, "run", flaky)
    toml = tmp_path / "s.toml"
    toml.write_text("[base]\ndays = 7\nwarmup_days = 1\n[factors]\nusers = [2, 3]\n")
    code = main(["sweep", str(toml), "--serial", "--out", str(tmp_path / "o")])
    assert code == 1
    assert "run users=3,seed=1 failed twice: RuntimeError: broken model for 3 users" in (
        capsys.readouterr().err
    )
    assert calls == {2: 2, 3: 2}
    two, three = tmp_path / "o" / "users=2,seed=1", tmp_path / "o" / "users=3,seed=1"
    assert (two / "results.json").exists()  # it worked the second time
    assert (two / "error.txt").read_text().count("--- attempt") == 1
    assert (three / "error.txt").read_text().count("RuntimeError: broken model") == 2
    assert not (three / "results.json").exists()
    assert [row["users"] for row in rows_of(tmp_path / "o" / "runs.csv")] == ["2"]


def test_an_interrupt_removes_what_a_killed_worker_staged(tmp_path, monkeypatch):
    # a pool worker slow to clean up after the parent's SIGTERM (a busy host) is killed, its
    # staging folder left behind: the interrupted sweep removes it before it stops
    from sitesim.sweeps import execute

    def interrupted(function, items, executor, **options):  # type: ignore[no-untyped-def]
        staging = tmp_path / "o" / ".users=2,seed=1.x1y2.tmp"
        staging.mkdir()
        (staging / "jobs.csv").write_text("half")
        yield from ()
        raise KeyboardInterrupt

    monkeypatch.setattr(execute, "execute_all", interrupted)
    base = SiteConfig(days=7, warmup_days=1)
    with pytest.raises(KeyboardInterrupt):
        sitesim.sweep(base, {"users": [2, 3]}, out=tmp_path / "o", workers=2, progress=False)
    assert not [p.name for p in (tmp_path / "o").rglob(".*")]


def test_a_folder_of_another_run_is_not_overwritten(tmp_path):
    sweep(BASE.replace(days=8, warmup_days=1), {"users": [2]}, out=tmp_path, executor="serial")
    with pytest.raises(ConfigError, match="holds the results of another configuration"):
        sweep(BASE.replace(days=9, warmup_days=1), {"users": [2]}, out=tmp_path, executor="serial")


@pytest.mark.slow
def test_a_sweep_killed_halfway_runs_only_the_missing_runs(tmp_path, capsys):
    toml = tmp_path / "s.toml"
    toml.write_text('out = "o"\nseeds = 4\n[base]\ndays = 56\n[factors]\nusers = [10, 20, 30]\n')
    out = tmp_path / "o"
    process = subprocess.Popen(
        [sys.executable, "-m", "sitesim.cli", "sweep", str(toml), "--workers", "2"],
        cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(out.glob("*/results.json"))) < 3:
        assert process.poll() is None, "the sweep ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the sweep and its workers, at once
    process.wait()
    gone_by = time.monotonic() + 60  # (a worker finishes the call it is in, a rename, first)
    while time.monotonic() < gone_by:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    done = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    assert 3 <= len(done) < 12 and not (out / "runs.csv").exists()
    assert main(["sweep", str(toml), "--serial"]) == 0
    printed = capsys.readouterr().out
    assert f"12 of 12 runs complete ({len(done)} found complete, {12 - len(done)} run now)" in (
        printed
    )
    kept = {name: (out / name / "results.json").stat().st_mtime_ns for name in done}
    assert kept == done  # not written again
    assert not list(out.glob(".*.tmp"))  # staging folders of the killed runs are gone
    assert len(rows_of(out / "runs.csv")) == 12
    for name in done:  # a run found complete is the run that would have run
        assert json.loads((out / name / "results.json").read_text())["sweep"]["name"] == name


def test_paired_differences_by_seed():
    def row(scheduler, users, seed, value):  # type: ignore[no-untyped-def]
        return {"scheduler": scheduler, "users": users, "seed": seed, "utilization": value}

    rows = [
        row("EASY", 5, 1, 0.5), row("EASY", 5, 2, 0.7), row("EASY", 5, 3, 0.6),
        row("CREASY", 5, 1, 0.6), row("CREASY", 5, 2, 0.9), row("CREASY", 5, 3, 0.6),
        row("CREASY", 9, 1, 0.1),  # no EASY run to compare with: left out
    ]  # fmt: skip
    (only,) = paired_differences(rows, ["scheduler", "users"], "scheduler", "EASY", ["utilization"])
    diffs = [0.1, 0.2, 0.0]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    assert (only["scheduler"], only["users"], only["n"]) == ("CREASY", 5, 3)
    assert only["utilization_diff"] == pytest.approx(mean)
    assert only["utilization_diff_ci95"] == pytest.approx(stats.t.ppf(0.975, 2) * sd / math.sqrt(3))


def test_competitive_ratios_against_easy_with_the_same_seed_and_levels():
    def row(scheduler, load, seed, utility, **params):  # type: ignore[no-untyped-def]
        return {"scheduler": scheduler, "load": load, "seed": seed, "utility_total": utility,
                **params}  # fmt: skip

    rows = [
        row("EASY", 0.5, 1, 10.0), row("EASY", 0.5, 2, 20.0), row("EASY", 0.9, 1, 0.0),
        row("GA", 0.5, 1, 15.0, mutation=0.2), row("GA", 0.5, 2, 10.0, mutation=0.2),
        row("GA", 0.9, 1, 5.0, mutation=0.2),  # EASY earned nothing: no ratio
        row("GA", 0.7, 1, 5.0, mutation=0.2),  # no EASY run: no ratio
    ]  # fmt: skip
    filled = with_competitive_ratios(rows, ["scheduler", "load", "mutation"])
    ratios = [r["competitive_ratio"] for r in filled]
    assert ratios[:5] == [1.0, 1.0, pytest.approx(math.nan, nan_ok=True), 1.5, 0.5]
    assert all(math.isnan(r) for r in ratios[5:])


def test_a_sweep_of_utility_replays_fills_competitive_ratios(tmp_path):
    trace = tmp_path / "t.swf"
    lines = [f"{i + 1} {20 * i} {5 * (i % 3)} {30 + 7 * (i % 5)} {1 + i % 4} -1 -1 {1 + i % 4} "
             "90 -1 1 1 1 -1 1 -1 -1 -1" for i in range(30)]  # fmt: skip
    trace.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    base = ReplayConfig(trace=str(trace), utility="lee-snavely", stop_job=20)
    result = sweep(base, {"scheduler": ["EASY", "PRIORITY"]}, seeds=2, executor="serial")
    easy, priority = result.runs[:2], result.runs[2:]  # the first factor outermost, then seeds
    assert [r["competitive_ratio"] for r in easy] == [1.0, 1.0]
    assert [r["competitive_ratio"] for r in priority] == [
        p["utility_total"] / e["utility_total"] for p, e in zip(priority, easy, strict=True)
    ]
    assert all(r["utility_jobs"] == 20 for r in result.runs)
    assert easy[0]["utility_total"] != easy[1]["utility_total"]  # each seed its own functions
    assert "competitive_ratio_ci95" in result.summary[1]


def test_rows_carry_the_schedulers_counters_also_when_resumed(tmp_path):
    factors = {"scheduler": ["DYNP"], "users": [3]}
    first = sitesim.sweep(BASE, factors, out=tmp_path, executor="serial", save_jobs=False)
    (row,) = first.runs
    assert row["scheduler_self_tuning_steps"] > 0 and row["scheduler_passes"] > 0
    resumed = sitesim.sweep(BASE, factors, out=tmp_path, executor="serial", save_jobs=False)
    assert resumed.runs[0]["scheduler_policy_switches"] == row["scheduler_policy_switches"]
    assert "scheduler_self_tuning_steps" in rows_of(tmp_path / "runs.csv")[0]


def test_a_sweep_file_gives_a_plan_that_carries_its_out_folder(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('out = "results"\n[base]\ndays = 7\nwarmup_days = 1\n[factors]\nusers = [2]\n')
    plan = SweepPlan.load(path)
    assert isinstance(plan, SweepPlan) and plan.out == tmp_path / "results"
    result = sweep(plan, executor="serial", save_jobs=False)
    assert result.out == tmp_path / "results" and (tmp_path / "results" / "runs.csv").exists()


def test_progress_false_is_no_progress_and_a_non_function_is_refused():
    result = sweep(BASE.replace(days=7, warmup_days=1), {"users": [2]}, executor="serial",
                   progress=False)  # fmt: skip
    assert len(result.runs) == 1
    assert sitesim.simulate(2, days=2, warmup_days=0, progress=False).summary.jobs >= 0
    with pytest.raises(ConfigError, match=r"progress must be a function .*got True"):
        sweep(BASE, {"users": [2]}, executor="serial", progress=True)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"progress must be a function .*got 1"):
        sitesim.simulate(2, days=2, progress=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("damage", ["truncate", "remove", "unlisted"])
def test_a_run_folder_with_a_damaged_file_is_run_again_on_resume(tmp_path, damage):
    """A truncated or lost file, or a results.json that lists none (an earlier sitesim's)."""
    base = BASE.replace(days=7, warmup_days=1)
    sweep(base, {"users": [2, 3]}, out=tmp_path, executor="serial")
    swf = tmp_path / "users=3,seed=1" / "simulated.swf"
    original = swf.read_bytes()
    if damage == "truncate":
        swf.write_bytes(original[: len(original) // 2])
    elif damage == "remove":
        swf.unlink()
    else:
        results = swf.parent / "results.json"
        document = json.loads(results.read_text())
        del document["files"]
        results.write_text(json.dumps(document))
    again = sweep(base, {"users": [2, 3]}, out=tmp_path, executor="serial")
    assert again.resumed == 1  # users=2 only
    assert swf.read_bytes() == original
    assert json.loads((swf.parent / "results.json").read_text())["files"]["simulated.swf"] == {
        "bytes": len(original), "sha256": hashlib.sha256(original).hexdigest(),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the sweep file is empty"),
        ("# nothing yet\n\n", "the sweep file is empty"),
        ("[base]\nusers = 5\n[factors]\n", r"\[factors\] is empty or missing"),
        ("seeds = 3\n[base]\nusers = 5\n", r"\[factors\] is empty or missing"),
        ("[factors]\nusers = [10, 20, 10]\n", "factor 'users' has the level 10 twice"),
        ("[factors]\nusers = [10, 10.0]\n", r"factor 'users' has the level 10.0 twice \(the "
         r"same as 10\)"),
        ('[factors]\nscheduler = ["EASY", "easy"]\n', "factor 'scheduler' has the level 'easy' "
         "twice"),
        ("baseline = ''\n[factors]\nusers = [1]\n", "baseline must be a scheduler name or none"),
    ],
)  # fmt: skip
def test_a_sweep_file_without_factors_or_with_a_level_twice_is_refused(tmp_path, text, message):
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        SweepPlan.load(path)
    assert main(["sweep", str(path), "--dry-run"]) == 2


def test_the_competitive_ratio_baseline_is_a_setting_of_the_plan(tmp_path):
    base = BASE.replace(users=4, days=7, warmup_days=1, utility=True)
    factors = {"scheduler": ["EASY", "FCFS"]}
    result = sweep(base, factors, seeds=2, executor="serial", baseline="FCFS")
    easy, fcfs = result.runs[:2], result.runs[2:]
    assert all(r["utility_jobs"] > 0 for r in result.runs)
    assert [r["competitive_ratio"] for r in fcfs] == [1.0, 1.0]
    assert [r["competitive_ratio"] for r in easy] == [
        e["utility_total"] / f["utility_total"] for e, f in zip(easy, fcfs, strict=True)
    ]
    unset = sweep(base, factors, seeds=2, executor="serial", baseline=None)
    assert all(math.isnan(r["competitive_ratio"]) for r in unset.runs)
    toml = tmp_path / "s.toml"
    toml.write_text("baseline = false\n[factors]\nscheduler = ['EASY']\n")
    assert SweepPlan.load(toml).baseline is None


def test_a_scheduler_object_is_copied_for_every_run_and_described_when_registered(tmp_path):
    from sitesim.schedulers import create

    template = create("CREASY", alpha=3000)
    base = BASE.replace(days=14, warmup_days=1)
    by_object = sweep(base, {"scheduler": [template], "users": [3, 4]}, seeds=2, out=tmp_path,
                      executor="serial")  # fmt: skip
    assert template.queue == [] and not template.stats().get("passes")
    by_name = sweep(base, {"scheduler": ["CREASY"], "alpha": [3000], "users": [3, 4]}, seeds=2,
                    executor="serial")  # fmt: skip
    drop = ("wall_s", "scheduler", "alpha")
    assert json.dumps([{k: v for k, v in r.items() if k not in drop} for r in by_object.runs]) == (
        json.dumps([{k: v for k, v in r.items() if k not in drop} for r in by_name.runs])
    )
    stored = json.loads((tmp_path / "scheduler=CREASY_alpha_3000,users=4,seed=2" / "results.json")
                        .read_text())["config"]  # fmt: skip
    assert (stored["scheduler"], stored["scheduler_params"]) == ("CREASY", {"alpha": 3000.0})


def test_the_three_steps_of_a_sweep_are_modules_of_their_own():
    from sitesim.sweeps import execute as sweep_runs
    from sitesim.sweeps import plan as sweep_plan
    from sitesim.sweeps import replications
    from sitesim.sweeps import sweep as sweeps

    assert sweeps.SweepPlan is sweep_plan.SweepPlan and sweeps.execute is sweep_runs.execute
    assert sweeps.summarize_runs is replications.summarize_runs


def test_a_tls_dask_scheduler_without_the_clients_tls_settings_is_one_clear_error():
    pytest.importorskip("dask.distributed")
    from sitesim.errors import SitesimError
    from sitesim.sweeps.executors import execute_all

    with pytest.raises(SitesimError, match="a tls:// scheduler needs the client's TLS settings"):
        list(execute_all(abs, [1], "dask", address="tls://127.0.0.1:9"))


# -- issue 32 ----------------------------------------------------------------------------------
#: A platform whose partition refuses jobs asking more than two hours.
PLATFORM = (ROOT / "tests" / "data" / "limited_platform.toml").read_text()
ON_A_PLATFORM = """\
out = "o"
seeds = 2
[base]
days = 7
warmup_days = 0
platform = "site.toml"
estimates = "ratio"
[factors]
users = [3]
"""


def test_a_sweep_on_a_platform_resumes_and_refuses_an_edited_platform(
    tmp_path, monkeypatch, capsys
):
    """The plan names the platform's sha256 as the runs' results.json do, so a second sweep
    finds them complete; a platform edited since is another configuration. The platform's
    path is relative to the sweep file, as the profile's and the trace's are."""
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "site.toml").write_text(PLATFORM)
    (tmp_path / "study" / "s.toml").write_text(ON_A_PLATFORM)
    monkeypatch.chdir(tmp_path)  # (not the sweep file's folder)
    argv = ["sweep", "study/s.toml", "--serial", "--results-only"]
    assert main(argv) == 0
    assert "2 of 2 runs complete (0 found complete, 2 run now)" in capsys.readouterr().out
    assert main(argv) == 0
    assert "2 of 2 runs complete (2 found complete, 0 run now)" in capsys.readouterr().out
    (tmp_path / "study" / "site.toml").write_text(PLATFORM.replace('"2:00', '"3:00'))
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "sitesim: error: study/o/users=3,seed=1 holds the results of another configuration "
        "(platform_sha256 differs); remove it or give another output folder"
    )


def test_the_replications_of_a_run_are_built_and_checked_once(monkeypatch):
    """A plan of many seeds builds each combination's configuration once (a seed is copied
    in), so that planning and --dry-run take time by the combinations, not the runs."""
    built = []
    check = SiteConfig.__post_init__
    monkeypatch.setattr(SiteConfig, "__post_init__", lambda self: [built.append(1), check(self)])
    plan = SweepPlan(BASE, {"users": [2, 3], "scheduler": ["FCFS", "EASY"]}, tuple(range(500)))
    assert plan.size == 2_000
    runs = plan.runs()
    assert len(runs) == 2_000 and len(built) == 4
    assert [run.config.seed for run in runs[:3]] == [0, 1, 2]
    assert runs[1].config == BASE.replace(users=2, scheduler="FCFS", seed=1)
    with pytest.raises(ConfigError, match="seed must be a whole number >= 0"):
        BASE.with_seed(-1)


def test_a_plan_over_the_limit_is_refused_before_it_is_expanded(tmp_path):
    plan = SweepPlan(BASE, {"users": [2, 3]}, (1, 2, 3))
    with pytest.raises(ConfigError, match=r"plans 6 runs \(factor levels x seeds: 2 x 3\), more"):
        sweep(plan, executor="serial", max_runs=5)
    (tmp_path / "s.toml").write_text("seeds = 20_000\n[factors]\nusers = [1]\n")
    with pytest.raises(ConfigError, match=r"plans 20,000 runs .* more than the limit of 10,000"):
        SweepPlan.load(tmp_path / "s.toml")
    assert len(SweepPlan.load(tmp_path / "s.toml", max_runs=20_000).seeds) == 20_000
    (tmp_path / "s.toml").write_text("seeds = 100_000_000_000\n[factors]\nusers = [1]\n")
    with pytest.raises(ConfigError, match=r"the sweep plans 1e\+11 runs .* of memory"):
        SweepPlan.load(tmp_path / "s.toml", max_runs=10**11)  # (before the seeds are listed)


def test_the_jobs_runs_left_out_are_said_by_reason_also_when_resumed(tmp_path, monkeypatch, capsys):
    """With estimates from the profile's request ratios, jobs ask more time than the
    partition's limit and are refused; the sweep says so on stderr, as replay says of a
    trace's impossible lines (before, only each run's results.json did)."""
    (tmp_path / "site.toml").write_text(PLATFORM)
    (tmp_path / "s.toml").write_text(ON_A_PLATFORM.replace("[3]", "[3, 6]"))
    monkeypatch.chdir(tmp_path)
    argv = ["sweep", "s.toml", "--serial", "--results-only"]
    assert main(argv) == 0
    warned = capsys.readouterr().err.splitlines()
    result = sweep(SweepPlan.load("s.toml"), executor="serial")  # (resumed: every run found)
    assert result.resumed == 4 and list(result.refused) == [
        "users=3,seed=1", "users=3,seed=2", "users=6,seed=1", "users=6,seed=2",
    ]  # fmt: skip
    assert warned == [
        f"sitesim: warning: {name}: skipped {n:,} impossible jobs (time limit above its "
        f"partition's {n:,})"
        for name, refused in result.refused.items()
        for n in [refused["time limit above its partition's"]]
    ]
    fresh = sweep(SweepPlan.load("s.toml"), out=tmp_path / "again", executor="serial")
    assert fresh.refused == result.refused
    rows = {f"users={row['users']},seed={row['seed']}": row for row in fresh.runs}
    assert all(rows[name]["jobs_skipped"] == sum(r.values()) for name, r in fresh.refused.items())


def test_a_sweep_file_with_tables_for_a_platform_and_accounts(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(
        "seeds = 1\n[base]\nusers = 6\ndays = 2\nwarmup_days = 0\nscheduler = 'SLURM'\n"
        "scheduler_params = {PriorityWeightFairshare = 1000}\n"
        "[base.platform]\nname = 'tiny'\nnodes = [{type = 'n', count = 4, cores = 8}]\n"
        "partitions = [{name = 'all', nodes = 'n'}]\n"
        "[factors]\naccounts = [{physics = 4, chemistry = 2}, '2x3']\n"
    )
    assert main(["sweep", str(path), "--serial", "--out", str(tmp_path / "o")]) == 0
    named = tmp_path / "o" / "accounts=physics.4+chemistry.2,seed=1" / "results.json"
    config = json.loads(named.read_text())["config"]
    assert config["platform"]["name"] == "tiny"
    assert config["scheduler_params"]["accounts"] == {"physics": 4, "chemistry": 2}
    capsys.readouterr()
    assert main(["rerun", str(named)]) == 0
    assert "same summary as" in capsys.readouterr().out
