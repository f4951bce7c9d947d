"""A site described in its own terms: a TOML file beside the site's slurm.conf adds what Slurm
keeps elsewhere (partition shares for simulated users, maintenance windows)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sitesim.platform.values import PlatformError
from sitesim.runs.platforms import read_platform

OWN_SITE = Path(__file__).parents[2] / "docs" / "howto" / "own-site"


def test_the_conf_gives_nodes_and_partitions_the_toml_shares_and_downtime() -> None:
    beside, _ = read_platform(str(OWN_SITE / "site-slurm.toml"))
    conf, _ = read_platform(str(OWN_SITE / "slurm.conf"))
    assert beside.node_types == conf.node_types
    assert [(p.name, p.nodes, p.max_time, p.allocation) for p in beside.partitions] == [
        (p.name, p.nodes, p.max_time, p.allocation) for p in conf.partitions
    ]
    assert [p.share for p in beside.partitions] == [0.80, 0.15, 0.05]
    assert beside.downtime["maintenance"][0]["every"] == "7-00:00:00"
    assert beside.name == "site-slurm" and beside.default == conf.default


def test_its_identity_is_both_files(tmp_path: Path) -> None:
    for name in ("site-slurm.toml", "slurm.conf"):
        shutil.copy(OWN_SITE / name, tmp_path / name)
    _, before = read_platform(str(tmp_path / "site-slurm.toml"))
    with (tmp_path / "slurm.conf").open("a", encoding="utf-8") as conf:
        conf.write("# changed\n")
    _, after = read_platform(str(tmp_path / "site-slurm.toml"))
    assert before != after


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('slurm_conf = "slurm.conf"\n[[nodes]]\ntype = "n"\ncount = 1\ncores = 1\n',
         "site.toml: nodes: not a key beside slurm_conf"),
        ('slurm_conf = "other.conf"\n', "site.toml: slurm_conf: cannot read"),
        ('slurm_conf = 3\n', "site.toml: slurm_conf: must name a slurm.conf file"),
        ('slurm_conf = "slurm.conf"\n[shares]\nlong = 0.5\n',
         "site.toml: shares: long: no such partition in slurm.conf"),
        ('slurm_conf = "slurm.conf"\n[shares]\nbatch = -1\n',
         "site.toml: shares: batch: must be a number >= 0, got -1"),
        ('slurm_conf = "slurm.conf"\n[downtime]\nmaintenance = 3\n', "site.toml: .*maintenance"),
    ],
)  # fmt: skip
def test_bad_input_names_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    shutil.copy(OWN_SITE / "slurm.conf", tmp_path / "slurm.conf")
    (tmp_path / "site.toml").write_text(text, encoding="utf-8")
    with pytest.raises(PlatformError, match=message):
        read_platform(str(tmp_path / "site.toml"))
