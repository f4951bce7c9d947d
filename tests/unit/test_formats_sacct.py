"""Slurm's sacct output to SWF, on files written by hand in sacct's documented syntax.

The syntax followed is that of the sacct man page (slurm.schedmd.com/sacct.html): OPTIONS
``--parsable2`` ("output will be '|' delimited without a '|' at the end") and ``--allocations``
("only show statistics relevant to the job allocation itself, not taking steps into
consideration"), JOB STATE CODES (COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, PENDING,
RUNNING, ...), the Job Accounting Fields (JobID ``123_4`` for array tasks, ``123+0`` for
heterogeneous job components, ``123.batch`` for steps; Timelimit ``days-hours:minutes:seconds``,
``UNLIMITED``, ``Partition_Limit``) and ENVIRONMENT VARIABLES (SLURM_TIME_FORMAT). The file
tests/data/formats/site.sacct holds each awkward case once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sitesim.formats.lines import FormatError
from sitesim.formats.sacct import read_sacct
from sitesim.workload.swf import COLUMN

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
SITE = DATA / "site.sacct"
HEADER = "JobID|User|Account|Partition|QOS|Submit|Start|End|Timelimit|NNodes|NCPUS|State"


def field(converted, name):  # type: ignore[no-untyped-def]
    return converted.trace.data[:, COLUMN[name]].tolist()


def write(tmp_path: Path, *lines: str, name: str = "log.sacct") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_site_file_gives_one_job_per_task_and_merges_heterogeneous_jobs():
    c = read_sacct([str(SITE)])
    # 14 lines: 3 skipped; 10 kept, the range 1004_[3-5%2] is 3 jobs, 1007+1 folds into 1007+0
    assert len(c.trace) == 11
    assert field(c, "job") == list(range(1, 12))
    assert field(c, "submit") == [0, 600, 900, 3600, 3600, 3600, 3600, 3600, 7200, 9000, 10800]
    assert c.skipped.as_dict() == {
        "a job step (give sacct --allocations)": 1,
        "still pending when the log was taken": 1,
        "still running when the log was taken": 1,
    }
    assert [q[0] for q in c.skipped.quoted["a job step (give sacct --allocations)"]] == [
        f"{SITE}:12"
    ]


def test_times_limits_and_counts_follow_sacct_fields():
    c = read_sacct([str(SITE)])
    assert field(c, "wait")[:3] == [5, 600, 30]
    assert field(c, "runtime")[:3] == [3600, 2 * 86400 + 3 * 3600 + 4 * 60 + 5, 1800]
    # 02:00:00, 2-03:04:05, UNLIMITED, 00:30:00 twice, then the never-started tasks' 00:30:00
    assert field(c, "req_time")[:5] == [7200, 183845, -1, 1800, 1800]
    assert field(c, "req_time")[9] == -1  # Partition_Limit
    assert field(c, "req_time")[10] == 45 * 60  # "45:00" is minutes:seconds
    assert field(c, "procs")[:3] == [16, 128, 8]
    # memory per processor in KB: 32G over 16 CPUs; ReqMem 4000M for one CPU
    assert field(c, "req_memory")[0] == 2 * 1024 * 1024
    assert field(c, "req_memory")[9] == 4000 * 1024


def test_states_become_swf_status_and_never_started_jobs_are_kept_without_times():
    c = read_sacct([str(SITE)])
    # COMPLETED 1, TIMEOUT 0, FAILED 0, array tasks 1 1, cancelled range 5 5 5, het 1,
    # cancelled pending 5, NODE_FAIL 0
    assert field(c, "status") == [1, 0, 0, 1, 1, 5, 5, 5, 1, 5, 0]
    never = [k for k, s in enumerate(field(c, "wait")) if s == -1]
    assert never == [5, 6, 7, 9]
    for name in ("runtime", "procs"):
        assert [field(c, name)[k] for k in never] == [-1] * 4
    assert [field(c, "req_procs")[k] for k in never] == [4, 4, 4, 1]


def test_heterogeneous_components_sum_their_processors_in_the_first_partition():
    c = read_sacct([str(SITE)])
    het = 8  # 1007+0 (64 CPUs, batch) and 1007+1 (8 CPUs, gpu)
    assert field(c, "procs")[het] == 72 and field(c, "req_procs")[het] == 72
    assert field(c, "partition")[het] == 1
    assert any("heterogeneous" in note for note in c.notes)


def test_names_are_numbered_by_first_submission_and_listed_in_the_header():
    c = read_sacct([str(SITE)])
    assert c.names["users"] == ["alice", "bob", "carol", "dave", "erin"]
    assert field(c, "user")[:4] == [1, 2, 1, 3]
    assert c.names["partitions"] == ["batch", "gpu"]
    assert "; Partition: 2 gpu" in c.trace.header
    assert "; Queue: 2 high" in c.trace.header
    assert not any("alice" in line or "physics" in line for line in c.trace.header)
    again = read_sacct([str(SITE)])
    assert np.array_equal(again.trace.data, c.trace.data)


def test_platform_shows_what_jobs_held_at_once():
    c = read_sacct([str(SITE)])
    assert c.platform is not None
    batch, gpu = c.platform["nodes"]
    assert batch["cores"] == 32 and gpu["gpus"] == 2
    parts = {p["name"]: p for p in c.platform["partitions"]}
    assert parts["batch"]["max_time"] == "2-03:04:05"
    assert parts["batch"]["allocation"] == "shared"  # 16 CPUs on a 32-core node


def test_local_times_are_turned_into_utc_across_a_clock_change(tmp_path):
    # Europe/Paris went from UTC+1 to UTC+2 at 2024-03-31 02:00 local time
    path = write(
        tmp_path,
        HEADER,
        "1|u|a|p|q|2024-03-31T01:30:00|2024-03-31T01:40:00|2024-03-31T03:10:00|01:00:00|1|1|"
        "COMPLETED",
    )
    paris = read_sacct([str(path)], timezone="Europe/Paris")
    assert field(paris, "wait") == [600] and field(paris, "runtime") == [30 * 60]
    assert "; UnixStartTime: 1711845000" in paris.trace.header  # 00:30 UTC
    utc = read_sacct([str(path)])
    assert field(utc, "runtime") == [90 * 60]


def test_unix_seconds_need_no_time_zone(tmp_path):
    path = write(tmp_path, HEADER, "1|u|a|p|q|1711845000|1711845600|1711847400|30|1|2|COMPLETED")
    c = read_sacct([str(path)], timezone="Asia/Tokyo")
    assert field(c, "wait") == [600] and field(c, "runtime") == [1800]
    assert field(c, "req_time") == [1800]


def test_eligible_time_can_be_the_submit_time():
    c = read_sacct([str(SITE)], submit_time="eligible")
    last = len(c.trace) - 1  # 1010: submitted 11:00, eligible at 12:00, started at once
    assert field(c, "wait")[last] == 0
    assert field(c, "submit")[last] == 4 * 3600


def test_parsable_output_with_a_trailing_bar_and_repeated_headers(tmp_path):
    path = write(
        tmp_path,
        HEADER + "|",
        "1|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|COMPLETED|",
        HEADER + "|",
        "2|v|a|p|q|2024-01-01T00:00:05|2024-01-01T00:00:10|2024-01-01T00:00:20|1|1|1|FAILED|",
    )
    c = read_sacct([str(path)])
    assert field(c, "runtime") == [60, 10]
    assert c.skipped.as_dict() == {"the header line repeated": 1}


@pytest.mark.parametrize(
    ("line", "where", "message"),
    [
        ("1|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10", ":3: field End: ",
         "truncated: 7 fields, the header names 12"),
        ("1|u|a|p|q|01/01/2024 00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|COMPLETED",
         ":3: field Submit: ", "'01/01/2024 00:00' is not a time sacct prints"),
        ("1|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|-4|"
         "COMPLETED", ":3: field NCPUS: ", "'-4' is a negative count"),
        ("1|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1 day|1|1|"
         "COMPLETED", ":3: field Timelimit: ", "'1 day' is not a time limit sacct prints"),
        ("1|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|DONE",
         ":3: field State: ", "'DONE' is not a Slurm job state"),
        ("1.x.y|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|"
         "COMPLETED", "", ""),
    ],
)  # fmt: skip
def test_a_malformed_line_names_file_line_and_field(tmp_path, line, where, message):
    good = "9|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|COMPLETED"
    path = write(tmp_path, HEADER, good, line)
    if not where:  # a step of a step is still a step: skipped, not an error
        assert read_sacct([str(path)]).skipped.total == 1
        return
    with pytest.raises(FormatError) as err:
        read_sacct([str(path)])
    text = str(err.value)
    assert text.startswith(f"{path}{where}") and message in text and "\n" not in text


@pytest.mark.parametrize(
    ("content", "looks"),
    [
        ("; Version: 2.2\n1 0 1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n", "SWF"),
        ("04/02/2024 08:00:00;Q;101.head;queue=batch\n", "a PBS accounting log"),
        ("JobID    JobName  State\n------------ ---------- ----------\n",
         "sacct output without --parsable2"),
        ('{"jobs": [], "profiles": {}}\n', "a Batsim workload"),
    ],
)  # fmt: skip
def test_a_file_of_another_format_is_one_clear_error(tmp_path, content, looks):
    path = tmp_path / "x.sacct"
    path.write_text(content)
    with pytest.raises(FormatError) as err:
        read_sacct([str(path)])
    text = str(err.value)
    assert text.startswith(f"{path}:1: field header: not sacct --parsable2 output")
    assert f"looks like {looks}" in text


def test_a_header_without_a_needed_field_says_which(tmp_path):
    path = write(tmp_path, "JobID|User|Submit|Start|End|State", "1|u|0|1|2|COMPLETED")
    with pytest.raises(FormatError, match="without the field NCPUS"):
        read_sacct([str(path)])


# -- issue 32: a | inside free text, clock skew, several clusters, empty files ----------------
NAMED = "JobID|JobName|User|Submit|Start|End|NCPUS|State"
TIMES = "2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10"


@pytest.mark.parametrize("trailing", ["", "|"])
def test_a_bar_inside_the_job_name_is_mended(tmp_path, trailing):
    path = write(
        tmp_path,
        NAMED + trailing,
        f"1|plain|u|{TIMES}|1|COMPLETED" + trailing,
        f"2|a|b|u|{TIMES}|1|COMPLETED" + trailing,
        f"3|x||y|u|{TIMES}|2|COMPLETED" + trailing,
    )
    c = read_sacct([str(path)])
    assert c.names["job names"] == ["plain", "a|b", "x||y"]
    assert field(c, "procs") == [1, 1, 2] and c.skipped.total == 0
    assert "2 lines with a | inside JobName (which sacct cannot quote): its parts joined" in (
        c.notes
    )


def test_a_bar_that_could_lie_in_two_free_text_fields_skips_the_line_only(tmp_path):
    path = write(
        tmp_path,
        "JobID|JobName|WorkDir|User|Submit|Start|End|NCPUS|State",
        f"1|plain|/home/u|u|{TIMES}|1|COMPLETED",
        f"2|a|b|/home/u|u|{TIMES}|1|COMPLETED",
        f"3|plain|/home/u|u|{TIMES}|1|COMPLETED",
    )
    c = read_sacct([str(path)])
    assert len(c.trace) == 2
    reason = "a | inside JobName or WorkDir, which sacct cannot quote: which is ambiguous"
    assert c.skipped.as_dict() == {reason: 1}
    assert c.skipped.quoted[reason][0][0] == f"{path}:3"


def test_more_fields_without_free_text_skips_the_line_only(tmp_path):
    path = write(tmp_path, HEADER, f"1|u|a|p|q|{TIMES}|1|1|1|COMPLETED|extra",
                 f"2|u|a|p|q|{TIMES}|1|1|1|COMPLETED")  # fmt: skip
    c = read_sacct([str(path)])
    assert len(c.trace) == 1 and c.skipped.as_dict() == {"more fields than the header names": 1}


def test_a_job_that_starts_before_its_submit_time_is_kept_with_wait_0(tmp_path):
    path = write(
        tmp_path,
        HEADER,
        "1|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|COMPLETED",
        "2|u|a|p|q|2024-01-01T00:00:20|2024-01-01T00:00:18|2024-01-01T00:01:18|1|1|1|COMPLETED",
    )
    c = read_sacct([str(path)])
    assert field(c, "wait") == [10, 0] and field(c, "runtime") == [60, 60]
    assert c.notes[0].startswith("1 job started before it was submitted (by up to 2 s: clock")


def test_a_cluster_is_chosen_from_a_log_of_several(tmp_path):
    path = write(
        tmp_path,
        "JobID|Cluster|User|Submit|Start|End|NCPUS|State",
        f"1|alpha|u|{TIMES}|1|COMPLETED",
        f"1|beta|v|{TIMES}|4|COMPLETED",
        f"2|alpha|u|{TIMES}|2|COMPLETED",
    )
    c = read_sacct([str(path)], cluster="alpha")
    assert field(c, "procs") == [1, 2] and "; Computer: alpha" in c.trace.header
    assert c.skipped.as_dict() == {"another cluster than alpha": 1}
    with pytest.raises(FormatError, match=r":3: field Cluster: 'beta' after 'alpha'"):
        read_sacct([str(path)])


@pytest.mark.parametrize("lines", [[], [HEADER]])
def test_an_empty_file_or_a_header_alone_gives_no_job(tmp_path, lines):
    path = tmp_path / "log.sacct"
    path.write_text("".join(f"{line}\n" for line in lines))
    c = read_sacct([str(path)])
    assert len(c.trace) == 0 and c.skipped.total == 0


def test_a_parsable_line_without_its_trailing_bar_is_skipped_unless_truncated(tmp_path):
    lines = [f"1|u|a|p|q|{TIMES}|1|1|1|COMPLETED|", f"2|u|a|p|q|{TIMES}|1|1|1|COMPLETED"]
    c = read_sacct([str(write(tmp_path, HEADER + "|", *lines))])
    assert len(c.trace) == 1
    assert c.skipped.as_dict() == {
        "no | at the end of the line (the header has one: sacct --parsable)": 1
    }
    with pytest.raises(FormatError, match=r":3: field Timelimit: line truncated: 8 fields"):
        read_sacct([str(write(tmp_path, HEADER + "|", lines[0], f"2|u|a|p|q|{TIMES}"))])
