"""Platform files (sitesim.platform.description): good files load, bad ones get one line naming the
file and the key, and the shipped Curie platform is the machine its trace's header describes."""

from __future__ import annotations

import fnmatch
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitesim.errors import ConfigError
from sitesim.platform.description import Platform
from sitesim.platform.values import PlatformError, format_nodes, parse_duration, parse_nodes
from sitesim.workload.swf import read_swf
from tests.conftest import trace_path

ROOT = Path(__file__).resolve().parents[2]
CURIE = ROOT / "sitesim" / "data" / "platforms" / "curie.toml"

GOOD = """
placement = "best_fit"
default_partition = "normal"

[[nodes]]
type = "cpu"
count = 400
cores = 64
memory = "256G"

[[nodes]]
type = "gpu"
count = 40
cores = 32
gpus = 4
memory = 524288

[[partitions]]
name = "normal"
nodes = ["cpu"]
max_time = "2-00:00:00"
swf = [1, 2]

[[partitions]]
name = "gpu"
nodes = "gpu"
allocation = "shared"
max_time = 90

[[partitions]]
name = "debug"
nodes = ["0-3,17", "gpu"]
max_time = "30:00"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text)
    return path


def test_a_good_file_loads(tmp_path):
    platform = Platform.load(write(tmp_path, GOOD))
    assert platform.name == "site"
    assert platform.placement == "best_fit"
    assert (platform.nodes, platform.total_cores, platform.total_gpus) == (440, 26_880, 160)
    assert platform.total_memory == (400 * 256 + 40 * 512) * 1024  # MB
    normal, gpu, debug = platform.partitions
    assert platform.partitions[platform.default] is normal
    assert normal.nodes == tuple(range(400)) and normal.max_time == 2 * 86_400
    assert normal.allocation == "exclusive" and normal.swf == (1, 2)
    assert gpu.nodes == tuple(range(400, 440)) and gpu.allocation == "shared"
    assert gpu.max_time == 90 * 60  # a number is minutes, as in slurm.conf
    assert format_nodes(debug.nodes) == "0-3,17,400-439" and debug.max_time == 30 * 60
    assert platform.swf_partitions() == {1: 0, 2: 0, 3: 1, 4: 2}  # (3, 4: the lists unused)
    assert Platform.from_dict(platform.to_dict()) == platform


@given(st.lists(st.integers(0, 40), min_size=1, max_size=20))
def test_a_jobs_nodes_as_an_array_are_written_as_the_same_ranges(nodes):
    distinct = sorted(set(nodes))  # (a job's nodes)
    assert format_nodes(np.array(distinct, dtype=np.int64)) == format_nodes(distinct[::-1])
    assert parse_nodes(format_nodes(np.array(distinct))) == distinct


def test_the_smallest_file_takes_the_defaults(tmp_path):
    text = '[[nodes]]\ntype = "n"\ncount = 2\ncores = 4\n\n'
    text += '[[partitions]]\nname = "all"\nnodes = ["n"]\n'
    platform = Platform.load(write(tmp_path, text))
    (part,) = platform.partitions
    assert (platform.default, platform.placement) == (0, "first_fit")
    assert (part.max_time, part.allocation, part.swf) == (math.inf, "exclusive", ())
    assert platform.describe() == "site: 2 nodes, 8 cores, 1 partitions"


def test_procs_is_one_core_nodes_in_one_exclusive_partition():
    platform = Platform.processors(5)
    assert platform.is_processors
    assert (platform.nodes, platform.total_cores, len(platform.partitions)) == (5, 5, 1)
    assert platform.partitions[0].allocation == "exclusive"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1-00:00:00", 86_400.0),
        ("2-12", 216_000.0),
        ("1:30:00", 5_400.0),
        ("90", 5_400.0),
        ("5:30", 330.0),
        ("UNLIMITED", math.inf),
    ],
)
def test_time_limits_take_slurm_syntax(text, expected):
    assert parse_duration(text) == expected


def swap(old: str, new: str) -> str:
    """GOOD with ``old`` replaced by ``new`` (exactly once)."""
    assert GOOD.count(old) == 1, old
    return GOOD.replace(old, new)


BAD = {
    "unknown top-level key": (swap('placement = "best_fit"', "colour = 1"), "colour"),
    "unknown node key": (swap("count = 400", "count = 400\ncolour = 1"), r"nodes\[0\]\.colour"),
    "unknown partition key": (
        swap('max_time = "30:00"', "colour = 1"),
        r"partitions\[2\]\.colour",
    ),
    "zero count": (swap("count = 400", "count = 0"), r"nodes\[0\]\.count"),
    "negative count": (swap("count = 40\n", "count = -40\n"), r"nodes\[1\]\.count"),
    "zero cores": (swap("cores = 64", "cores = 0"), r"nodes\[0\]\.cores"),
    "negative gpus": (swap("gpus = 4", "gpus = -1"), r"nodes\[1\]\.gpus"),
    "bad memory": (swap('memory = "256G"', 'memory = "lots"'), r"nodes\[0\]\.memory"),
    "no node": (swap('nodes = ["cpu"]', "nodes = []"), r"partitions\[0\]\.nodes"),
    "empty node text": (swap('nodes = ["cpu"]', 'nodes = ""'), r"partitions\[0\]\.nodes"),
    "unknown node type": (swap('nodes = ["cpu"]', 'nodes = ["tpu"]'), r"partitions\[0\]\.nodes"),
    "node out of range": (swap('"0-3,17"', '"0-3,440"'), r"partitions\[2\]\.nodes"),
    "reversed range": (swap('"0-3,17"', '"3-0"'), r"partitions\[2\]\.nodes"),
    "missing default": (
        swap('default_partition = "normal"', 'default_partition = "batch"'),
        "default_partition",
    ),
    "node type twice": (swap('type = "gpu"', 'type = "cpu"'), r"nodes\[1\]\.type"),
    "partition twice": (swap('name = "debug"', 'name = "gpu"'), r"partitions\[2\]\.name"),
    "max_time not a time": (
        swap('max_time = "30:00"', 'max_time = "forever"'),
        r"partitions\[2\]\.max_time",
    ),
    "max_time zero": (swap("max_time = 90", "max_time = 0"), r"partitions\[1\]\.max_time"),
    "max_time negative": (swap("max_time = 90", "max_time = -5"), r"partitions\[1\]\.max_time"),
    "max_time zero text": (
        swap('max_time = "30:00"', 'max_time = "0:00"'),
        r"partitions\[2\]\.max_time",
    ),
    "max_time not text": (swap("max_time = 90", "max_time = true"), r"partitions\[1\]\.max_time"),
    "bad allocation": (
        swap('allocation = "shared"', 'allocation = "packed"'),
        r"partitions\[1\]\.allocation",
    ),
    "bad placement": (swap('placement = "best_fit"', 'placement = "random"'), "placement"),
    "swf number twice": (
        swap('max_time = "30:00"', 'max_time = "30:00"\nswf = [2]'),
        r"partitions\[2\]\.swf",
    ),
    "negative swf number": (swap("swf = [1, 2]", "swf = [-1]"), r"partitions\[0\]\.swf"),
    "no partitions": (GOOD[: GOOD.index("[[partitions]]")], "partitions"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_file_names_the_file_and_the_key(tmp_path, case):
    text, key = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(PlatformError) as caught:
        Platform.load(path)
    message = str(caught.value)
    assert re.match(rf"{re.escape(str(path))}: {key}: \S", message), message
    assert "\n" not in message
    assert isinstance(caught.value, ConfigError)  # the CLI's one-line error, exit status 2


def test_the_bad_cases_tell_the_allowed_values(tmp_path):
    def message(text: str) -> str:
        with pytest.raises(PlatformError) as caught:
            Platform.load(write(tmp_path, text))
        return str(caught.value)

    assert "must be a whole number >= 1, got 0" in message(BAD["zero count"][0])
    assert "'tpu' is neither a node type (cpu, gpu) nor a range" in message(
        BAD["unknown node type"][0]
    )
    assert "'batch' is not a partition; one of normal, gpu, debug" in message(
        BAD["missing default"][0]
    )
    assert "the keys here are type, count, cores, gpus, memory" in message(
        BAD["unknown node key"][0]
    )
    assert "Slurm's syntax" in message(BAD["max_time not a time"][0])


def test_a_file_that_is_not_toml_or_absent_is_named(tmp_path):
    path = write(tmp_path, "nodes = [")
    with pytest.raises(PlatformError, match=rf"^{re.escape(str(path))}: not a TOML file"):
        Platform.load(path)
    missing = tmp_path / "none.toml"
    with pytest.raises(PlatformError, match=rf"^{re.escape(str(missing))}: cannot read"):
        Platform.load(missing)


# -- the shipped Curie platform ------------------------------------------------------------
def test_curie_is_the_machine_of_its_trace_header():
    curie = Platform.load(CURIE)
    assert curie.describe() == "curie: 5,544 nodes, 93,312 cores, 288 GPUs, 7 partitions"
    counts = {t.name: (t.count, t.cores, t.gpus, t.memory) for t in curie.node_types}
    assert counts == {
        "thin": (5040, 16, 0, 64 * 1024),
        "fat": (360, 32, 0, 128 * 1024),
        "hybrid": (144, 8, 2, 24 * 1024),
    }
    assert curie.partitions[curie.default].name == "standard"
    names = {curie.partitions[k].name: number for number, k in curie.swf_partitions().items()}
    assert names == {
        "standard": 10,
        "large": 4,
        "hybrid": 8,
        "BCS": 17,
        "TestIB": 5,
        "Unitaire": 11,
        "Burned": 12,
    }


def test_the_platform_files_ship_in_the_wheel():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["sitesim"]
    shipped = sorted((ROOT / "sitesim" / "data" / "platforms").glob("*.toml"))
    assert shipped
    for path in shipped:
        name = path.relative_to(ROOT / "sitesim").as_posix()
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


@pytest.mark.traces
def test_every_curie_job_fits_its_partition():
    """The header's sizes and partition names, and every job of the trace within the cores and
    max_time of its partition (SWF partition numbers in no ``swf`` list: the default)."""
    trace = read_swf(trace_path("CEA-Curie-2011-2.1-cln.swf.gz"))
    curie = Platform.load(CURIE)
    assert trace.header_value("MaxNodes") == f"{curie.nodes}"
    assert trace.header_value("MaxProcs") == f"{curie.total_cores}"
    header = dict(
        re.match(r";\s*Partition:\s*(\d+)\s+(.*?)\s*$", line).groups()  # type: ignore[union-attr]
        for line in trace.header
        if line.startswith("; Partition:")
    )
    mapping = curie.swf_partitions()
    assert {header[str(n)] for n in mapping} == {p.name for p in curie.partitions}
    where = np.array([mapping.get(int(n), curie.default) for n in trace.column("partition")])
    size = np.maximum(trace.column("procs"), trace.column("req_procs"))
    asked = trace.column("req_time")
    for k, part in enumerate(curie.partitions):
        rows = where == k
        assert rows.any(), part.name
        assert size[rows].max() <= curie.cores[list(part.nodes)].sum(), part.name
        assert asked[rows].max() <= part.max_time, part.name
