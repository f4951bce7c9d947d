"""The per-account table: jobs per session counts the jobs of sessions, and is not applicable
(NaN, printed "-") to an account without sessions, as every account of a trace replay."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sitesim.cli.main import main
from sitesim.engine.job import JobState
from sitesim.engine.records import JOB_DTYPE
from sitesim.slurm.accounts import per_account
from sitesim.slurm.associations import Associations


def records(users: list[int], sessions: list[int]) -> np.ndarray:
    """Jobs of one processor and 60 s each, submitted a minute apart, all completed."""
    rec = np.zeros(len(users), dtype=JOB_DTYPE)
    rec["id"] = np.arange(1, len(users) + 1)
    rec["user"] = users
    rec["session"] = sessions
    rec["submit"] = rec["start"] = 60.0 * np.arange(len(users))
    rec["end"] = rec["start"] + 60.0
    rec["runtime"] = rec["response"] = 60.0
    rec["size"] = 1
    rec["state"] = JobState.COMPLETED
    return rec


TREE = Associations.build(
    [("a", None, 1.0), ("b", None, 1.0)],
    [(1, "a", 1.0, True), (2, "a", 1.0, True), (3, "b", 1.0, True)],
    "test",
)


def test_jobs_per_session_counts_the_jobs_of_sessions_only():
    # account a: user 1's two sessions (3 jobs) and user 2's job of no session; b: none
    rec = records([1, 1, 1, 2, 3, 3], [0, 0, 1, -1, -1, -1])
    table = per_account(rec, (0.0, 1e6), TREE)
    a, b = table
    assert (a["account"], a["jobs"], a["sessions"]) == ("a", 4, 2)
    assert a["jobs_per_session"] == 1.5  # 3 jobs of sessions / 2, not 4 / 2
    assert (b["account"], b["sessions"]) == ("b", 0)
    assert math.isnan(b["jobs_per_session"])  # not applicable, not 0


def test_a_replay_prints_no_jobs_per_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    lines = ["; MaxProcs: 8"] + [
        f"{k} {k * 60} -1 {300 + k * 10} {1 + k % 4} -1 -1 {1 + k % 4} 900 -1 1 {1 + k % 4} 1 -1 1 "
        "-1 -1 -1"
        for k in range(1, 13)
    ]
    trace = tmp_path / "t.swf"
    trace.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(trace), "-s", "SLURM", "--param", "accounts=2x2"]) == 0
    out = capsys.readouterr().out.splitlines()
    head = next(k for k, line in enumerate(out) if line.startswith("Account"))
    column = out[head].split().index("Jobs/session")
    rows = [line.split() for line in out[head + 1 : head + 3]]
    assert [row[0] for row in rows] == ["a1", "a2"]
    assert [row[column] for row in rows] == ["-", "-"]


def test_share_is_the_normalized_shares_and_usage_the_share_of_core_hours():
    # science (60) holds physics (40: users 1, 2) and chem (20: user 3); teaching (10: user 4)
    # under root; user 5 is in no account: its own under root with one share, as fairshare
    tree = Associations.build(
        [("science", None, 60.0), ("physics", "science", 40.0), ("chem", "science", 20.0),
         ("teaching", None, 10.0)],
        [(1, "physics", 1.0, True), (2, "physics", 1.0, True), (3, "chem", 1.0, True),
         (4, "teaching", 1.0, True)],
        "test",
    )  # fmt: skip
    rec = records([1, 3, 4, 5, 5], [-1] * 5)
    rec["size"] = [4, 2, 1, 1, 0]  # (each job 60 s: core-hours in proportion)
    rows = {str(row["account"]): row for row in per_account(rec, (0.0, 1e6), tree)}
    assert sorted(rows) == ["chem", "physics", "teaching", "u5"]  # (science: no jobs of its own)
    root = 60 + 10 + 1  # (science, teaching, u5)
    expected = {"physics": 60 / root * 40 / 60, "chem": 60 / root * 20 / 60,
                "teaching": 10 / root, "u5": 1 / root}  # fmt: skip
    for name, share in expected.items():
        assert rows[name]["share"] == pytest.approx(share)
    used = {"physics": 4, "chem": 2, "teaching": 1, "u5": 1}
    for name, cores in used.items():
        assert rows[name]["usage"] == pytest.approx(cores / 8)
