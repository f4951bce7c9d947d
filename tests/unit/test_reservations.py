"""Maintenance reservations in Slurm's words (issue 34): ``scontrol create reservation``
arguments and ``scontrol show reservation`` records beside a slurm.conf, read into windows of
the platform's downtime, placed on the run's clock, and kept clear of by the schedulers. Every
expectation is worked out by hand from Slurm 22.05.8's rules (src/scontrol/create_res.c,
src/common/parse_time.c, src/slurmctld/reservation.c)."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sitesim.platform.description import Platform
from sitesim.platform.downtime import NO_DATE, Clock, Downtime, Window
from sitesim.platform.values import PlatformError
from sitesim.runs.config import ReplayConfig
from sitesim.runs.platforms import read_platform
from sitesim.runs.runner import run

HOUR, DAY = 3600.0, 86_400.0
PARIS = ZoneInfo("Europe/Paris")
#: Four CPU nodes (batch, the default partition) and two GPU nodes (gpu).
CONF = """\
NodeName=n[1-4] CPUs=1 RealMemory=1000
NodeName=g[1-2] CPUs=2 RealMemory=1000
PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=UNLIMITED
PartitionName=gpu Nodes=g[1-2] MaxTime=UNLIMITED
"""
ALL = list(range(6))


def site(tmp_path: Path, *reservations: str, conf: str = CONF) -> Path:
    """The TOML file of a site: ``slurm.conf`` beside it, and these reservations."""
    (tmp_path / "slurm.conf").write_text(conf)
    lines = "".join(f"  '''{text}''',\n" for text in reservations)
    path = tmp_path / "site.toml"
    path.write_text(f'slurm_conf = "slurm.conf"\nreservations = [\n{lines}]\n')
    return path


def windows(tmp_path: Path, *reservations: str) -> list[dict[str, Any]]:
    platform, _ = read_platform(str(site(tmp_path, *reservations)))
    return list(platform.downtime["maintenance"])


def one(tmp_path: Path, text: str) -> dict[str, Any]:
    (row,) = windows(tmp_path, text)
    return row


# -- reading: each form ------------------------------------------------------------------------
def test_scontrol_create_arguments(tmp_path: Path) -> None:
    row = one(
        tmp_path,
        "ReservationName=maint StartTime=2026-01-05T08:00:00 Duration=04:00:00 Nodes=ALL "
        "Flags=MAINT,IGNORE_JOBS Users=root",
    )
    assert row == {
        "name": "reservation maint",
        "start": "2026-01-05T08:00:00",  # (a date: the run's clock places it)
        "duration": "0-04:00:00",
        "nodes": ["0-5"],
    }


def test_a_scontrol_show_record_as_it_prints(tmp_path: Path) -> None:
    record = (  # (its lines as printed, two of them cut here)
        "ReservationName=shown StartTime=2026-01-05T08:00:00 EndTime=2026-01-05T12:30:00 "
        "Duration=04:30:00\n"
        "   Nodes=n[3-4] NodeCnt=2 CoreCnt=2 Features=(null) PartitionName=(null) "
        "Flags=MAINT,SPEC_NODES\n"
        "   TRES=cpu=2\n"
        "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
        "BurstBuffer=(null) Watts=n/a\n"
        "   MaxStartDelay=(null)"
    )
    assert one(tmp_path, record) == {
        "name": "reservation shown",
        "start": "2026-01-05T08:00:00",
        "duration": "0-04:30:00",
        "nodes": ["2-3"],
    }


@pytest.mark.parametrize(
    ("start", "offset"),
    [
        ("now", "0-00:00:00"),
        ("now+1hour", "0-01:00:00"),
        ("now+90", "0-00:01:30"),  # (no unit: seconds)
        ("NOW+2days", "2-00:00:00"),
        ("now+1week", "7-00:00:00"),
        ("now+3minutes", "0-00:03:00"),
    ],
)
def test_start_times_from_now_are_from_time_0(tmp_path: Path, start: str, offset: str) -> None:
    row = one(tmp_path, f"StartTime={start} Duration=60 Nodes=n1 Flags=MAINT")
    assert row["start"] == offset


@pytest.mark.parametrize(
    ("start", "date"),
    [
        ("2026-01-05T08:00:00", "2026-01-05T08:00:00"),
        ("2026-01-05T08:00", "2026-01-05T08:00:00"),
        ("2026-01-05", "2026-01-05T00:00:00"),
        ("01/05/26-08:30", "2026-01-05T08:30:00"),
        ("01.05.26", "2026-01-05T00:00:00"),
        ("010526", "2026-01-05T00:00:00"),
        ("2026-01-05T08:00PM", "2026-01-05T20:00:00"),
    ],
)
def test_start_dates(tmp_path: Path, start: str, date: str) -> None:
    assert one(tmp_path, f"StartTime={start} Duration=60 Nodes=n1 Flags=MAINT")["start"] == date


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [
        ("240", "0-04:00:00"),  # minutes
        ("90:30", "0-01:31:00"),  # minutes:seconds, rounded up to whole minutes
        ("04:00:00", "0-04:00:00"),
        ("1-12:00:00", "1-12:00:00"),
        ("2-6", "2-06:00:00"),  # days-hours
        ("UNLIMITED", "365-00:00:00"),  # a year, as Slurm
        ("-1", "365-00:00:00"),
        ("0", "UNLIMITED"),  # no end at all, as Slurm
    ],
)
def test_durations(tmp_path: Path, duration: str, seconds: str) -> None:
    row = one(tmp_path, f"StartTime=now Duration={duration} Nodes=n1 Flags=MAINT")
    assert row["duration"] == seconds


def test_an_end_time_instead_of_a_duration(tmp_path: Path) -> None:
    rows = windows(
        tmp_path,
        "StartTime=now+1hour EndTime=now+3hours Nodes=n1 Flags=MAINT",
        "StartTime=2026-01-05T08:00 EndTime=2026-01-06T09:30 Nodes=n1 Flags=MAINT",
        "StartTime=now EndTime=now+2hours Duration=120 Nodes=n1 Flags=MAINT",  # (agreeing)
    )
    assert [(r["start"], r["duration"]) for r in rows] == [
        ("0-01:00:00", "0-02:00:00"),
        ("2026-01-05T08:00:00", "1-01:30:00"),
        ("0-00:00:00", "0-02:00:00"),
    ]


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        ("Nodes=n[2-3],g2", "1-2,5"),
        ("Nodes=ALL", "0-5"),
        ("Nodes=ALL PartitionName=gpu", "4-5"),  # (create_res.c:432-438)
        ("Nodes=ALL PartitionName=gpu Flags=MAINT,PART_NODES", "4-5"),
        ("PartitionName=gpu", "4-5"),  # the whole partition
        ("NodeCnt=3", "0-2"),  # the default partition's first
        ("NodeCount=1 PartitionName=gpu", "4"),
        ("Nodes=n4 NodeCnt=3", "3"),  # (the list wins)
    ],
)
def test_nodes(tmp_path: Path, nodes: str, expected: str) -> None:
    text = f"StartTime=now Duration=60 {nodes}" + ("" if "Flags" in nodes else " Flags=MAINT")
    assert one(tmp_path, text)["nodes"] == [expected]


@pytest.mark.parametrize(
    ("flags", "every"),
    [
        ("MAINT", None),
        ("MAINT,HOURLY", "0-01:00:00"),
        ("MAINT,DAILY", "1-00:00:00"),
        ("MAINT,WEEKLY", "7-00:00:00"),
        ("MAINT,WEEKDAY", "WEEKDAY"),
        ("maint,weekend", "WEEKEND"),
        ("MAINT,WEEKLY,DAILY", "1-00:00:00"),  # (DAILY first: reservation.c:6556-6579)
        ("Mai,Ov,I,St,F,N", None),  # (Slurm's shortest names; no effect)
    ],
)
def test_repeats(tmp_path: Path, flags: str, every: str | None) -> None:
    row = one(tmp_path, f"StartTime=now Duration=30 Nodes=n1 Flags={flags}")
    assert row.get("every") == every


def test_keys_by_scontrols_shortest_names(tmp_path: Path) -> None:
    row = one(tmp_path, "reservation res=short st=now+1hour dur=30 nodes=n1 fl=maint u=root")
    assert row == {
        "name": "reservation short",
        "start": "0-01:00:00",
        "duration": "0-00:30:00",
        "nodes": ["0"],
    }


def test_no_reservation_no_downtime(tmp_path: Path) -> None:
    platform, _ = read_platform(str(site(tmp_path)))
    assert platform.downtime == {}


def test_root_alone_needs_no_maint_flag(tmp_path: Path) -> None:
    assert one(tmp_path, "StartTime=now Duration=30 Nodes=n1 Users=root")["nodes"] == ["0"]


# -- reading: bad input, one line naming the file, the reservation and the key -----------------
@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Colour=red",
         "reservations[0] (m): Colour: not a key of scontrol create reservation"),
        ("ReservationName=m StartTime=soon Duration=60 Nodes=n1",
         "reservations[0] (m): StartTime: soon: not a time Slurm reads"),
        ("ReservationName=m StartTime=now+1fortnight Duration=60 Nodes=n1",
         "StartTime: now+1fortnight: 'fortnight' is not a unit"),
        ("ReservationName=m StartTime=08:00 Duration=60 Nodes=n1",
         "StartTime: 08:00: names no day: it depends on when scontrol runs"),
        ("ReservationName=m StartTime=01/05 Duration=60 Nodes=n1",
         "StartTime: 01/05: names no year"),
        ("ReservationName=m StartTime=tomorrow Duration=60 Nodes=n1",
         "StartTime: tomorrow: depends on when scontrol runs"),
        ("ReservationName=m StartTime=2026-02-30T08:00 Duration=60 Nodes=n1",
         "StartTime: 2026-02-30T08:00: 2026-02-30 is no day of the calendar"),
        ("ReservationName=m StartTime=uts1767600000 Duration=60 Nodes=n1",
         "StartTime: uts1767600000: a Unix time"),
        ("ReservationName=m StartTime=now-1hour Duration=60 Nodes=n1",
         "StartTime: now-1hour: before now, the run's time 0"),
        ("ReservationName=m Duration=60 Nodes=n1", "StartTime: must be given"),
        ("ReservationName=m StartTime=now Nodes=n1", "Duration: give Duration or EndTime"),
        ("ReservationName=m StartTime=now Duration=4h Nodes=n1", "Duration: '4h' is not a time"),
        ("ReservationName=m StartTime=now EndTime=now Nodes=n1",
         "EndTime: now is not after StartTime now"),
        ("ReservationName=m StartTime=now EndTime=2026-01-05 Nodes=n1",
         "EndTime: 2026-01-05: give StartTime and EndTime alike"),
        ("ReservationName=m StartTime=now EndTime=now+1hour Duration=30 Nodes=n1",
         "Duration: 30: StartTime + Duration is not EndTime"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n[1-5] Flags=MAINT",
         "reservations[0] (m): Nodes: n5 is no node of the slurm.conf"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n[1-",
         "Nodes: 'n[1-' has unbalanced brackets"),
        ("ReservationName=m StartTime=now Duration=60 Flags=MAINT", "Nodes: give Nodes="),
        ("ReservationName=m StartTime=now Duration=60 NodeCnt=5", "NodeCnt: 5 nodes: partition"),
        ("ReservationName=m StartTime=now Duration=60 PartitionName=debug",
         "PartitionName: debug is no partition (batch, gpu)"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Flags=MAINT,MAGNETIC",
         "Flags: MAGNETIC: not modelled by sitesim (jobs of its users run in it"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Flags=MAINT,TIME_FLOAT",
         "Flags: TIME_FLOAT: not modelled"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Flags=MAINT,SHINY",
         "Flags: SHINY: not a flag of Slurm's reservations"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Flags=-MAINT",
         "Flags: -MAINT: takes a flag away"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Flags=PART_NODES",
         "Flags: PART_NODES needs PartitionName= and Nodes=ALL"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Users=alice",
         "Users: alice: a reservation for users' jobs is not modelled"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Accounts=physics",
         "Accounts: physics: a reservation for users' jobs is not modelled"),
        ("ReservationName=m StartTime=now Duration=2:00:00 Nodes=n1 Flags=MAINT,HOURLY",
         "Duration: 0-02:00:00 is not shorter than the time between two of its windows"),
        ("ReservationName=m StartTime=now Duration=UNLIMITED Nodes=n1 Flags=MAINT,WEEKLY",
         "Duration: 365-00:00:00 is not shorter"),
        ("ReservationName=m StartTime=now Duration=60 NodeCnt=1 CoreCnt=1 Flags=MAINT",
         "CoreCnt: a reservation of cores, not of whole nodes, is not modelled"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Licenses=matlab:1 Flags=MAINT",
         "Licenses: matlab:1: not modelled by sitesim (it has no licenses)"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Nodes=n2",
         "Nodes: given twice"),
        ("ReservationName=m StartTime=now Duration+=60 Nodes=n1",
         "Duration+: adds to or takes from a reservation: only scontrol update does"),
        ("ReservationName=m StartTime=now Duration=60 Nodes=n1 Skip",
         "Skip: not Key=Value"),
    ],
)  # fmt: skip
def test_bad_reservations_name_file_reservation_and_key(
    tmp_path: Path, text: str, says: str
) -> None:
    with pytest.raises(PlatformError) as caught:
        read_platform(str(site(tmp_path, text)))
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'site.toml'}: reservations[0]"), message
    assert says in message, message
    assert "\n" not in message


def test_two_reservations_of_one_name_and_a_list_that_is_not(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match=r"reservations\[1\] \(m\): ReservationName: m names"):
        windows(tmp_path, "Res=m St=now D=60 Nodes=n1 Fl=MAINT", "Res=m St=now D=60 Nodes=n2")
    path = site(tmp_path)
    path.write_text('slurm_conf = "slurm.conf"\nreservations = "ReservationName=m"\n')
    with pytest.raises(PlatformError, match="reservations: must be a list of strings"):
        read_platform(str(path))


# -- the run's clock ---------------------------------------------------------------------------
def paris(*args: int) -> float:
    return datetime(*args, tzinfo=PARIS).timestamp()  # type: ignore[misc]


def placed(platform: Platform, clock: Clock) -> tuple[Window, ...]:
    names = {p.name: p.nodes for p in platform.partitions}
    return Downtime.from_dict(platform.downtime, names, platform.nodes, "site", None, clock).windows


def test_a_date_is_placed_on_the_clock_of_the_trace_in_its_zone(tmp_path: Path) -> None:
    platform, _ = read_platform(
        str(site(tmp_path, "StartTime=2026-04-06T08:00 Duration=60 Nodes=n1 Flags=MAINT"))
    )
    # time 0: Monday 2026-04-06 00:00 in Paris (summer time, UTC+2)
    (window,) = placed(platform, Clock(paris(2026, 4, 6), PARIS))
    assert window == Window(8 * HOUR, HOUR, math.inf, (0,))
    # two weeks before, in winter (UTC+1): the clocks moved an hour on 29 March
    (window,) = placed(platform, Clock(paris(2026, 3, 23), PARIS))
    assert window.start == (14 * DAY + 8 * HOUR) - HOUR


def test_a_date_on_a_run_of_no_date_is_one_line(tmp_path: Path) -> None:
    platform, _ = read_platform(
        str(site(tmp_path, "Res=m StartTime=2026-01-05 Duration=60 Nodes=n1 Flags=MAINT"))
    )
    with pytest.raises(PlatformError) as caught:
        platform.on_clock(NO_DATE, "site.toml")
    assert str(caught.value) == (
        "site.toml: reservation m: starts 2026-01-05T00:00:00, a date, and this run has no date "
        "(its time 0 is a Monday 00:00: a site-level run, or a trace without UnixStartTime); "
        "give the start as a time from time 0"
    )


def test_placed_windows_are_written_from_time_0_for_the_result(tmp_path: Path) -> None:
    platform, _ = read_platform(
        str(
            site(
                tmp_path,
                "Res=a StartTime=2026-01-05T08:00 Duration=240 Nodes=ALL Flags=MAINT,WEEKLY",
                "Res=b StartTime=now+1hour Duration=60 Nodes=n1 Flags=MAINT",
            )
        )
    )
    clock = Clock(paris(2026, 1, 7), PARIS)  # a Wednesday: Monday's window began 2 days before
    on_clock = platform.on_clock(clock)
    assert on_clock.downtime["maintenance"] == [
        {"name": "reservation a", "start": "5-08:00:00", "duration": "0-04:00:00",
         "every": "7-00:00:00", "nodes": ["0-5"]},
        {"name": "reservation b", "start": "0-01:00:00", "duration": "0-01:00:00",
         "nodes": ["0"]},
    ]  # fmt: skip
    assert placed(on_clock, NO_DATE) == placed(platform, clock)
    plain = Platform.from_dict({**platform.to_dict(), "downtime": {}})
    assert plain.on_clock(clock) is plain


# -- the schedulers keep jobs clear of a reservation -------------------------------------------
def trace(tmp_path: Path, jobs: list[tuple[int, int, int]], header: str) -> Path:
    """Jobs (submit, runtime, nodes) of one core each node, their estimates their runtimes."""
    lines = [header]
    for n, (submit, runtime, size) in enumerate(jobs, start=1):
        lines.append(
            f"{n} {submit} 0 {runtime} {size} -1 -1 {size} {runtime} -1 1 1 1 -1 -1 -1 -1 -1"
        )
    path = tmp_path / "t.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


def starts(tmp_path: Path, swf: Path, scheduler: str) -> list[float]:
    config = ReplayConfig(trace=str(swf), platform=str(tmp_path / "site.toml"), scheduler=scheduler)
    result = run(config)
    return result.records["start"].tolist()


#: Two 4-hour jobs take n1 and n2; a 30-minute job fits on n3 before the reservation (n3, n4
#: from 1:00 to 3:00); a 2-hour job would run into it, and waits for its end; a 10-minute job
#: submitted during it waits too (n1, n2 busy until 4:00).
JOBS = [(0, 14_400, 1), (0, 14_400, 1), (0, 1800, 1), (0, 7200, 1), (5400, 600, 1)]


@pytest.mark.parametrize("scheduler", ["FCFS", "EASY", "CONSERVATIVE"])
def test_a_maint_reservation_on_two_of_four_nodes_keeps_jobs_off_them(
    tmp_path: Path, scheduler: str
) -> None:
    conf = "NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=n[1-4] Default=YES\n"
    site(
        tmp_path,
        "ReservationName=maint StartTime=2026-01-05T08:00:00 Duration=2:00:00 Nodes=n[3-4] "
        "Flags=MAINT Users=root",
        conf=conf,
    )
    header = f"; UnixStartTime: {paris(2026, 1, 5, 7):.0f}\n; TimeZoneString: Europe/Paris"
    swf = trace(tmp_path, JOBS, header)
    assert starts(tmp_path, swf, scheduler) == [0, 0, 0, 3 * HOUR, 3 * HOUR]
    # without it, the 2-hour job and the 10-minute one start at once
    site(tmp_path, conf=conf)
    assert starts(tmp_path, swf, scheduler) == [0, 0, 0, 0, 5400]


def test_the_slurm_scheduler_keeps_jobs_off_them_too(tmp_path: Path) -> None:
    conf = "NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=n[1-4] Default=YES\n"
    site(tmp_path, "StartTime=now+1hour Duration=120 Nodes=n[3-4] Flags=MAINT", conf=conf)
    swf = trace(tmp_path, JOBS, "; MaxProcs: 4")
    # (a batch job never starts at its submission: the first pass is a second later)
    assert starts(tmp_path, swf, "SLURM") == [1, 1, 1, 3 * HOUR, 3 * HOUR]


def test_a_weekly_reservation_comes_back_every_week(tmp_path: Path) -> None:
    conf = "NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=n[1-4] Default=YES\n"
    site(
        tmp_path,
        "ReservationName=weekly StartTime=now+1hour Duration=60 Nodes=ALL Flags=MAINT,WEEKLY",
        conf=conf,
    )
    week = int(7 * DAY)
    jobs = [
        (week + 3000, 600, 1),  # ends at 1:00 of week 2, as the window begins: starts at once
        (week + 3000, 601, 1),  # would run into it: waits for its end, 2:00
        (week + 4000, 60, 3),  # submitted during it: beside the second, at its end
        (2 * week + 5400, 60, 4),  # during the third: at its end
    ]
    swf = trace(tmp_path, jobs, "; MaxProcs: 4")
    expected = [week + 3000, week + 7200, week + 7200, 2 * week + 7200]
    assert starts(tmp_path, swf, "EASY") == expected
