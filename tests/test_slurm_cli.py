"""A site's own Slurm configuration from the command line: ``--platform slurm.conf`` and the
SLURM scheduler reading the same file, the association tree and the QOS (the hand-written
files of tests/data/slurm), as an operator would run it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitesim.cli.main import main
from sitesim.schedulers.slurm import SETTINGS
from sitesim.slurm.multifactor import WEIGHT_MAX

DATA = Path(__file__).parent / "data" / "slurm"
#: A few jobs of users 1..4 (sacctmgr's u1, user2, 3, u4), SWF's 18 fields.
SWF = "\n".join(
    f"{k} {k * 60} -1 {600 + 60 * k} {16 * (k % 3 + 1)} -1 -1 {16 * (k % 3 + 1)} 3600 -1 1 "
    f"{k % 4 + 1} 1 -1 1 -1 -1 -1"
    for k in range(1, 25)
)


def test_a_site_runs_on_its_own_slurm_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(SWF + "\n")
    status = main(
        ["replay", str(trace), "--platform", str(DATA / "slurm.conf"), "--scheduler", "SLURM",
         "--param", f"conf={DATA / 'slurm.conf'}", "--param", f"assoc={DATA / 'assoc.txt'}",
         "--param", f"qos={DATA / 'qos.txt'}", "--out", str(tmp_path / "o")]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    warnings = [line for line in err.splitlines() if "not modelled by sitesim" in line]
    assert warnings and len(warnings) == len(set(warnings))  # each listed once
    assert "slurm.conf:" in err and "ClusterName" in err
    assert "on slurm: 20 nodes, 640 cores, 16 GPUs, 3 partitions" in out
    folder = tmp_path / "o"
    results = json.loads((folder / "results.json").read_text())
    stats = results["scheduler_stats"]
    assert len(stats["not_modelled"]) == len(warnings)
    assert stats["started_by_main"] + stats["started_by_backfill"] == 24
    assert {row["account"] for row in results["per_account"]} >= {"physics", "chem"}
    assert (folder / "priorities.csv").read_text().startswith("id,user,priority,age,fairshare")
    # the settings in force (those of slurm.conf) are stored; rerun reads the file again
    settings = stats["settings"]
    assert settings["bf_window"] == 2880 and settings["bf_resolution"] == 120
    # every setting as the run used it: the file's, Slurm's defaults, each partition's keys
    used = stats["resolved_settings"]
    assert list(used)[: len(SETTINGS)] == list(SETTINGS)
    assert (used["bf_window"], used["bf_resolution"], used["bf_node_space_size"]) == (2880, 120, 0)
    assert used["PriorityDecayHalfLife"] == "7-00:00:00" and used["PriorityWeightTRES"] == ""
    assert (used["batch: PriorityJobFactor"], used["gpu: PriorityJobFactor"]) == (10, 20)
    assert (used["debug: PriorityTier"], used["batch: PriorityTier"]) == (2, 1)
    assert main(["rerun", str(folder / "results.json")]) == 0


@pytest.mark.parametrize(
    ("param", "message"),
    [
        (("bf_window=1", "bf_resolution=120"), "SLURM: bf_window (1 min) is shorter than"),
        (("PriorityWeightAge=-5",), "SLURM: PriorityWeightAge: must be a whole number >= 0"),
        (("PriorityFlags=ACCRUE_ALWAYS",), "flag 'ACCRUE_ALWAYS' is not modelled"),
        (("accounts=2x",), "'2x' is not COUNTxUSERS"),
    ],
)
def test_bad_slurm_settings_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], param: tuple[str, ...], message: str
) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(SWF + "\n")
    given = [item for p in param for item in ("--param", p)]
    status = main(["replay", str(trace), "--procs", "64", "--scheduler", "SLURM", *given])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and message in err


# -- issue 32 ----------------------------------------------------------------------------------
def replay(tmp_path: Path, *args: str, trace: str = SWF) -> tuple[int, Path]:
    """``sitesim replay`` of ``trace`` on 64 processors under SLURM with ``--param`` each of
    ``args``: its status and output folder."""
    path = tmp_path / "t.swf"
    path.write_text(trace + "\n")
    folder = tmp_path / "o"
    argv = ["replay", str(path), "--procs", "64", "--scheduler", "SLURM", "--out", str(folder)]
    status = main([*argv, *(item for arg in args for item in ("--param", arg))])
    return status, folder


def test_a_setting_equal_to_slurms_default_wins_over_the_conf_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # slurm.conf has bf_window=2880 and PriorityWeightFairshare=10000: the "off" arm is off
    given = ["bf_window=1440", "PriorityWeightFairshare=0"]
    status, folder = replay(tmp_path, f"conf={DATA / 'slurm.conf'}", *given)
    assert status == 0, capsys.readouterr().err
    results = json.loads((folder / "results.json").read_text())
    params = results["scheduler_params"]
    assert (params["bf_window"], params["PriorityWeightFairshare"]) == (1440, 0)
    in_force = results["scheduler_stats"]["settings"]  # (those that differ from the defaults)
    assert "bf_window" not in in_force and "PriorityWeightFairshare" not in in_force
    assert in_force["bf_resolution"] == 120  # (the file's, not given)
    assert main(["rerun", str(folder / "results.json")]) == 0


def test_the_largest_weights_run_and_the_priority_stays_within_32_bits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    top = str(WEIGHT_MAX)
    weights = [f"PriorityWeight{k}={top}" for k in ("Age", "Fairshare", "JobSize", "QOS")]
    status, folder = replay(tmp_path, *weights, f"PriorityWeightTRES=CPU={top}")
    assert status == 0, capsys.readouterr().err
    priorities = (folder / "priorities.csv").read_text().splitlines()[1:]
    top_priority = max(int(line.split(",")[2]) for line in priorities)
    assert top_priority == WEIGHT_MAX  # (capped, as slurmctld caps it)


def test_an_operators_listing_by_name_works_with_a_converted_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sitesim convert numbers users by first submission (alice 1, bob 2, carol 3, dave 4,
    # erin 5); the listing names them in another order, and frank, who has no job
    trace, names = tmp_path / "site.swf", tmp_path / "names.json"
    log = Path(__file__).parent / "data" / "formats" / "site.sacct"
    assert main(["convert", str(log), "-o", str(trace), "--mapping", str(names)]) == 0
    listing = tmp_path / "assoc.txt"
    listing.write_text(
        "Account|User|Share|ParentName\nphysics||40|root\nchemistry||20|root\n"
        "chemistry|dave|1|\nphysics|carol|1|\nchemistry|frank|1|\nphysics|alice|1|\n"
        "chemistry|bob|1|\n"
    )
    capsys.readouterr()
    folder = tmp_path / "o"
    status = main(
        ["replay", str(trace), "--scheduler", "SLURM", "--param", f"assoc={listing}",
         "--param", f"mapping={names}", "--param", "PriorityWeightFairshare=1000",
         "--out", str(folder)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"{listing}:6: User: 1 of the 5 users listed is not in {names}" in err
    assert f"{names}: 1 of the trace's 5 users is in no account of {listing} (user 5)" in err
    results = json.loads((folder / "results.json").read_text())
    accounts = {row["account"]: row["users"] for row in results["per_account"]}
    assert accounts == {"physics": 2, "chemistry": 2}  # (erin's jobs never ran: skipped)
    number = json.loads(names.read_text())["users"]
    jobs = [line.split(",") for line in (folder / "jobs.csv").read_text().splitlines()]
    user = jobs[0].index("user")
    users = {int(row[user]) for row in jobs[1:]}
    assert users == {number[name] for name in ("alice", "bob", "carol", "dave")}


def test_a_trace_user_in_no_account_of_the_listing_is_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    more = SWF + "\n25 2000 -1 60 16 -1 -1 16 3600 -1 1 9 1 -1 1 -1 -1 -1"  # (user 9)
    status, folder = replay(tmp_path, f"assoc={DATA / 'assoc.txt'}", trace=more)
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"{DATA / 'assoc.txt'}: user 9 of the trace is in no account: charged to" in err
    stats = json.loads((folder / "results.json").read_text())["scheduler_stats"]
    assert stats["users_in_no_account"] == 1


def test_the_scheduler_column_shows_each_file_by_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [
        f"conf={DATA / 'slurm.conf'}",
        f"assoc={DATA / 'assoc.txt'}",
        f"qos={DATA / 'qos.txt'}",
    ]
    status, _ = replay(tmp_path, *files, "PriorityWeightAge=4294967295")
    out = capsys.readouterr().out
    assert status == 0
    label = "SLURM conf=slurm.conf assoc=assoc.txt qos=qos.txt PriorityWeightAge=4294967295"
    assert f"\n{label}  " in out  # (its row of the table)
    assert str(DATA) not in out
