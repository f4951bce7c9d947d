"""PBS/Torque accounting logs to SWF, on a file written by hand in the documented syntax.

The syntax followed is that of the TORQUE Administrator Guide, "Accounting Records" (record
markers Q, S, D, E; "MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value ..." with ctime, qtime, etime,
start, end in Unix seconds, exec_host, Resource_List.* and resources_used.*), and of the PBS
Professional Reference Guide's accounting chapter (Resource_List.ncpus, exec_host
``host/0*8``, Exit_status). tests/data/formats/torque.pbs holds each case once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sitesim.formats.lines import FormatError
from sitesim.formats.pbs import read_pbs
from sitesim.workload.swf import COLUMN

LOG = Path(__file__).resolve().parents[1] / "data" / "formats" / "torque.pbs"
E = "04/02/2024 09:00:30;E;7.head;user=u group=g queue=q qtime=1000 start=1100 end=1500 {}"


def field(converted, name):  # type: ignore[no-untyped-def]
    return converted.trace.data[:, COLUMN[name]].tolist()


def test_only_end_records_become_jobs_and_the_others_are_counted_by_type():
    c = read_pbs([str(LOG)])
    assert len(c.trace) == 5
    assert c.skipped.as_dict() == {
        "record type Q (only E records end a job)": 2,
        "record type S (only E records end a job)": 1,
        "record type D (only E records end a job)": 1,
    }


def test_times_processors_and_status():
    c = read_pbs([str(LOG)])
    assert field(c, "submit") == [0, 600, 2400, 3200, 4200]  # qtime, from the first
    assert field(c, "wait") == [30, 1, 100, -1, 0]
    assert field(c, "runtime") == [3600, 4, 1400, -1, 2800]
    # exec_host n01/0-7+n02/0-7, n03/0+n03/1+n03/2+n03/3, n04/0*32+n05/0*32; never ran; ncpus
    assert field(c, "procs") == [16, 4, 64, -1, 1]
    assert field(c, "req_procs") == [16, 4, 64, 16, 1]
    assert field(c, "req_time") == [7200, 1800, 100 * 3600, 3600, 3600]
    # Exit_status 0, 271, -11; start=0: never ran; 0
    assert field(c, "status") == [1, 0, 0, 5, 1]
    assert field(c, "cpu")[0] == (15 * 3600 + 40 * 60) / 16  # resources_used.cput per CPU
    assert field(c, "memory")[0] == 2097152 / 16  # resources_used.mem (kb) per CPU
    assert field(c, "req_memory")[1] == 8 * 1024 * 1024 / 4  # Resource_List.mem=8gb


def test_users_groups_queues_are_numbered_and_job_names_may_hold_spaces():
    c = read_pbs([str(LOG)])
    assert c.names["users"] == ["alice", "bob", "carol", "dave"]
    assert c.names["job names"] == ["relax", "scan", "big run", "x"]
    assert field(c, "queue") == [1, 1, 2, 1, 1]
    assert "; Queue: 2 long" in c.trace.header


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ("Resource_List.ncpus=-4", "Resource_List.ncpus", "'-4' is a negative count"),
        ("Resource_List.walltime=2h", "Resource_List.walltime", "'2h' is not a duration"),
        ("Resource_List.mem=lots", "Resource_List.mem", "'lots' is not a size"),
    ],
)
def test_a_malformed_record_names_file_line_and_field(tmp_path, extra, key, message):
    path = tmp_path / "20240402"
    path.write_text(E.format("Exit_status=0") + "\n" + E.format(extra) + "\n")
    with pytest.raises(FormatError) as err:
        read_pbs([str(path)])
    assert str(err.value).startswith(f"{path}:2: field {key}: {message}")


def test_a_time_that_is_not_unix_seconds(tmp_path):
    path = tmp_path / "20240402"
    path.write_text(E.format("").replace("start=1100", "start=2024-04-02T09:00") + "\n")
    with pytest.raises(FormatError, match=r":1: field start: '2024-04-02T09:00' is not Unix"):
        read_pbs([str(path)])


def test_a_truncated_record_and_a_file_of_another_format(tmp_path):
    path = tmp_path / "20240402"
    path.write_text(E.format("Exit_status=0") + "\n04/02/2024 09:0\n")
    with pytest.raises(FormatError, match=r"20240402:2: field record: not an accounting"):
        read_pbs([str(path)])
    sacct = Path(__file__).resolve().parents[1] / "data" / "formats" / "site.sacct"
    with pytest.raises(FormatError, match=r"site.sacct:1: field record: not a PBS .* sacct"):
        read_pbs([str(sacct)])


def test_several_daily_logs_make_one_trace(tmp_path):
    day1, day2 = tmp_path / "20240402", tmp_path / "20240403"
    day1.write_text(E.format("Exit_status=0") + "\n")
    day2.write_text(E.format("Exit_status=1").replace("qtime=1000", "qtime=900") + "\n")
    c = read_pbs([str(day1), str(day2)])
    assert field(c, "submit") == [0, 100] and field(c, "status") == [0, 1]


def test_a_job_that_starts_before_it_was_queued_is_kept_with_wait_0():
    c = read_pbs([str(LOG)])  # job 106 starts 1,000 s before its qtime
    assert field(c, "wait")[-1] == 0 and field(c, "runtime")[-1] == 2800
    assert "1 job started before it was queued (by up to 1,000 s: clock skew): kept" in (
        " ".join(c.notes)
    )
