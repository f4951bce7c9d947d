"""Bad input gets a clear error (issue 21): the command line, the SWF reader and trace replay.

Each test here failed before its fix. Traces are a few hand-written SWF lines.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from sitesim import output
from sitesim.cli.main import main
from sitesim.errors import ConfigError, SitesimError
from sitesim.models.feedback import AT_TIME, FeedbackPlan
from sitesim.models.trace_user import TraceWorkload
from sitesim.runs.config import ReplayConfig, SiteConfig
from sitesim.runs.replay import run_replay
from sitesim.sweeps.compare import compare
from sitesim.workload.swf import read_swf

ROOT = Path(__file__).resolve().parents[2]


def swf(
    tmp_path: Path, jobs: list[str], name: str = "t.swf", header: str = "; MaxProcs: 8"
) -> Path:
    """A trace of job lines ``"submit wait runtime procs user"`` (the other fields unknown)."""
    lines = []
    for n, job in enumerate(jobs, start=1):
        submit, wait, runtime, procs, user = job.split()
        lines.append(f"{n} {submit} {wait} {runtime} {procs} -1 -1 {procs} 600 -1 1 {user} "
                     "-1 -1 -1 -1 -1 -1")  # fmt: skip
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in [header, *lines] if line))
    return path


def error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one line a failing command prints (argparse's usage lines aside); exit status 2."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2, lines
    assert len(lines) == 1 or lines[0].startswith("usage:"), lines
    return lines[-1]


# -- 1. replay --strict names the real value ---------------------------------------------------
def test_strict_names_the_line_and_the_real_value_of_a_negative_runtime(tmp_path, capsys):
    trace = swf(tmp_path, ["0 0 100 2 1", "10 0 -500 2 1", "20 0 100 2 2"], name="neg.swf")
    message = error(capsys, ["replay", str(trace), "--strict"])
    assert message.endswith("neg.swf:3: job 2 has a negative runtime: field 4 (runtime) is -500")


def test_strict_names_both_size_fields_with_their_values(tmp_path, capsys):
    trace = swf(tmp_path, ["0 0 100 2 1", "10 0 50 16 1"], name="big.swf")
    message = error(capsys, ["replay", str(trace), "--strict"])
    assert message.endswith(
        "big.swf:3: job 2 needs more than 8 processors: field 5 (procs) is 16 and "
        "field 8 (req_procs) is 16"
    )


@pytest.mark.parametrize("extra", [[], ["--utility", "linear"]])
def test_strict_names_the_file_line_in_an_excerpt(tmp_path, capsys, extra):
    jobs = ["0 0 100 2 1", "10 0 100 2 1", "20 0 -500 2 1", "30 0 9 1 1", "15 0 9 1 1"]
    trace = str(swf(tmp_path, jobs, name="x.swf"))
    message = error(capsys, ["replay", trace, "--strict", "--jobs", "2:4", *extra])
    assert message.endswith("x.swf:4: job 3 has a negative runtime: field 4 (runtime) is -500")
    message = error(capsys, ["replay", trace, "--strict", "--jobs", "3:5", *extra])
    assert "x.swf:6: job 5 is submitted before a job on an earlier line" in message


# -- 2. analyze of degenerate traces -----------------------------------------------------------
def test_analyze_of_one_job_says_there_is_no_think_time_instead_of_nan(tmp_path, capsys):
    assert main(["analyze", str(swf(tmp_path, ["0 10 100 2 1"]))]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out
    assert "think times: none (no user has two usable jobs)" in out
    assert "Spearman rho n/a (needs 3 weeks with jobs)" in out


def test_analyze_of_one_user_in_one_week_prints_no_nan(tmp_path, capsys):
    jobs = [f"{t} 5 60 1 1" for t in (0, 100, 400, 2000, 9000)]
    assert main(["analyze", str(swf(tmp_path, jobs))]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "1 users" in out
    assert "Spearman rho n/a" in out


def test_analyze_of_a_trace_without_job_lines_says_so(tmp_path, capsys):
    message = error(capsys, ["analyze", str(swf(tmp_path, [], name="empty.swf"))])
    assert message.endswith("empty.swf: the file holds no job lines")


# -- 3. compare's drain -------------------------------------------------------------------------
def test_the_drain_is_never_negative():
    """1 static user, 28 days, seed 1: the open replays end 1.1 days before the horizon."""
    rows = compare(SiteConfig(model="static", warmup_days=1), users=[1], days=[28], seeds=[1],
                   executor="serial")  # fmt: skip
    assert [row["drain_d"] for row in rows] == [0.0, 0.0]


def test_the_drain_counts_the_days_after_the_horizon():
    from sitesim.sweeps.compare import drain_days

    day = 86_400.0
    assert drain_days(np.array([3 * day, 30.5 * day]), 28) == pytest.approx(2.5)
    assert drain_days(np.array([3 * day, 27 * day]), 28) == 0.0
    assert math.isnan(drain_days(np.array([]), 28))


# -- 4. feedback replay needs think times; feedback-only options need --feedback ---------------
def test_feedback_refuses_a_trace_without_waits_with_the_reason_analyze_gives(tmp_path, capsys):
    """As LLNL-Atlas, LCG and NASA-iPSC: field 3 (wait) is -1 on every line."""
    trace = swf(tmp_path, ["0 -1 100 2 1", "300 -1 100 2 1", "900 -1 50 1 2"], name="nowait.swf")
    analyzed = error(capsys, ["analyze", str(trace)])
    fed = error(capsys, ["replay", str(trace), "--feedback"])
    reason = "field 3 (wait) is unknown on every job line, so no think time can be computed"
    assert reason in analyzed and reason in fed
    assert "a feedback replay infers dependencies from think times" in fed


def test_feedback_infers_no_dependency_for_jobs_of_an_unknown_user(tmp_path):
    trace = read_swf(swf(tmp_path, ["0 0 100 1 -1", "110 0 100 1 -1", "220 0 100 1 3"]))
    workload = TraceWorkload.from_swf(trace, 8)
    assert (FeedbackPlan.of(workload).kind == AT_TIME).all()


@pytest.mark.parametrize("option", [["--think", "max"], ["--threshold", "5"]])
def test_feedback_options_without_feedback_are_an_error(tmp_path, capsys, option):
    message = error(capsys, ["replay", str(swf(tmp_path, ["0 0 100 2 1"])), *option])
    assert message.endswith(f"{option[0]} applies to --feedback only (how it infers dependencies)")


@pytest.mark.parametrize("setting", [{"think": "max"}, {"threshold_min": 5}])
def test_replay_configurations_refuse_feedback_settings_without_feedback(setting):
    (name,) = setting
    with pytest.raises(ConfigError, match=f"{name} applies to feedback replays only"):
        ReplayConfig(trace="t.swf", **setting)
    ReplayConfig(trace="t.swf", feedback=True, **setting)  # with feedback they apply


# -- 5. --load and --scale ranges -----------------------------------------------------------
@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--load", "1e9"], "argument --load: must be in (0, 4], got 1e9"),
        (["--scale", "1e-300"], "argument --scale: must be in [0.001, 1000], got 1e-300"),
        (["--scale", "1e4"], "argument --scale: must be in [0.001, 1000], got 1e4"),
    ],
)
def test_load_and_scale_outside_their_ranges_are_an_error(tmp_path, capsys, option, message):
    trace = swf(tmp_path, ["0 0 100 2 1", "100 0 100 2 1"])
    assert error(capsys, ["replay", str(trace), *option]).endswith(message)


@pytest.mark.parametrize(
    ("setting", "message"),
    [({"load": 1e9}, r"load must be in \(0, 4\], got 1000000000.0"),
     ({"scale": 1e-300}, r"scale must be in \[0.001, 1000\], got 1e-300")],
)  # fmt: skip
def test_replay_configurations_check_load_and_scale_ranges(setting, message):
    with pytest.raises(ConfigError, match=message):
        ReplayConfig(trace="t.swf", **setting)


def test_the_help_states_the_ranges(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "F in [0.001, 1000]" in text and "L in (0, 4]" in text


def test_a_load_the_trace_cannot_reach_names_the_loads_it_can(tmp_path):
    """2 jobs of 2 procs x 100 s in 20,000 s on 8 processors: the trace offers 0.0025."""
    trace = read_swf(swf(tmp_path, ["0 0 100 2 1", "20000 0 100 2 1"]))
    config = ReplayConfig(trace=trace.name, load=4, estimates="exact")
    reach = "0.000625, outside [0.001, 1000]; it can be replayed at loads from 2.5e-06 to 2.5"
    with pytest.raises(
        ConfigError,
        match=re.escape(
            f"t.swf offers 0.0025, so its inter-arrival times would be multiplied by {reach}"
        ),
    ):
        run_replay(config, trace=trace)
    assert run_replay(config.replace(load=2.5), trace=trace).summary.jobs == 2


# -- 6. scheduler options -----------------------------------------------------------------------
def test_a_parameter_no_scheduler_takes_is_named_with_the_scheduler(tmp_path, capsys):
    trace = str(swf(tmp_path, ["0 0 100 2 1"]))
    message = error(capsys, ["replay", trace, "--param", "foo=1"])
    assert message == (
        "sitesim: error: --param foo: no scheduler takes a parameter 'foo' (EASY takes "
        "priority; docs/reference/schedulers.md lists every scheduler's)"
    )
    message = error(capsys, ["replay", trace, "-s", "FCFS", "--param", "levels=demand"])
    assert message == "sitesim: error: --param levels applies to PRIO, not FCFS"


@pytest.mark.parametrize("names", ["FCFS,", ",EASY", "FCFS,,EASY", " "])
def test_empty_scheduler_names_are_an_error(tmp_path, capsys, names):
    message = error(capsys, ["replay", str(swf(tmp_path, ["0 0 100 2 1"])), "-s", names])
    assert f"empty scheduler name in {names!r}" in message


def test_compare_refuses_an_empty_scheduler_name(capsys):
    assert "empty scheduler name in 'EASY,'" in error(capsys, ["compare", "--schedulers", "EASY,"])


# -- 7. --out must be new or empty; --force replaces an earlier run's outputs ------------------
def test_replay_refuses_a_folder_with_an_earlier_run(tmp_path, capsys):
    trace = str(swf(tmp_path, ["0 0 100 2 1", "50 0 100 2 1"]))
    out = tmp_path / "out"
    assert main(["replay", trace, "-s", "FCFS,EASY", "--out", str(out)]) == 0
    capsys.readouterr()
    message = error(capsys, ["replay", trace, "-s", "FCFS", "--out", str(out)])
    assert message.endswith(
        "out: not empty (holds EASY, FCFS, runs.csv); the new outputs would mix with those: "
        "choose another folder, or give --force"
    )
    assert sorted(p.name for p in out.iterdir()) == ["EASY", "FCFS", "runs.csv"]
    assert main(["replay", trace, "-s", "FCFS", "--out", str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["jobs.csv", "results.json", "simulated.swf"]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--users", "1", "--days", "1", "--warmup", "0", "-s", "FCFS"],
        ["compare", "--users", "1", "--days", "1", "--seeds", "1", "--warmup", "0", "--serial"],
        ["analyze", "TRACE"],
    ],
    ids=["run", "compare", "analyze"],
)
def test_every_command_with_out_refuses_a_folder_in_use_unless_forced(tmp_path, capsys, argv):
    argv = [str(swf(tmp_path, ["0 5 100 2 1", "300 5 100 2 1"])) if a == "TRACE" else a
            for a in argv]  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs.csv").write_text("scheduler\nLJF\n")  # an earlier run's
    assert "not empty (holds runs.csv)" in error(capsys, [*argv, "--out", str(out)])
    assert (out / "runs.csv").read_text() == "scheduler\nLJF\n"
    assert main([*argv, "--out", str(out), "--force"]) == 0
    assert not (out / "runs.csv").exists() or "LJF" not in (out / "runs.csv").read_text()
    assert any(out.iterdir())


def test_force_removes_only_what_sitesim_writes(tmp_path):
    out = tmp_path / "out"
    (out / "EASY").mkdir(parents=True)
    for name in ("runs.csv", "EASY/results.json", "EASY/simulated.swf", ".jobs.csv.x1.tmp"):
        (out / name).write_text("old")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SitesimError, match=r"holds notes\.txt, which sitesim does not write"):
        output.clear_output_folder(out)
    assert (out / "EASY" / "results.json").exists()
    (out / "notes.txt").unlink()
    (out / "link.csv").symlink_to(tmp_path)
    with pytest.raises(SitesimError, match=r"holds link\.csv"):
        output.clear_output_folder(out)
    (out / "link.csv").unlink()
    output.clear_output_folder(out)
    assert out.is_dir() and not any(out.iterdir())


def test_force_never_empties_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "runs.csv").write_text("old")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SitesimError, match="will not empty the current folder"):
        output.clear_output_folder(".")
    with pytest.raises(SitesimError, match="will not empty the current folder"):
        output.clear_output_folder(tmp_path.parent)
    assert (tmp_path / "runs.csv").exists()


def test_a_new_or_empty_folder_is_accepted(tmp_path):
    output.check_output_folder(tmp_path / "new", new=True)
    output.check_output_folder(tmp_path, new=True)
    (tmp_path / "x").write_text("")
    output.check_output_folder(tmp_path)  # (a sweep resumes into its own folder)
    with pytest.raises(SitesimError, match="not empty"):
        output.check_output_folder(tmp_path, new=True)


# -- 8. unsorted and empty traces, runs/ ----------------------------------------------------
def test_a_trace_out_of_submit_order_is_counted(tmp_path, capsys):
    trace = swf(tmp_path, ["100 0 100 2 1", "10 0 50 2 1", "200 0 100 2 2", "150 0 9 1 2"])
    assert main(["replay", str(trace), "--out", str(tmp_path / "o")]) == 0
    assert "2 job lines are out of submit order" in capsys.readouterr().err
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["workload"]["jobs_out_of_order"] == 2


def test_one_misplaced_line_is_one_line_out_of_order(tmp_path, capsys):
    jobs = ["100000 0 100 2 1", *(f"{t} 0 10 1 1" for t in range(1, 124))]
    assert main(["replay", str(swf(tmp_path, jobs)), "--out", str(tmp_path / "o")]) == 0
    assert "warning: 1 job line is out of submit order" in capsys.readouterr().err
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["workload"]["jobs_out_of_order"] == 1


def test_strict_refuses_a_trace_out_of_submit_order_at_its_line(tmp_path, capsys):
    trace = swf(tmp_path, ["100 0 100 2 1", "100 0 100 2 1", "10 0 50 2 1"], name="u.swf")
    message = error(capsys, ["replay", str(trace), "--strict"])
    assert "u.swf:4: job 3 is submitted before a job on an earlier line" in message


def test_a_sorted_trace_has_nothing_out_of_order(tmp_path):
    trace = read_swf(swf(tmp_path, ["0 0 1 1 1", "0 0 1 1 1", "5 0 1 1 1"]))
    assert not len(trace.out_of_order())
    unknown = read_swf(swf(tmp_path, ["0 0 1 1 1", "-1 0 1 1 1", "5 0 1 1 1"], name="u.swf"))
    assert not len(unknown.out_of_order())  # an unknown submit time is skipped, not unsorted


@pytest.mark.parametrize("header", ["", "; MaxProcs: 8"])
def test_a_trace_without_job_lines_says_so_not_give_procs(tmp_path, capsys, header):
    message = error(capsys, ["replay", str(swf(tmp_path, [], name="e.swf", header=header))])
    assert message.endswith("e.swf: no job to replay: the file holds no job lines")


def test_git_ignores_the_runs_folder_of_the_readme_examples():
    assert "runs/" in (ROOT / ".gitignore").read_text().split()
    assert "--out runs/" in (ROOT / "README.md").read_text()


def test_rerun_refuses_a_folder_in_use_unless_forced(tmp_path, capsys):
    first = tmp_path / "first"
    trace = str(swf(tmp_path, ["0 5 100 2 1", "300 5 100 2 1"]))
    assert main(["replay", trace, "-s", "FCFS", "--out", str(first)]) == 0
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs.csv").write_text("scheduler\nLJF\n")  # an earlier run's
    argv = ["rerun", str(first / "results.json"), "--out", str(out)]
    assert "not empty (holds runs.csv)" in error(capsys, argv)
    assert main([*argv, "--force"]) == 0
    assert not (out / "runs.csv").exists()
