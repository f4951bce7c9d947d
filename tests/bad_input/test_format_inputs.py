"""Bad input to the SWF reader, the replay and the converters (issue 32): one line on stderr
naming the file (and line and field where there is one), exit status 2, nothing written.

Each case is a command on files written here; ``{d}`` in an argument is the test's folder.
Outputs go into ``{d}/out``, which exists and must stay empty; the inputs must not change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sitesim.cli.main import main

JOB = "{n} {submit} 0 {runtime} 2 -1 -1 2 600 -1 1 {user} -1 -1 -1 -1 -1 -1"
HEADER = "JobID|User|Submit|Start|End|NCPUS|State"
DONE = "2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|COMPLETED"
CLUSTERS = "JobID|Cluster|User|Submit|Start|End|NCPUS|State"
HUGE = "|1" + "0" * 30 + "|"
PBS_E = (
    "04/02/2024 09:00:30;E;7.head;user=u group=g queue=q qtime=1000 start=1100 end={end} "
    "Resource_List.ncpus=1 Exit_status=0"
)


def swf(*jobs: tuple[str, str, str]) -> str:
    """An SWF file of jobs ``(submit, runtime, user)``."""
    lines = [JOB.format(n=n, submit=s, runtime=r, user=u) for n, (s, r, u) in enumerate(jobs, 1)]
    return "; MaxProcs: 8\n" + "".join(f"{line}\n" for line in lines)


def workload(jobs: str = "[]", nb_res: str | None = "4", subtime: str = "0") -> str:
    """A Batsim workload; ``jobs`` "one" is one delay job submitted at ``subtime``."""
    if jobs == "one":
        jobs = f'[{{"id": "1", "subtime": {subtime}, "res": 1, "profile": "p"}}]'
    head = "" if nb_res is None else f'"nb_res": {nb_res},\n'
    profiles = '"profiles": {"p": {"type": "delay", "delay": 9}}'
    return "{\n" + head + f'"jobs": {jobs},\n{profiles}\n}}\n'


CASES = [
    # -- SWF reading: absurd values, named by file, line and field, with the allowed range
    ("replay-huge-submit", {"t.swf": swf(("0", "100", "1"), ("1e300", "100", "1"))},
     ["replay", "{d}/t.swf", "--out", "{d}/out/run"],
     "t.swf:3: field 2 (submit): '1e+300' is out of range: times lie within "
     "±10,000,000,000 s (about 317 years)"),
    ("replay-huge-runtime", {"t.swf": swf(("0", "100", "1"), ("5", "-2e10", "1"))},
     ["replay", "{d}/t.swf", "--out", "{d}/out/run"],
     "t.swf:3: field 4 (runtime): '-2e+10' is out of range: times lie within ±"),
    ("replay-huge-user", {"t.swf": swf(("0", "100", "1e300"))},
     ["replay", "{d}/t.swf", "--out", "{d}/out/run"],
     "t.swf:2: field 12 (user): '1e+300' is out of range: values lie within "
     "±9,007,199,254,740,992 (2**53)"),
    ("convert-huge-submit", {"t.swf": swf(("0", "100", "1"), ("1e300", "100", "1"))},
     ["convert", "{d}/t.swf", "-o", "{d}/out/x.swf"],
     "t.swf:3: field 2 (submit): '1e+300' is out of range"),
    # -- empty input: every converter alike
    ("empty-pbs", {"log.pbs": ""}, ["convert", "{d}/log.pbs", "-o", "{d}/out/x.swf"],
     "log.pbs: no job to convert: the file is empty"),
    ("blank-pbs", {"log.pbs": "\n\n"}, ["convert", "{d}/log.pbs", "-o", "{d}/out/x.swf"],
     "log.pbs: no job to convert: the file is empty"),
    ("empty-sacct", {"log.sacct": ""}, ["convert", "{d}/log.sacct", "-o", "{d}/out/x.swf"],
     "log.sacct: no job to convert: the file is empty"),
    ("header-only-sacct", {"log.sacct": HEADER + "\n"},
     ["convert", "{d}/log.sacct", "-o", "{d}/out/x.swf"],
     "log.sacct: no job to convert: the file holds no job"),
    ("no-job-batsim", {"w.json": workload()}, ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     "w.json: no job to convert: the file holds no job"),
    ("no-job-swf", {"t.swf": swf()}, ["convert", "{d}/t.swf", "-o", "{d}/out/x.json"],
     "t.swf: no job to convert: the file holds no job"),
    ("no-job-for-batsim", {"log.sacct": f"{HEADER}\n1|u|2024-01-01T00:00:00|Unknown|"
                                        "2024-01-01T00:01:10|1|CANCELLED\n"},
     ["convert", "{d}/log.sacct", "-o", "{d}/out/x.json"],
     "log.sacct: no job to convert: not carried into the Batsim workload: unknown runtime 1"),
    ("every-line-skipped-pbs", {"log.pbs": "04/02/2024 08:00:00;Q;101.head;queue=batch\n"},
     ["convert", "{d}/log.pbs", "-o", "{d}/out/x.swf"],
     "log.pbs: no job to convert: skipped 1 line: record type Q (only E records end a job) 1"),
    ("no-runtime-swf-to-batsim", {"t.swf": swf(("0", "-1", "1"))},
     ["convert", "{d}/t.swf", "-o", "{d}/out/x.json"],
     "t.swf: no job to convert: not carried into the Batsim workload: unknown runtime 1"),
    # -- Batsim: nb_res, which Batsim requires
    ("batsim-without-nb_res", {"w.json": workload("one", nb_res=None)},
     ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     "w.json:1: field nb_res: missing: a Batsim workload names its number of resources "
     "(a whole number from 1 to 2,147,483,647)"),
    ("batsim-nb_res-0", {"w.json": workload("one", nb_res="0")},
     ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     "w.json:2: field nb_res: 0 is not a whole number from 1 to 2,147,483,647"),
    ("batsim-nb_res-text", {"w.json": workload("one", nb_res='"many"')},
     ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     'w.json:2: field nb_res: "many" is not a whole number from 1'),
    ("batsim-huge-subtime", {"w.json": workload("one", subtime="1e300")},
     ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     "w.json:3: field subtime: job 1: '1e+300' is out of range: times lie within ±"),
    ("batsim-huge-integer-subtime", {"w.json": workload("one", subtime="1" + "0" * 400)},
     ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     "w.json:3: field subtime: job 1: '10000000000000000...' is out of range: times lie"),
    ("batsim-huge-res", {"w.json": workload('[{"id": "1", "subtime": 0, "res": 1' + "0" * 400
                                            + ', "profile": "p"}]')},
     ["convert", "{d}/w.json", "-o", "{d}/out/x.swf"],
     "w.json:3: field res: job 1: 1000000000000000000000000000000000000... is more than "
     "nb_res can be (2,147,483,647)"),
    # -- PBS and sacct: absurd numbers
    ("pbs-huge-end", {"log.pbs": PBS_E.format(end="1" + "0" * 300) + "\n"},
     ["convert", "{d}/log.pbs", "-o", "{d}/out/x.swf"],
     "log.pbs:1: field end: '10000000000000000...' is out of range: times lie within ±"),
    ("sacct-huge-ncpus", {"log.sacct": f"{HEADER}\n1|u|{DONE.replace('|1|', HUGE)}\n"},
     ["convert", "{d}/log.sacct", "-o", "{d}/out/x.swf"],
     "log.sacct:2: field NCPUS: '10000000000000000...' is out of range: values lie within ±"),
    ("sacct-runtime-of-centuries", {"log.sacct": f"{HEADER}\n1|u|0|10|999999999999|1|COMPLETED\n"},
     ["convert", "{d}/log.sacct", "-o", "{d}/out/x.swf"],
     "log.sacct:2: gives SWF field 4 (runtime) 1e+12, which is out of range: times lie within ±"),
    # -- outputs: no folder made, no input replaced, one file per output
    ("no-such-folder", {"w.json": workload("one")},
     ["convert", "{d}/w.json", "-o", "{d}/out/new/deeper/x.swf"],
     "out/new/deeper: the folder does not exist (for x.swf)"),
    ("output-is-input", {"a.sacct": f"{HEADER}\n1|u|{DONE}\n"},
     ["convert", "{d}/a.sacct", "--to", "swf", "-o", "{d}/a.sacct", "--force"],
     "a.sacct: is the input {d}/a.sacct; write the output elsewhere (--force never replaces "
     "an input)"),
    ("output-is-input-by-another-name", {"a.swf": swf(("0", "100", "1"))},
     ["convert", "{d}/a.swf", "-o", "{d}/out/../a.swf", "--force"],
     "is the input {d}/a.swf"),
    ("mapping-is-input", {"a.sacct": f"{HEADER}\n1|u|{DONE}\n"},
     ["convert", "{d}/a.sacct", "-o", "{d}/out/x.swf", "--mapping", "{d}/a.sacct", "--force"],
     "a.sacct: is the input"),
    ("one-file-two-outputs", {"a.sacct": f"{HEADER}\n1|u|{DONE}\n"},
     ["convert", "{d}/a.sacct", "-o", "{d}/out/x.swf", "--mapping", "{d}/out/x.swf"],
     "out/x.swf: given as two outputs; give each its own name"),
    ("folder-output-holds-the-input", {"out/run/results.json": "{}"},
     ["convert", "{d}/out/run", "--to", "parquet", "-o", "{d}/out", "--force"],
     "out: holds the input {d}/out/run; write the output elsewhere"),
    # -- sacct: several clusters
    ("two-clusters", {"c.sacct": f"{CLUSTERS}\n1|alpha|u|{DONE}\n2|alpha|u|{DONE}\n"
                                 f"1|beta|u|{DONE}\n"},
     ["convert", "{d}/c.sacct", "-o", "{d}/out/x.swf"],
     "c.sacct:4: field Cluster: 'beta' after 'alpha': the log holds the jobs of 2 clusters "
     "(jobs: alpha 2, beta 1), one machine each; convert one at a time with --cluster NAME"),
    ("a-cluster-not-there", {"c.sacct": f"{CLUSTERS}\n1|alpha|u|{DONE}\n"},
     ["convert", "{d}/c.sacct", "-o", "{d}/out/x.swf", "--cluster", "gamma"],
     "c.sacct: field Cluster: --cluster gamma: no line of this cluster (the log's clusters: "
     "alpha)"),
    ("a-cluster-without-the-field", {"log.sacct": f"{HEADER}\n1|u|{DONE}\n"},
     ["convert", "{d}/log.sacct", "-o", "{d}/out/x.swf", "--cluster", "alpha"],
     "log.sacct:1: field header: --cluster needs the field Cluster"),
    ("a-cluster-of-pbs", {"log.pbs": PBS_E.format(end="2000") + "\n"},
     ["convert", "{d}/log.pbs", "-o", "{d}/out/x.swf", "--cluster", "alpha"],
     "--cluster: only sacct output names clusters"),
]  # fmt: skip


@pytest.mark.parametrize(("files", "argv", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, files, argv, message):
    (tmp_path / "out").mkdir()
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    before = _contents(tmp_path)
    code = main([arg.replace("{d}", str(tmp_path)) for arg in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("sitesim: error: "), err
    assert message.replace("{d}", str(tmp_path)) in err
    assert _contents(tmp_path) == before  # nothing written, no folder made, no input changed


def _contents(folder: Path) -> dict[Path, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folder``."""
    return {p: p.read_bytes() if p.is_file() else None for p in folder.rglob("*")}
