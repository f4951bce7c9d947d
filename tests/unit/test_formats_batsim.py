"""Batsim's formats: JSON workloads both ways, and the jobs.csv of a run read by evalys.

The syntax followed is that of Batsim's documentation: "Workload" (Job definition: id, subtime,
res, profile, optional walltime, any other field; Profile types: delay, composed with seq and
repeat, parallel_homogeneous), "Jobs" output (the columns of jobs.csv) and "Interval set"
(``1-3 5 7``). tests/data/formats/workload.json holds each case once.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine.site import Site
from sitesim.formats.batsim import (
    JOBS_COLUMNS,
    assign_processors,
    batsim_workload,
    interval_set,
    read_batsim,
)
from sitesim.formats.lines import FormatError
from sitesim.formats.run_folder import folder_jobs_csv, result_jobs_csv
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.platform.description import Platform
from sitesim.results.report import write_outputs
from sitesim.schedulers import create
from sitesim.workload.swf import COLUMN, SWFTrace, read_swf
from tests.conftest import run_jobs, trace_path

WORKLOAD = Path(__file__).resolve().parents[1] / "data" / "formats" / "workload.json"
#: The SWF fields a Batsim workload carries.
SHARED = ("job", "submit", "runtime", "procs", "req_time", "user")


def field(trace, name):  # type: ignore[no-untyped-def]
    return trace.data[:, COLUMN[name]].tolist()


def test_a_workload_reads_into_swf_in_submit_order():
    c = read_batsim(str(WORKLOAD))
    assert field(c.trace, "job") == [1, 2, 5, 3]  # "w0!5" is job 5
    assert field(c.trace, "submit") == [0, 10.5, 20, 30]
    # delays; the composed profile: (120 + 120) x 2
    assert field(c.trace, "runtime") == [120, 5400.25, 120, 480]
    assert field(c.trace, "procs") == [4, 16, 1, 8]
    assert field(c.trace, "req_time") == [3600, -1, -1, 600]
    assert field(c.trace, "user") == [-1, 3, -1, -1]
    assert c.trace.max_procs == 32
    assert c.skipped.as_dict() == {"a parallel_homogeneous profile (no fixed duration)": 1}
    assert c.skipped.quoted["a parallel_homogeneous profile (no fixed duration)"][0][0] == (
        f"{WORKLOAD}:8"
    )


def trace_of(rows: list[list[float]], procs: int = 64) -> SWFTrace:
    data = np.full((len(rows), 18), -1.0)
    for k, row in enumerate(rows):
        data[k, : len(row)] = row
    return SWFTrace("t.swf", [f"; MaxProcs: {procs}"], data)


def round_trip(trace: SWFTrace, tmp_path: Path) -> tuple[SWFTrace, object]:
    text, skipped = batsim_workload(trace)
    path = tmp_path / "w.json"
    path.write_text(text)
    return read_batsim(str(path)).trace, skipped


def test_swf_to_batsim_and_back_is_the_identity_on_the_shared_fields(tmp_path):
    trace = trace_of(
        [
            [1, 0, 5, 60, 4, -1, -1, 4, 120, -1, 1, 7],
            [2, 0.5, 0, 1.25, 2, -1, -1, 8, -1, -1, 0, 3],
            [3, 100, -1, -1, 4],  # no runtime: not carried
            [4, 90, 0, 30, -1, -1, -1, 2, 60, -1, 5, -1],  # size from requested processors
        ]
    )
    back, skipped = round_trip(trace, tmp_path)
    assert skipped.as_dict() == {"unknown runtime": 1}  # type: ignore[attr-defined]
    kept = trace.data[[0, 1, 3]]
    kept[2, COLUMN["procs"]] = 2
    for name in SHARED:
        assert field(back, name) == kept[:, COLUMN[name]][np.argsort(kept[:, 1])].tolist(), name
    assert back.max_procs == 64


swf_rows = st.lists(
    st.tuples(
        st.integers(0, 10**7),  # submit
        st.integers(0, 10**6) | st.floats(0, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
        st.integers(1, 4096),  # processors
        st.integers(-1, 10**6),  # requested time
        st.integers(-1, 500),  # user
    ),
    max_size=40,
)


@given(swf_rows)
def test_round_trip_property(rows):  # type: ignore[no-untyped-def]
    import tempfile

    trace = trace_of(
        [[k + 1, s, -1, r, p, -1, -1, p, t, -1, 1, u] for k, (s, r, p, t, u) in enumerate(rows)]
    )
    with tempfile.TemporaryDirectory() as folder:
        back, _ = round_trip(trace, Path(folder))
    order = np.argsort(trace.data[:, 1], kind="stable")
    for name in SHARED:
        expected = trace.data[order, COLUMN[name]]
        if name == "req_time":
            expected = np.where(expected > 0, expected, -1)
        assert field(back, name) == expected.tolist(), name


@pytest.mark.traces
def test_round_trip_of_a_real_trace(tmp_path):
    trace = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz"))
    back, skipped = round_trip(trace, tmp_path)
    runtime = trace.column("runtime")
    size = np.where(trace.column("procs") > 0, trace.column("procs"), trace.column("req_procs"))
    kept = trace.data[(runtime >= 0) & (size >= 1)]
    assert len(back) == len(kept) and skipped.total == len(trace) - len(kept)  # type: ignore[attr-defined]
    for name in ("job", "submit", "runtime", "procs", "user"):
        assert field(back, name) == kept[:, COLUMN[name]].tolist(), name


@pytest.mark.parametrize(
    ("job", "key", "message"),
    [
        ('{"id": "1", "subtime": 0, "res": -2, "profile": "p"}', "res", "-2 is a negative count"),
        ('{"id": "1", "subtime": "soon", "res": 1, "profile": "p"}', "subtime", "'soon' is not"),
        ('{"id": "1", "subtime": 0, "res": 1}', "profile", "missing"),
        ('{"id": "1", "subtime": 0, "res": 1, "profile": "q"}', "profile", "'q' is not among"),
    ],
)
def test_a_bad_job_names_file_line_and_field(tmp_path, job, key, message):
    path = tmp_path / "w.json"
    good = '{"id": "0", "subtime": 0, "res": 1, "profile": "p"}'
    path.write_text(
        '{\n  "nb_res": 4,\n  "jobs": [\n    ' + good + ",\n    " + job + "\n  ],\n"
        '  "profiles": {"p": {"type": "delay", "delay": 1}}\n}\n'
    )
    with pytest.raises(FormatError) as err:
        read_batsim(str(path))
    assert str(err.value).startswith(f"{path}:5: field {key}: job 2: ")
    assert message in str(err.value)


def test_a_file_that_is_not_a_workload(tmp_path):
    path = tmp_path / "w.json"
    path.write_text("; Version: 2.2\n1 0 1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(FormatError, match=r"w.json:1: field JSON: not a Batsim workload.*SWF"):
        read_batsim(str(path))
    path.write_text('{"nb_res": 4}')
    with pytest.raises(FormatError, match=r"field jobs: not a Batsim workload: a JSON object"):
        read_batsim(str(path))


# -- jobs.csv ----------------------------------------------------------------------------------
def test_interval_sets_are_canonical():
    assert interval_set([(5, 5), (0, 2), (3, 3), (7, 9)]) == "0-3 5 7-9"


def test_processors_assigned_after_a_run_are_never_shared():
    jobs = [
        (0, 3, 10),
        (0, 2, 5),
        (1, 4, 8),
        (5, 2, 20),
        (9, 5, 3),
        (10, 1, 1),
        (10, 6, 4),
        (20, 8, 0, 5),
        (20, 8, 0, 5),
        (20, 3, 2),
    ]  # (jobs of no duration, as traces hold)
    result = run_jobs(jobs, 8, create("EASY"))
    assert (result.records["runtime"] == 0).sum() == 2
    allocated = assign_processors(result.records, 8)
    rec = result.records
    for i in range(len(rec)):
        mine = _ids(allocated[i])
        assert len(mine) == rec["size"][i] and max(mine) < 8
        for j in range(i):
            # (a job of no duration holds nothing but must not take a running job's processors)
            overlap = rec["start"][i] < rec["end"][j] and rec["start"][j] < rec["end"][i]
            overlap |= rec["start"][j] < rec["start"][i] < rec["end"][j]
            overlap |= rec["start"][i] < rec["start"][j] < rec["end"][i]
            assert not (overlap and mine & _ids(allocated[j])), (i, j)


def _ids(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split():
        low, _, high = part.partition("-")
        out.update(range(int(low), int(high or low) + 1))
    return out


def evalys_jobset():  # type: ignore[no-untyped-def]
    pytest.importorskip("pandas", reason="evalys needs pandas: pip install 'sitesim[evalys]'")
    jobset = pytest.importorskip(
        "evalys.jobset", reason="evalys is not installed: pip install 'sitesim[evalys]'"
    )
    return jobset.JobSet


#: evalys 4.0.7 calls DataFrame.rename(inplace=True), which pandas 3.1 deprecates.
EVALYS_WARNING = "ignore:The inplace keyword in DataFrame.rename"


@pytest.mark.filterwarnings(EVALYS_WARNING)
def test_a_runs_jobs_csv_opens_in_evalys(tmp_path):
    JobSet = evalys_jobset()
    jobs = [(0, 3, 10, 12), (0, 2, 5), (1, 4, 8, 4), (5, 2, 20), (9, 5, 3), (10, 1, 1)]
    result = run_jobs(jobs, 8, create("EASY"))
    path = tmp_path / "out_jobs.csv"
    path.write_text(result_jobs_csv(result))
    js = JobSet.from_csv(str(path))
    assert list(js.df.columns[: len(JOBS_COLUMNS)]) == ["jobID", *JOBS_COLUMNS[1:]]
    assert js.MaxProcs == 8
    rec = result.records
    assert js.df["submission_time"].tolist() == rec["submit"].tolist()
    assert js.df["execution_time"].tolist() == rec["runtime"].tolist()
    assert js.df["proc_alloc"].tolist() == rec["size"].tolist()
    # the job killed at its estimate (ran 8 s, asked for 4): not a success
    killed = js.df[js.df["final_state"] == "COMPLETED_WALLTIME_REACHED"]
    assert killed["jobID"].tolist() == ["3"] and killed["success"].tolist() == [0]
    assert js.utilisation["load"].max() <= 8


@pytest.mark.filterwarnings(EVALYS_WARNING)
def test_a_platform_runs_jobs_csv_names_its_nodes_and_evalys_reads_the_folder(tmp_path):
    JobSet = evalys_jobset()
    platform = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 4, "cores": 2}],
            "partitions": [{"name": "all", "nodes": ["n"]}],
        }
    )
    site = Site(platform, create("EASY"))
    submit, size, runtime = [0, 0, 1, 2, 3], [2, 3, 1, 4, 2], [10, 5, 8, 6, 1]
    site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, runtime)))
    result = site.run()
    folder = write_outputs(tmp_path / "run", result)
    path = tmp_path / "out_jobs.csv"
    path.write_text(folder_jobs_csv(folder))
    js = JobSet.from_csv(str(path))
    assert js.MaxProcs <= 4  # nodes are the resources
    placement = (folder / "placement.csv").read_text().splitlines()[1:]
    nodes = [line.split('"')[1].replace(",", " ") for line in placement]
    assert [str(p) for p in js.df["allocated_resources"]] == nodes
    assert js.df["requested_number_of_resources"].tolist() == [
        int(line.split('"')[2].split(",")[1]) for line in placement
    ]


def test_jobs_csv_from_a_run_folder_equals_the_one_from_memory(tmp_path):
    jobs = [(0, 3, 10), (0, 2, 5), (1, 4, 8), (5, 2, 20)]
    result = run_jobs(jobs, 8, create("FCFS"))
    folder = write_outputs(tmp_path / "run", result)
    assert folder_jobs_csv(folder) == result_jobs_csv(result)
    header = folder_jobs_csv(folder).splitlines()[0]
    assert header.split(",") == list(JOBS_COLUMNS)
    assert json.loads((folder / "results.json").read_text())["procs"] == 8


@pytest.mark.traces
def test_processors_of_a_real_replay_never_exceed_the_machine():
    import sitesim

    result = sitesim.replay(str(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")), "EASY")
    allocated = assign_processors(result.records, result.procs)
    ran = [k for k, text in enumerate(allocated) if text]
    assert len(ran) == len(result.records)
    highest = max(int(text.split()[-1].split("-")[-1]) for text in allocated)
    assert highest < result.procs


def test_a_negative_runtime_is_not_an_unknown_one(tmp_path):
    _, skipped = round_trip(trace_of([[1, 0, 5, 60, 4], [2, 0, 5, -1, 4], [3, 0, 5, -500, 4]]),
                            tmp_path)  # fmt: skip
    assert skipped.as_dict() == {"unknown runtime": 1, "negative runtime": 1}  # type: ignore[attr-defined]
