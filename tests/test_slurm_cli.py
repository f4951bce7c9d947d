"""A site's own Slurm configuration from the command line: ``--platform slurm.conf`` and the
SLURM scheduler reading the same file, the association tree and the QOS (the hand-written
files of tests/data/slurm), as an operator would run it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitesim.cli import main

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
    assert "slurm.conf:" in err and "PriorityTier" in err
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
