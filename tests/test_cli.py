"""The command line: outputs, and one clear line with exit status 2 for every bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sitesim.cli.main import main

LINE = "{n} {t} -1 {r} {p} -1 -1 {p} {e} -1 1 1 1 -1 0 -1 -1 -1"


@pytest.fixture
def trace(tmp_path):  # type: ignore[no-untyped-def]
    jobs = [LINE.format(n=i + 1, t=10 * i, r=30 + i % 7, p=1 + i % 4, e=60) for i in range(40)]
    jobs.append(LINE.format(n=41, t=400, r=-1, p=2, e=60))  # never ran: skipped
    path = tmp_path / "small.swf"
    path.write_text("; MaxProcs: 4\n" + "\n".join(jobs) + "\n")
    return path


def test_replay_prints_a_row_per_scheduler_and_writes_outputs(trace, tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        main(["replay", str(trace), "-s", "fcfs,EASY,CREASY", "--alpha", "3000", "--out", str(out)])
        == 0
    )
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert "40 jobs on 4 processors" in lines[0]
    assert lines[1].split()[:3] == ["Scheduler", "Jobs", "Utilization"]
    assert [line.split()[0] for line in lines[2:5]] == ["FCFS", "EASY", "CREASY"]
    assert "CREASY alpha=3000" in captured.out
    assert "skipped 1 impossible jobs (unknown runtime 1)" in captured.err
    for sub in ("FCFS", "EASY", "CREASY"):
        results = json.loads((out / sub / "results.json").read_text())
        assert results["summary"]["jobs"] == 40 and results["summary"]["jobs_skipped"] == 1
        assert results["workload"]["jobs_skipped"] == {"unknown runtime": 1}
        assert len(results["config"]["trace_sha256"]) == 64
        swf = (out / sub / "simulated.swf").read_text().splitlines()
        assert sum(not line.startswith(";") for line in swf) == 40
        assert len((out / sub / "jobs.csv").read_text().splitlines()) == 41


def test_single_scheduler_writes_into_out_directly(trace, tmp_path, capsys):
    assert (
        main(
            [
                "replay",
                str(trace),
                "--load",
                "0.5",
                "--estimates",
                "exact",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["workload"]["offered_load"] == pytest.approx(0.5)
    assert results["summary"]["offered_load"] == pytest.approx(0.5)
    config = results["config"]
    assert config["mode"] == "replay" and config["load"] == 0.5
    assert config["estimates"] == "exact" and config["scheduler"] == "EASY"


def error_of(capsys, argv):  # type: ignore[no-untyped-def]
    code = None
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse errors
        code = exit_.code
    err = capsys.readouterr().err.strip().splitlines()
    return code, err[-1]


def test_errors_are_one_line_with_status_2(trace, tmp_path, capsys):
    code, msg = error_of(capsys, ["replay", str(tmp_path / "missing.swf")])
    assert code == 2 and msg.endswith("missing.swf: cannot read: No such file or directory")
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n" + LINE.format(n=1, t=0, r=5, p="x", e=9) + "\n")
    code, msg = error_of(capsys, ["replay", str(bad)])
    assert code == 2 and msg.endswith("bad.swf:2: field 5 (procs): 'x' is not a number")
    code, msg = error_of(capsys, ["replay", str(trace), "-s", "NOPE"])
    assert code == 2 and "unknown scheduler 'NOPE'; choose one of FCFS, EASY" in msg
    code, msg = error_of(capsys, ["replay", str(trace), "--load", "-1"])
    assert code == 2 and "--load: must be in (0, 4], got -1" in msg
    code, msg = error_of(capsys, ["replay", str(trace), "--alpha", "10"])
    assert code == 2 and msg == "sitesim: error: --alpha applies to CREASY, not EASY"
    code, msg = error_of(capsys, ["replay", str(trace), "--strict"])
    assert code == 2 and "small.swf:42: job 41 has no runtime: field 4 (runtime) is -1" in msg
    code, msg = error_of(capsys, ["replay", str(trace), "--scale", "0.5", "--load", "0.5"])
    assert code == 2 and "not allowed with argument" in msg
    code, msg = error_of(capsys, ["replay", str(trace), "--procs", "0"])
    assert code == 2 and "--procs: must be a whole number >= 1, got 0" in msg
    nohead = tmp_path / "nohead.swf"
    nohead.write_text(LINE.format(n=1, t=0, r=5, p=1, e=9) + "\n")
    code, msg = error_of(capsys, ["replay", str(nohead)])
    assert code == 2 and msg.endswith("names no MaxProcs or MaxNodes; give --procs")


def test_help_is_complete(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    text = capsys.readouterr().out
    for option in ("--scheduler", "--alpha", "--scale", "--load", "--procs", "--estimates",
                   "--strict", "--out", "CONSERVATIVE", "examples:"):  # fmt: skip
        assert option in text


def user_trace(tmp_path, name="users.swf", waits=True):  # type: ignore[no-untyped-def]
    """Two users working in sessions: batches, short thinks and a break."""
    lines, t = [], 0
    for n in range(60):
        user = 1 + n // 30
        think = 4000 if n % 10 == 9 else (10 if n % 3 == 1 else 100 + 30 * (n % 7))
        wait = 5 * (n % 5) if waits else -1
        lines.append(
            LINE.format(n=n + 1, t=t, r=60 + 10 * (n % 4), p=1 + n % 4, e=600)
            .replace(" 1 1 1 -1 0", f" 1 {user} 1 -1 0")
            .replace(" -1 ", f" {wait} ", 1)
        )
        t += think
    path = tmp_path / name
    path.write_text(
        "; MaxProcs: 4\n; UnixStartTime: 893466664\n; TimeZoneString: US/Pacific\n"
        + "\n".join(lines)
        + "\n"
    )
    return path


def test_analyze_prints_tables_and_writes_json_and_figures(tmp_path, capsys):
    path = user_trace(tmp_path)
    out = tmp_path / "an"
    assert main(["analyze", str(path), str(path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== users.swf" in text and "== combined" in text
    assert "continue fit:" in text and "median think time (min) by response" in text
    data = json.loads((out / "analysis.json").read_text())
    assert set(data) == {"settings", "traces", "combined"}
    assert len(data["combined"]["rs_median_think_min"]) == 5
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["continue_probability.png", "expectations.png", "rs_table.png",
                    "think_by_bins.png", "think_cdf.png", "weekly_scatter.png"]  # fmt: skip
    assert all((out / p).read_bytes()[:4] == b"\x89PNG" for p in pngs)


def test_analyze_refuses_a_trace_without_waits(tmp_path, capsys):
    code, msg = error_of(capsys, ["analyze", str(user_trace(tmp_path, waits=False))])
    assert code == 2 and "no job has a known user, submit time, wait and runtime" in msg


def test_profile_writes_a_loadable_profile(tmp_path, capsys):
    from sitesim.workload.profile import WorkloadProfile

    out = tmp_path / "p.json"
    assert main(["profile", str(user_trace(tmp_path)), "-o", str(out), "--threshold", "30"]) == 0
    assert "profile written to" in capsys.readouterr().out
    profile = WorkloadProfile.load(out)
    assert profile.settings["session_threshold_s"] == 1800.0
    assert profile.sources[0]["name"] == "users.swf" and profile.sources[0]["jobs"] == 60


def test_run_prints_one_row_per_user_count_and_scheduler(tmp_path, capsys):
    out = tmp_path / "runs"
    argv = ["run", "--users", "2-4", "--step", "2", "--days", "7", "--warmup", "1",
            "-s", "EASY,CREASY", "--alpha", "3000", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Users", "Utilization", "Throughput(jobs/h)", "Jobs/Session",
                                "Avg.Response(min)", "Avg.Slowdown", "Scheduler"]  # fmt: skip
    assert [line.split()[0] for line in lines[1:5]] == ["2", "2", "4", "4"]
    assert "CREASY alpha=3000" in lines[2]
    runs = (out / "runs.csv").read_text().splitlines()
    assert len(runs) == 5 and runs[0].startswith("users,scheduler,alpha,seed,jobs,")
    folder = out / "users-0004-CREASY"
    results = json.loads((folder / "results.json").read_text())
    config = results["config"]
    assert config["mode"] == "site" and config["users"] == 4 and config["seed"] == 1
    assert config["model"] == "complete" and config["scheduler_params"] == {"alpha": 3000.0}
    assert len(config["profile_sha256"]) == 64
    assert results["summary"]["jobs_per_session"] > 0
    assert (
        (folder / "users.csv")
        .read_text()
        .startswith("user,jobs,sessions,batches,response_mean_min,slowdown_mean")
    )
    swf = (folder / "simulated.swf").read_text()
    assert "; Note: user model 4 complete users for 7 days" in swf


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--users", "0"], "--users: expected 1 <= A <= B"),
        (["--users", "9-3"], "--users: expected 1 <= A <= B"),
        (["--users", "ten"], "--users: expected N or A-B"),
        (["--pcont", "1.5", "0.05"], "pcont_a must be in (0, 1], got 1.5"),
        (["--estimates", "guess"], "estimate model must be exact, factor or ratio"),
        (["--alpha", "5"], "--alpha applies to CREASY, not EASY"),
        (["--days", "7", "--warmup", "7"], "warmup_days must be in [0, 7) (shorter than the run)"),
        (["--day-share", "2"], "day_share must be in [0, 1], got 2.0"),
        (["--profile", "/nonexistent/p.json"], "/nonexistent/p.json: cannot read"),
        (["--seed", "-1"], "--seed: must be a whole number >= 0, got -1"),
    ],
)
def test_run_errors(capsys, argv, message):
    code, msg = error_of(capsys, ["run", "--days", "2", "--warmup", "0", *argv])
    assert code == 2 and message in msg


@pytest.fixture
def unwritable(tmp_path):  # type: ignore[no-untyped-def]
    """A folder no file can be created in: read-only for a normal user; for root (who may
    write anywhere), /sys where the kernel refuses; else the test is skipped."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (folder, Path("/sys")):
        try:
            (candidate / "probe").touch()
            (candidate / "probe").unlink()
        except OSError:
            return candidate
    pytest.skip("no folder here refuses new files (running as root, no /sys)")


