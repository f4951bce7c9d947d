"""Bad SLURM inputs on the command line (issue 32): each is one line on stderr naming the file,
line or key and the problem, exit status 2, and nothing written (the --out folder is not
made). The files are written by hand below, in Slurm's and sitesim's formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_bad_input import error

#: A few jobs of users 1..3 on 8 processors (SWF's 18 fields).
TRACE = "".join(
    f"{k} {60 * k} -1 600 4 -1 -1 4 900 -1 1 {k % 3 + 1} -1 -1 -1 -1 -1 -1\n" for k in range(1, 7)
)
#: A listing by user name, as sacctmgr prints it (format=Account,User,Share,ParentName -P).
LISTING = "Account|User|Share|ParentName\nphys||1|root\nphys|user001|1|\nphys|user004|1|\n"
SLURM_CONF = "NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=n[1-2] Default=YES\n"

#: (name, files to write {name: text}, the SLURM --param values ({dir} is the folder), the
#: platform file if any, what the one line ends with or holds).
CASES = [
    ("a weight beyond 32 bits", {}, ["PriorityWeightAge=99999999999999999999999"], None,
     "SLURM: PriorityWeightAge: 99999999999999999999999 is too large: a weight is at most "
     "4294967295 (Slurm's weights are 32-bit unsigned)"),
    ("a TRES weight beyond 32 bits", {}, ["PriorityWeightTRES=CPU=4294967296"], None,
     "PriorityWeightTRES: 'CPU=4294967296': a weight is at most 4294967295"),
    ("a weight beyond 32 bits in slurm.conf",
     {"slurm.conf": "PriorityWeightFairshare=4294967296\n"}, ["conf={dir}/slurm.conf"], None,
     "slurm.conf:1: PriorityWeightFairshare: 4294967296 is out of range: a whole number >= 0, "
     "at most 4,294,967,295 (Slurm's weights are 32-bit unsigned)"),
    ("a user name without the mapping", {"assoc.txt": LISTING}, ["assoc={dir}/assoc.txt"], None,
     "assoc.txt:3: User: 'user001' is a name, and the trace's users are numbers: give the "
     "mapping that numbered them (mapping=names.json, written by sitesim convert --mapping)"),
    ("the mapping of another log",
     {"assoc.txt": LISTING, "names.json": json.dumps({"users": {"alice": 1, "bob": 2}})},
     ["assoc={dir}/assoc.txt", "mapping={dir}/names.json"], None,
     "assoc.txt: User: none of its 2 users is in"),
    ("a mapping without a listing", {"names.json": json.dumps({"users": {"alice": 1}})},
     ["mapping={dir}/names.json"], None,
     "SLURM: mapping numbers the users of a sacctmgr listing (assoc=assoc.txt); give one"),
    ("a mapping with a TOML tree",
     {"names.json": json.dumps({"users": {"alice": 1}}),
      "tree.toml": '[accounts.a]\nusers = [1]\n'},
     ["assoc={dir}/tree.toml", "mapping={dir}/names.json"], None,
     "a TOML association file names them by number"),
    ("a mapping that is not JSON", {"assoc.txt": LISTING, "names.json": "{users"},
     ["assoc={dir}/assoc.txt", "mapping={dir}/names.json"], None,
     "names.json: not a mapping file (JSON): "),
    ("a mapping that is not there", {"assoc.txt": LISTING},
     ["assoc={dir}/assoc.txt", "mapping={dir}/names.json"], None,
     "names.json: cannot read: No such file or directory"),
    ("a slurm.conf whose every node is FUTURE",
     {"slurm.conf": SLURM_CONF.replace("CPUs=4", "CPUs=4 State=FUTURE")}, [], "slurm.conf",
     "slurm.conf:2: PartitionName: every node is State=FUTURE (sitesim needs one)"),
]  # fmt: skip


@pytest.mark.filterwarnings("ignore::sitesim.schedulers.slurm.SlurmConfigWarning")
@pytest.mark.parametrize(
    ("files", "params", "platform", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_bad_slurm_input_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    params: list[str],
    platform: str | None,
    message: str,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    trace = tmp_path / "t.swf"
    trace.write_text(TRACE)
    out = tmp_path / "out"
    argv = ["replay", str(trace), "--scheduler", "SLURM", "--out", str(out)]
    argv += ["--platform", str(tmp_path / platform)] if platform else ["--procs", "8"]
    argv += [item for p in params for item in ("--param", p.format(dir=tmp_path))]
    line = error(capsys, argv)
    assert message in line, line
    assert not out.exists()
