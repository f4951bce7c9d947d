"""Bad platform files (issue 32): each case is one clear line on stderr, exit status 2, and
nothing written, for ``sitesim replay`` and ``sitesim run`` alike. Each failed before its fix:
a traceback (numbers too large for the arrays), silence (overlapping ranges, absurd limits, a
window that never ends), or a run that grew without bound (a storm of failures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitesim.cli.main import main
from tests.unit.test_bad_input import error

DAY = 86_400

NODES = """\
[[nodes]]
type = "cpu"
count = 10
cores = 8
{node}
[[partitions]]
name = "a"
nodes = {nodes}
{partition}
"""

#: name -> (the platform's changes: a line of the node type, the partition's nodes, more lines
#: of the partition (and tables after it)), what the message says
CASES: dict[str, tuple[tuple[str, str, str], str]] = {
    "memory as text, beyond any node": (
        ('memory = "99999999999999999999T"', '["cpu"]', ""),
        "nodes[0].memory: '99999999999999999999T' is absurd: a node has at most 1024T",
    ),
    "memory as a number, beyond int64": (
        ("memory = 99999999999999999999", '["cpu"]', ""),
        "nodes[0].memory: 99999999999999999999 is absurd",
    ),
    "a range beyond int64": (
        ("", '["0-99999999999999999999"]', ""),
        "partitions[0].nodes: '0-99999999999999999999' names node 99999999999999999999; "
        "nodes are 0-9",
    ),
    "a range of two billion nodes": (
        ("", '["0-2000000000"]', ""),
        "partitions[0].nodes: '0-2000000000' names node 2000000000; nodes are 0-9",
    ),
    "overlapping ranges": (
        ("", '["0-7", "4-9"]', ""),
        "partitions[0].nodes: '4-9' names nodes 4-7 again; list each node once",
    ),
    "a node type and a range of its nodes": (
        ("", '["cpu", "3"]', ""),
        "partitions[0].nodes: '3' names node 3 again",
    ),
    "a range repeating a node": (
        ("", '"0-3,2"', ""),
        "partitions[0].nodes: '0-3,2' names node 2 again",
    ),
    "an absurd max_time in minutes": (
        ("", '["cpu"]', "max_time = 999999999999999999"),
        "partitions[0].max_time: 999999999999999999 minutes is absurd; must be a time limit > 0 "
        "and at most 36500-00:00:00 (100 years), or UNLIMITED",
    ),
    "an absurd max_time as text": (
        ("", '["cpu"]', 'max_time = "99999999999999999999-00:00:00"'),
        "partitions[0].max_time: '99999999999999999999-00:00:00' is absurd",
    ),
    "an SWF number beyond field 16": (
        ("", '["cpu"]', "swf = [99999999999999999999]"),
        "partitions[0].swf: must list SWF partition numbers in [0, 999999999999999999]",
    ),
    "an infinite share": (
        ("", '["cpu"]', "share = inf"),
        "partitions[0].share: must be a number in [0, 1e+18], got inf",
    ),
    "a window as long as its period": (
        ("", '["cpu"]', '[[downtime.maintenance]]\nstart = 0\nduration = 60\nevery = "1:00:00"'),
        "downtime.maintenance[0].every: '1:00:00' equals the duration: each window begins as "
        "the last ends and the nodes never come back",
    ),
    "a window's overlapping nodes": (
        ("", '["cpu"]', '[[downtime.maintenance]]\nstart = 0\nduration = 60\nnodes = ["0-3", 2]'),
        "downtime.maintenance[0].nodes: 2 names node 2 again",
    ),
    "an absurd repair time": (
        ("", '["cpu"]', "[downtime.failures]\nmtbf = 60\nmttr = 99999999999999999999"),
        "downtime.failures.mttr: 99999999999999999999 minutes is absurd",
    ),
    "a storm of failures": (
        ("", '["cpu"]', '[downtime.failures]\nmtbf = "0:00:01"\nmttr = "0:00:01"'),
        "site.toml: downtime: ",  # (then how many failures, over how many days)
    ),
    "nodes that never come back": (
        ("", '["cpu"]', '[[downtime.maintenance]]\nstart = 0\nduration = "UNLIMITED"'),
        "jobs are still waiting on an idle machine after the last submission, and nodes 0-9 "
        "are down for good",
    ),
}


def command(name: str, tmp_path: Path, platform: Path, out: Path) -> list[str]:
    """The run or replay of ``platform``: a replay of two jobs 400 days apart (the outages'
    horizon 430 days), or a site-level run of five users for two days (62 days)."""
    if name == "run":
        return ["run", "--platform", str(platform), "--users", "5", "--days", "2", "--warmup",
                "0", "--out", str(out)]  # fmt: skip
    trace = tmp_path / "t.swf"
    trace.write_text(
        "; MaxProcs: 80\n"
        "1 0 0 100 8 -1 -1 8 600 -1 1 1 -1 -1 -1 -1 -1 -1\n"
        f"2 {400 * DAY} 0 100 8 -1 -1 8 600 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    )
    return ["replay", str(trace), "--platform", str(platform), "--out", str(out)]


@pytest.mark.parametrize("name", ["replay", "run"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_platform_is_one_line_exit_2_and_nothing_written(
    case: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (node, nodes, partition), says = CASES[case]
    platform = tmp_path / "site.toml"
    platform.write_text(NODES.format(node=node, nodes=nodes, partition=partition))
    out = tmp_path / "out"
    message = error(capsys, command(name, tmp_path, platform, out))
    assert message.startswith("sitesim: error: "), message
    assert says in message
    assert not out.exists()


#: Maintenance reservations beside a slurm.conf (issue 34): the reservation's text, and what
#: the one line says after the file's name.
RESERVATION_CASES: dict[str, tuple[str, str]] = {
    "an unknown key": (
        "ReservationName=m StartTime=now Duration=60 Nodes=ALL Flags=MAINT Colour=red",
        "reservations[0] (m): Colour: not a key of scontrol create reservation",
    ),
    "a bad time": (
        "ReservationName=m StartTime=next-monday Duration=60 Nodes=ALL Flags=MAINT",
        "reservations[0] (m): StartTime: next-monday: not a time Slurm reads",
    ),
    "a bad duration": (
        "ReservationName=m StartTime=now Duration=4h Nodes=ALL Flags=MAINT",
        "reservations[0] (m): Duration: '4h' is not a time in Slurm's syntax",
    ),
    "an unknown node": (
        "ReservationName=m StartTime=now Duration=60 Nodes=n[8-12] Flags=MAINT",
        "reservations[0] (m): Nodes: n10 is no node of the slurm.conf",
    ),
    "a flag not modelled": (
        "ReservationName=m StartTime=now Duration=60 Nodes=ALL Flags=MAINT,MAGNETIC",
        "reservations[0] (m): Flags: MAGNETIC: not modelled by sitesim",
    ),
    "a reservation for users": (
        "ReservationName=m StartTime=now Duration=60 Nodes=n[0-3] Users=alice,bob",
        "reservations[0] (m): Users: alice,bob: a reservation for users' jobs is not modelled",
    ),
    "a repeat shorter than the window": (
        "ReservationName=m StartTime=now Duration=2:00:00 Nodes=ALL Flags=MAINT,HOURLY",
        "reservations[0] (m): Duration: 0-02:00:00 is not shorter than the time between two",
    ),
    "a date without the run's date": (  # (neither run has one: the trace gives no date)
        "ReservationName=m StartTime=2026-01-05T08:00 Duration=60 Nodes=ALL Flags=MAINT",
        "reservation m: starts 2026-01-05T08:00:00, a date, and this run has no date",
    ),
}


@pytest.mark.parametrize("name", ["replay", "run"])
@pytest.mark.parametrize("case", list(RESERVATION_CASES))
def test_a_bad_reservation_is_one_line_exit_2_and_nothing_written(
    case: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reservation, says = RESERVATION_CASES[case]
    (tmp_path / "slurm.conf").write_text(
        "NodeName=n[0-9] CPUs=8\nPartitionName=a Nodes=ALL Default=YES\n"
    )
    platform = tmp_path / "site.toml"
    platform.write_text(f"slurm_conf = \"slurm.conf\"\nreservations = ['{reservation}']\n")
    out = tmp_path / "out"
    message = error(capsys, command(name, tmp_path, platform, out))
    assert message.startswith(f"sitesim: error: {platform}: {says}"), message
    assert not out.exists()


def test_a_storm_names_the_failures_and_the_days(tmp_path: Path, capsys) -> None:
    platform = tmp_path / "site.toml"
    (_, nodes, partition), _ = CASES["a storm of failures"]
    platform.write_text(NODES.format(node="", nodes=nodes, partition=partition))
    message = error(capsys, command("replay", tmp_path, platform, tmp_path / "out"))
    assert message.endswith(
        "site.toml: downtime: 1.9e+08 failures of 10 nodes (mtbf 0-00:00:01, mttr 0-00:00:01) "
        "over 430 days (the run and the time it may take to drain): more than the 10,000,000 "
        "outages a run may draw (each is an event and a scheduling pass); give a longer mtbf, "
        "mttr or every, fewer nodes, or a shorter run"
    )
    message = error(capsys, command("run", tmp_path, platform, tmp_path / "out"))
    assert "2.7e+07 failures of 10 nodes (mtbf 0-00:00:01, mttr 0-00:00:01) over 62 days" in message


# -- a trace on a platform it was not recorded on: one warning line --------------------------------
def test_a_trace_far_from_its_platform_is_warned_of(tmp_path: Path, capsys) -> None:
    platform = tmp_path / "site.toml"
    platform.write_text(NODES.format(node="", nodes='["cpu"]', partition="").replace("10", "100"))
    trace = tmp_path / "t.swf"
    trace.write_text(
        "; MaxProcs: 8\n"
        "1 0 0 3600 8 -1 -1 8 7200 -1 1 1 -1 -1 -1 -1 -1 -1\n"
        "2 3600 0 3600 8 -1 -1 8 7200 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    )
    assert main(["replay", str(trace), "--platform", str(platform)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert warnings[0] == (
        f"sitesim: warning: {trace} was recorded on 8 processors (its MaxProcs) and platform "
        "site has 800 cores, 100 times as many; the offered load on site is 0.02, below 0.05: "
        "the machine would stand nearly idle (is it the trace's platform? --load L sets the "
        "offered load)"
    )
    assert main(["replay", str(trace), "--platform", str(platform), "--load", "0.7"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].endswith(
        "100 times as many (is it the trace's platform?)"
    )


def test_a_trace_on_its_own_platform_is_not_warned_of(tmp_path: Path, capsys) -> None:
    from sitesim.platform.boundary import trace_mismatch
    from sitesim.platform.description import Platform

    platform = Platform.from_dict(
        {"name": "site", "nodes": [{"type": "n", "count": 10, "cores": 8}],
         "partitions": [{"name": "p", "nodes": "n"}]}
    )  # fmt: skip
    assert trace_mismatch("t.swf", 80, platform, 0.6, load_set=False) is None
    assert trace_mismatch("t.swf", 9, platform, 0.6, load_set=False) is None  # (8.9 times)
    assert trace_mismatch("t.swf", None, platform, 0.6, load_set=False) is None
    assert trace_mismatch("t.swf", 80, platform, 0.01, load_set=True) is None
    found = trace_mismatch("t.swf", 4000, platform, 0.6, load_set=False)
    assert found is not None and "has 80 cores, 1/50 of them" in found


@pytest.mark.traces
def test_sdsc_sp2_on_curie_is_warned_of(capsys) -> None:
    from tests.conftest import trace_path

    trace = trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")
    assert main(["replay", str(trace), "--platform", "curie", "--jobs", "0:300"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "MaxProcs" in line]
    assert len(warnings) == 1
    assert (
        "recorded on 128 processors (its MaxProcs) and platform curie has 93,312 cores, "
        in (warnings[0])
    )
    assert "the offered load on curie is 0.00" in warnings[0]