def bad_inputs(tmp_path: Path, unwritable: Path) -> list[tuple[list[str], str, Path | None]]:
    """(argv, message, path that must not appear) for every bad input of issue 8."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    empty = tmp_path / "empty.swf"
    empty.write_text("; MaxProcs: 4\n")
    skipped = tmp_path / "skipped.swf"
    skipped.write_text("; MaxProcs: 4\n" + LINE.format(n=1, t=0, r=-1, p=2, e=60) + "\n")
    gz = tmp_path / "profile.json.gz"
    gz.write_bytes(gzip.compress(b'{"format": "sitesim-profile"}'))
    run = ["run", "--users", "2", "--days", "2", "--warmup", "0"]
    return [
        ([*run, "--out", str(a_file)], f"{a_file}: exists and is not a folder", None),
        ([*run, "--out", str(a_file / "sub")], f"{a_file} is not a folder", a_file / "sub"),
        ([*run, "--out", str(unwritable / "o")], "cannot write", unwritable / "o"),
        ([*run, "--profile", str(gz)], "profile.json.gz: not a text file", None),
        ([*run, "--seed", "-1"], "--seed: must be a whole number >= 0, got -1", None),
        (["replay", str(empty)], "empty.swf: no job to replay: the file holds no job lines", None),
        (["replay", str(skipped)], "no job to replay (1 job lines; skipped: unknown runtime 1)",
         None),
        (["replay", str(skipped), "--out", str(a_file)], "exists and is not a folder", None),
        (["profile", str(skipped), "-o", str(tmp_path)], "is a folder; give a file name", None),
        (["profile", str(skipped), "-o", str(unwritable / "p.json")], "cannot write",
         unwritable / "p.json"),
        (["analyze", str(skipped), "--out", str(a_file)], "exists and is not a folder", None),
        (["rerun", str(a_file)], "a-file: not a results.json", None),
        (["sweep", str(tmp_path / "none.toml")], "none.toml: cannot read", None),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(13))
def test_every_bad_input_is_one_line_with_status_2_and_leaves_nothing(
    case, tmp_path, unwritable, capsys
):
    argv, message, absent = bad_inputs(tmp_path, unwritable)[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse: its usage lines, then the error
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert message in lines[-1], lines
    assert len(lines) == 1 or lines[0].startswith("usage:")
    assert absent is None or not absent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing half-written


def test_analyze_writes_every_figure_even_without_think_times(tmp_path, capsys):
    """Every user submits once: no think time exists; the figures say so instead of failing."""
    lines = [
        LINE.format(n=i + 1, t=100 * i, r=30, p=1, e=60)
        .replace(" 1 1 1 -1 0", f" 1 {i + 1} 1 -1 0")  # user i + 1
        .replace(" -1 ", " 5 ", 1)  # waited 5 s
        for i in range(5)
    ]
    trace = tmp_path / "once.swf"
    trace.write_text("; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    assert main(["analyze", str(trace), "--out", str(tmp_path / "an")]) == 0
    assert len(list((tmp_path / "an").glob("*.png"))) == 6
    assert (tmp_path / "an" / "analysis.json").exists()


def test_replay_with_feedback_reports_what_moved(tmp_path, capsys):
    site = tmp_path / "site"
    assert main(["run", "--users", "4", "--model", "static", "--days", "7", "--warmup", "1",
                 "-s", "EASY", "--out", str(site)]) == 0  # fmt: skip
    capsys.readouterr()
    swf = site / "users-0004-EASY" / "simulated.swf"
    assert main(["replay", str(swf), "-s", "FCFS,EASY", "--feedback"]) == 0
    out = capsys.readouterr().out
    assert "Sub.Viol(%)" in out  # the site-level trace records its dependencies
    assert "EASY: feedback moved 0 of" in out  # its own scheduler: nothing moves
    assert "dependent jobs, fields" in out


def test_compare_prints_both_directions_and_writes_its_files(tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["compare", "--users", "3", "--days", "7", "--seeds", "2", "--warmup", "1",
            "--serial", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "EASY trace -> FCFS" in printed and "FCFS trace -> EASY" in printed
    assert sorted(p.name for p in out.iterdir()) == [
        "compare.csv", "compare.json", "compare.png", "summary.csv",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--schedulers", "EASY"], "--schedulers: give two"),
        (["compare", "--users", "5-2"], "--users: expected 1 <= A <= B"),
        (["compare", "--days", "x"], "--days: expected numbers separated by commas"),
        (["run", "--runtime-scale", "0"], "--runtime-scale: must be a finite number > 0"),
        (["replay", "x.swf", "--think", "first"], "--think: invalid choice"),
    ],
)
def test_experiment_options_are_checked(capsys, argv, message):
    code, msg = error_of(capsys, argv)
    assert code == 2 and message in msg


def test_utility_augment_then_replay_with_utility_schedulers(tmp_path, capsys):
    lines = [LINE.format(n=i + 1, t=20 * i, r=30 + 7 * (i % 5), p=1 + i % 4, e=90)
             .replace(" -1 ", f" {15 * (i % 4)} ", 1) for i in range(60)]  # fmt: skip
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n; Queue: 0 express\n; Queue: 1 low\n" + "\n".join(lines))
    out = tmp_path / "u.swf"
    assert main(["utility", "augment", str(trace), "-o", str(out), "--seed", "3"]) == 0
    assert "60 of 60 jobs given utility functions" in capsys.readouterr().out
    again = tmp_path / "u2.swf"
    assert main(["utility", "augment", str(trace), "-o", str(again), "--seed", "3"]) == 0
    assert out.read_bytes() == again.read_bytes()  # deterministic for a seed
    from sitesim.workload.swf import read_swf

    augmented = read_swf(out)
    assert len(augmented.tails) == 60
    assert set(augmented.column("queue").tolist()) == {0.0}  # queue 0, named express: level 0
    argv = ["replay", str(out), "-s", "EASY,PRIORITY,FIRSTPRICE,PRIO,GA", "--param",
            "generations=5", "--uncertainty", "0.3", "--cancel-expired", "--out",
            str(tmp_path / "runs")]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Competitive ratio" in printed and "generations=5" in printed
    results = json.loads((tmp_path / "runs" / "GA" / "results.json").read_text())
    assert results["config"]["uncertainty"] == 0.3 and results["config"]["cancel_expired"]
    assert results["summary"]["utility_jobs"] == 60
    assert results["summary"]["competitive_ratio"] > 0
    swf = (tmp_path / "runs" / "GA" / "simulated.swf").read_text().splitlines()
    first = next(line for line in swf if not line.startswith(";"))
    assert len(first.split()) > 18  # the utility function is kept


def test_run_with_utility_reports_utility_and_throughput(capsys):
    argv = ["run", "--users", "4", "--days", "7", "--warmup", "1", "-s", "EASY,FIRSTPRICE",
            "--utility", "--deadline-wait", "30"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Competitive ratio" in out and "FIRSTPRICE" in out


def test_replay_with_utility_is_augment_then_replay(trace, tmp_path, capsys):
    augmented = tmp_path / "a.swf"
    shape = ["--deadline-factor", "3", "--decay", "step"]
    argv = ["utility", "augment", str(trace), "--jobs", "5:35", "-o", str(augmented), "--seed", "4"]
    assert main([*argv, *shape]) == 0
    assert main(["replay", str(augmented), "-s", "PRIORITY", "--out", str(tmp_path / "a")]) == 0
    argv = ["replay", str(trace), "--jobs", "5:35", "--utility", "lee-snavely", "--seed", "4",
            "-s", "PRIORITY", "--out", str(tmp_path / "b"), *shape]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    a, b = (json.loads((tmp_path / x / "results.json").read_text()) for x in "ab")
    assert a["summary"] == b["summary"] and a["summary"]["jobs"] == 30
    assert b["config"]["start_job"] == 5 and b["config"]["stop_job"] == 35
    assert main(["rerun", str(tmp_path / "b" / "results.json")]) == 0  # the config reproduces it
    assert "same summary" in capsys.readouterr().out
    code, msg = error_of(capsys, ["replay", str(trace), "--jobs", "5:500"])
    assert code != 0 and "job lines 5:500" in msg


# -- issue 32 ----------------------------------------------------------------------------------
#: A platform whose partition refuses jobs asking more than two hours.
LIMITED_PLATFORM = (Path(__file__).parent / "data" / "limited_platform.toml").read_text()


def test_a_site_level_run_says_which_jobs_it_refused_by_reason(tmp_path, capsys):
    """Jobs whose estimate (the profile's request ratios) is above the partition's time limit
    are refused; the run says so on stderr, as replay says of a trace's impossible lines,
    with the counts of results.json (before, only results.json said so)."""
    (tmp_path / "site.toml").write_text(LIMITED_PLATFORM)
    out = tmp_path / "o"
    argv = ["run", "--platform", str(tmp_path / "site.toml"), "--users", "3-6", "--step", "3",
            "--days", "7", "--warmup", "0", "--estimates", "ratio", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    warned = capsys.readouterr().err.splitlines()
    expected = []
    for users in (3, 6):
        results = json.loads((out / f"users-000{users}-EASY" / "results.json").read_text())
        n = results["rejected"]["time limit above its partition's"]
        assert n > 0 and results["summary"]["jobs_skipped"] == n
        expected.append(
            f"sitesim: warning: {users} users, EASY: skipped {n:,} impossible jobs (time limit "
            f"above its partition's {n:,})"
        )
    assert warned == expected


def test_the_jobs_runs_left_out_are_one_line_when_the_same_else_a_line_a_run(capsys):
    from sitesim.cli.commands.arguments import warn_refused

    trace = {"unknown runtime": 5, "larger than the machine": 1}
    warn_refused([("EASY", trace), ("FCFS", trace)], of=2)  # (the same trace's lines)
    warn_refused([("EASY", trace), ("FCFS", {})], of=2)
    warn_refused([("SLURM", {**trace, "QOSMaxSubmitJobPerUserLimit": 2})], of=1)
    warn_refused([(f"run {k}", {"a": k}) for k in range(1, 13)], of=20)  # (beyond ten: sums)
    warn_refused([("EASY", {})], of=1)
    assert capsys.readouterr().err.splitlines() == [
        "sitesim: warning: skipped 6 impossible jobs (unknown runtime 5, larger than the "
        "machine 1)",
        "sitesim: warning: EASY: skipped 6 impossible jobs (unknown runtime 5, larger than the "
        "machine 1)",
        "sitesim: warning: skipped 8 impossible jobs (unknown runtime 5, larger than the "
        "machine 1, QOSMaxSubmitJobPerUserLimit 2)",
        "sitesim: warning: 12 of 20 runs skipped 78 impossible jobs (a 78)",
    ]


def test_compare_hands_over_the_jobs_its_runs_left_out(tmp_path):
    from sitesim.runs.config import SiteConfig
    from sitesim.sweeps.compare import compare

    (tmp_path / "site.toml").write_text(LIMITED_PLATFORM)
    site = SiteConfig(platform=str(tmp_path / "site.toml"), estimates="ratio", days=7,
                      warmup_days=0, users=3)  # fmt: skip
    said: list[tuple[str, dict[str, int]]] = []
    rows = compare(site, seeds=[4], executor="serial", refused=lambda *pair: said.append(pair))
    assert len(rows) == 2
    ((point, refused),) = said
    assert point == "3 users, 7 days, seed 4"
    assert (
        list(refused) == ["time limit above its partition's"]
        and refused["time limit above its partition's"] > 0
    )


@pytest.mark.parametrize("command", ["run", "replay", "compare", "sweep", "utility"])
def test_the_examples_of_the_help_are_spaced_as_typed(command, capsys):
    """An example continued on the next line keeps its backslash; none has a run of spaces
    inside (a lost backslash joined the lines: '--jobs 5000:10000       --utility')."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    examples = [line for line in capsys.readouterr().out.splitlines()
                if line.startswith("  sitesim ") or line.startswith("      -")]  # fmt: skip
    assert examples
    for line in examples:
        command_part = line.split("#")[0].rstrip().removesuffix("\\")
        assert "   " not in command_part.strip(), line
