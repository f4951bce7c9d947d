"""A site's jobs replayed with what decides their placement (issue 34): GPUs, memory, node
counts and node features read from sacct, kept by the workload table, placed on the nodes
that have them; what no node has is refused, naming the job."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from sitesim.cli.main import main
from sitesim.formats.sacct import read_sacct
from sitesim.platform.description import Platform
from sitesim.platform.features import constraint_mask, parse_constraint
from sitesim.platform.placement import Demand, Partitions, capacity, place
from sitesim.slurm.conf import expand_hostlist, read_slurm_conf

DATA = Path(__file__).parent / "data" / "slurm" / "features"
CONF, SACCT = DATA / "slurm.conf", DATA / "site.sacct"


def test_sacct_requests_are_read_per_node() -> None:
    requests = read_sacct([str(SACCT)]).trace.requests
    assert requests is not None
    # job 3: gres/gpu=8 and mem=64000M over its two nodes; job 5: 2000Mc on 64 CPUs, 2 nodes
    assert requests.gpus_per_node.tolist() == [0, 0, 4, 2, 0]
    assert requests.memory_per_node_mb.tolist() == [16000, 400000, 32000, 8000, 64000]
    assert requests.nodes.tolist() == [0, 0, 2, 0, 2]
    assert requests.constraint.tolist() == ["intel", "bigmem", "a100", "a100", "intel"]
    assert requests.location(2) == f"{SACCT}:4"


def test_slurm_conf_features_become_node_types() -> None:
    platform = read_slurm_conf(CONF).platform
    assert platform is not None
    assert platform.features == ("intel", "bigmem", "amd", "a100")
    assert constraint_mask(parse_constraint("intel&bigmem"), platform).tolist() == [
        False, False, False, False, True, False, False,
    ]  # fmt: skip
    assert constraint_mask(parse_constraint("(bigmem|a100)"), platform).sum() == 3


@pytest.mark.parametrize(
    ("text", "problem"),
    [("a100*2", "feature counts"), ("a100&", "ends where"), ("(a100", "not closed"),
     ("a100,b", "',' is not in a constraint"), ("", "an empty constraint")],
)  # fmt: skip
def test_bad_constraints_say_why(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_constraint(text)


def test_placement_keeps_to_the_nodes_a_constraint_allows() -> None:
    platform = Platform.from_dict(
        {
            "nodes": [
                {"type": "a", "count": 2, "cores": 4},
                {"type": "b", "count": 2, "cores": 4, "features": ["fast"]},
            ],
            "partitions": [{"name": "all", "nodes": ["a", "b"], "allocation": "shared"}],
        }
    )
    parts = Partitions(platform)
    anywhere = place(parts, Demand(0, 6), capacity(platform))
    fast = place(parts, Demand(0, 6, nodeset=parts.nodeset("fast")), capacity(platform))
    assert anywhere is not None and anywhere.nodes.tolist() == [0, 1]
    assert fast is not None and fast.nodes.tolist() == [2, 3]
    assert place(parts, Demand(0, 9, nodeset=parts.nodeset("fast")), capacity(platform)) is None


def _placement(folder: Path) -> list[dict[str, str]]:
    with open(folder / "placement.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _node_range(text: str) -> list[int]:
    return [int(name[1:]) for name in expand_hostlist(f"x[{text}]")]


@pytest.mark.parametrize("scheduler", ["EASY", "SLURM"])
def test_a_replay_places_every_job_on_nodes_that_have_what_it_asked(
    tmp_path: Path, scheduler: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["replay", str(SACCT), "--platform", str(CONF), "--scheduler", scheduler]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    platform = read_slurm_conf(CONF).platform
    assert platform is not None
    requests = read_sacct([str(SACCT)]).trace.requests
    assert requests is not None
    rows = _placement(out)
    assert len(rows) == 5
    for k, row in enumerate(rows):
        nodes = np.array(_node_range(row["nodes"]))
        allowed = constraint_mask(parse_constraint(requests.constraint[k]), platform)
        assert allowed[nodes].all(), (k, row)
        per_node = int(row["memory_mb"]) / len(nodes)
        assert per_node >= requests.memory_per_node_mb[k]
        assert (platform.memory[nodes] >= requests.memory_per_node_mb[k]).all()
        assert (platform.gpus[nodes] >= requests.gpus_per_node[k]).all()
        assert int(row["gpus"]) == requests.gpus_per_node[k] * len(nodes)
    assert [row["nodes"] for row in rows][1] == "4"  # the big-memory job on the big node


def test_a_refusal_names_the_job_and_what_no_node_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SACCT.read_text().replace("|gpu|normal|2024-01-01T00:03:00", "|batch|normal|"
                                     "2024-01-01T00:03:00").replace("gres/gpu=2,", "")  # fmt: skip
    log = tmp_path / "moved.sacct"
    log.write_text(text)
    assert main(["replay", str(log), "--platform", str(CONF)]) == 0
    err = capsys.readouterr().err
    assert (
        f"asks for node features its partition has not: the first, job 4 ({log}:5), asks for "
        "nodes with 'a100'; no node of partition 'batch' has them (features: intel, bigmem, "
        "amd, a100)"
    ) in err


@pytest.mark.parametrize("name", ["w.workload.csv", "w.parquet"])
def test_the_workload_table_keeps_the_requests(tmp_path: Path, name: str) -> None:
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    from sitesim.formats.traces import read_trace

    table = tmp_path / name
    assert main(["convert", str(SACCT), "-o", str(table)]) == 0
    original, back = read_sacct([str(SACCT)]).trace, read_trace(table)
    assert np.array_equal(original.data, back.data)
    assert original.header == back.header
    assert original.requests is not None and back.requests is not None
    for column in ("nodes", "gpus_per_node", "memory_per_node_mb", "constraint",
                   "partition_name"):  # fmt: skip
        assert (
            getattr(back.requests, column).tolist() == getattr(original.requests, column).tolist()
        )


def test_swf_says_what_it_cannot_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    swf = tmp_path / "site.swf"
    assert main(["convert", str(SACCT), "-o", str(swf)]) == 0
    note = "2 jobs ask for GPUs, 5 jobs ask for node features, 2 jobs ask for a node count"
    assert note in capsys.readouterr().out
    assert note in swf.read_text()


def test_platform_out_uses_node_list(tmp_path: Path) -> None:
    # the log shows 7 nodes by name (cpu1-3, big1, gpu1-2): the platform has those, not as
    # many as each partition's jobs held at once
    out = tmp_path / "p.toml"
    assert main(["convert", str(SACCT), "-o", str(tmp_path / "x.swf"), "--platform-out",
                 str(out)]) == 0  # fmt: skip
    platform = Platform.load(out)
    assert platform.nodes == 6  # (cpu4 ran no job: not in the log)
    assert [t.name for t in platform.node_types] == ["big1", "cpu1", "cpu2..cpu3", "gpu1..gpu2"]
    assert platform.total_gpus == 8
    assert [len(p.nodes) for p in platform.partitions] == [4, 2]
    assert "from NodeList" in out.read_text()


def test_an_excerpt_keeps_each_job_its_own_request_and_reruns(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["replay", str(SACCT), "--platform", str(CONF), "--jobs", "2:5", "--out", str(out)]
    assert main(argv) == 0
    assert [(row["gpus"], row["memory_mb"]) for row in _placement(out)] == [
        ("8", "64000"), ("2", "8000"), ("0", "128000"),
    ]  # fmt: skip
    assert main(["rerun", str(out / "results.json")]) == 0
