"""Reading a site's Slurm configuration: slurm.conf and sacctmgr's ``--parsable2`` listings.

Slurm cannot run here, so the files under tests/data/slurm/ (and those written below) are
written by hand in the documented formats: slurm.conf(5) (slurm.conf.html: DESCRIPTION, NODE
CONFIGURATION, PARTITION CONFIGURATION, SchedulerParameters) and sacctmgr(1) (sacctmgr.html:
``-P, --parsable2``, ``-p``, ``-n``, the ``Tree`` option), with the column headers sacctmgr
prints. tests/data/slurm/README.md says which command each file stands for.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sitesim.errors import ConfigError
from sitesim.platform.values import format_nodes
from sitesim.schedulers.slurm import SLURM, SlurmConfigWarning
from sitesim.slurm.associations import AssociationError
from sitesim.slurm.conf import (
    QOS_COLUMNS,
    SlurmConfError,
    expand_hostlist,
    read_sacctmgr_assoc,
    read_sacctmgr_qos,
    read_slurm_conf,
)
from sitesim.workload.names import UserNumbers

DATA = Path(__file__).parents[1] / "data" / "slurm"

#: A minimal valid slurm.conf; the bad-input cases below change one line of it.
BASE = """\
NodeName=n[1-4] CPUs=8
PartitionName=p Nodes=n[1-4] Default=YES
"""


def write(tmp_path: Path, text: str, name: str = "slurm.conf") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- slurm.conf --------------------------------------------------------------------------------
def test_small_site_platform() -> None:
    conf = read_slurm_conf(DATA / "slurm.conf")
    platform = conf.platform
    assert platform is not None
    # Node types by distinct (CPUs, GPUs, memory), in the order of the NodeName lines; the
    # DEFAULT line gives cn*'s 2 x 16 cores, RealMemory in MB (NODE CONFIGURATION).
    assert [(t.name, t.count, t.cores, t.gpus, t.memory) for t in platform.node_types] == [
        ("cn[01-12],cn[13-16]", 16, 32, 0, 256_000),
        ("gpu[1-4]", 4, 32, 4, 512_000),
    ]
    parts = {p.name: p for p in platform.partitions}
    assert [p.name for p in platform.partitions] == ["batch", "gpu", "debug"]
    assert platform.partitions[platform.default].name == "batch"
    assert format_nodes(parts["batch"].nodes) == "0-15"
    assert format_nodes(parts["debug"].nodes) == "0-1,16"  # overlaps batch and gpu
    assert parts["batch"].max_time == 2 * 86_400
    assert parts["gpu"].max_time == 86_400  # from PartitionName=DEFAULT
    assert parts["debug"].max_time == 30 * 60  # a number is minutes
    # cons_tres: shared unless OverSubscribe=EXCLUSIVE; consumable resources -> best fit
    assert [p.allocation for p in platform.partitions] == ["exclusive", "shared", "shared"]
    assert platform.placement == "best_fit"
    assert conf.partition_factors == {"batch": 10, "gpu": 20, "debug": 100}


def test_small_site_settings_in_slurms_spelling() -> None:
    conf = read_slurm_conf(DATA / "slurm.conf")
    assert conf.settings == {
        "SchedulerType": "sched/backfill",
        "bf_window": "2880",
        "bf_resolution": "120",
        "bf_interval": "30",
        "bf_max_job_test": "1000",
        "default_queue_depth": "200",
        "bf_max_job_user": "20",
        "PriorityType": "priority/multifactor",
        "PriorityDecayHalfLife": "7-0",
        "PriorityCalcPeriod": "5",
        "PriorityMaxAge": "14-0",
        "PriorityWeightAge": "1000",  # written priorityweightage: keys are case-insensitive
        "PriorityWeightFairshare": "10000",
        "PriorityWeightJobSize": "500",
        "PriorityWeightPartition": "2000",
        "PriorityWeightQOS": "3000",
        "PriorityFlags": "SMALL_RELATIVE_TO_TIME",
    }


def test_unmodelled_keys_warned_once_each() -> None:
    conf = read_slurm_conf(DATA / "slurm.conf")
    where = f"{DATA / 'slurm.conf'}"
    assert conf.warnings == (
        f"{where}:3: ClusterName: not modelled by sitesim (ignored)",
        f"{where}:4: SlurmctldHost: not modelled by sitesim (ignored)",
        f"{where}:5: AuthType: not modelled by sitesim (ignored)",
        f"{where}:6: MpiDefault: not modelled by sitesim (ignored)",
        f"{where}:7: ProctrackType: not modelled by sitesim (ignored)",
        f"{where}:12: bf_continue: not modelled by sitesim (ignored)",
        f"{where}:28: State: not modelled by sitesim (ignored)",
        f"{where}:29: Weight: not modelled by sitesim (ignored)",
    )  # (AllowAccounts=ALL, PriorityTier=2 read: tests/model/test_slurm_partitions.py)


def test_include_linear_and_hostlists() -> None:
    conf = read_slurm_conf(DATA / "include.conf")
    platform = conf.platform
    assert platform is not None
    assert platform.nodes == 4 and platform.total_cores == 32
    # select/linear: whole nodes, nodes in order (first fit); Nodes=ALL
    assert platform.placement == "first_fit"
    assert platform.partitions[0].allocation == "exclusive"
    assert platform.partitions[0].nodes == (0, 1, 2, 3)
    assert conf.warnings == ()


def test_expand_hostlist() -> None:
    # slurm.conf(5), NODE CONFIGURATION: "linux[0-64,128]", "rack[0-63]_blade[0-41]", zeros
    assert expand_hostlist("tux[0-2,7],alpha") == ["tux0", "tux1", "tux2", "tux7", "alpha"]
    assert expand_hostlist("r[0-1]_b[08-09]") == ["r0_b08", "r0_b09", "r1_b08", "r1_b09"]
    assert expand_hostlist("linux[000-002]") == ["linux000", "linux001", "linux002"]
    for bad in ("n[1-4", "n1-4]", "n[4-1]", "n[a-b]", "n[[1]]", "a,,b"):
        with pytest.raises(ValueError):
            expand_hostlist(bad)


def test_future_nodes_are_not_available(tmp_path: Path) -> None:
    # slurm.conf(5), State: FUTURE nodes are defined for future use and not available: they
    # are left out of the platform and of the partitions, each line warned (issue 32)
    text = (
        "NodeName=n[1-4] CPUs=8\nNodeName=n[5-6] CPUs=8 State=future\n"
        "NodeName=DEFAULT State=FUTURE\nNodeName=g1 CPUs=16\n"
        "PartitionName=p Nodes=n[1-6],g1 Default=YES\nPartitionName=later Nodes=n[5-6],g1\n"
        "PartitionName=all Nodes=ALL\n"
    )
    path = write(tmp_path, text)
    conf = read_slurm_conf(path)
    assert conf.platform is not None
    assert conf.platform.nodes == 4 and conf.platform.total_cores == 32
    assert [(p.name, format_nodes(p.nodes)) for p in conf.platform.partitions] == [
        ("p", "0-3"),
        ("all", "0-3"),
    ]
    assert conf.warnings == (
        f"{path}:2: State=FUTURE: nodes n[5-6] left out (Slurm schedules no job on them)",
        f"{path}:4: State=FUTURE: nodes g1 left out (Slurm schedules no job on them)",
        f"{path}:6: Nodes: partition later has no nodes (left out)",
    )
    only_future = write(tmp_path, "NodeName=n1 CPUs=8 State=FUTURE\nPartitionName=p Nodes=n1\n")
    with pytest.raises(SlurmConfError, match=r"slurm.conf:2: PartitionName: every node is State"):
        read_slurm_conf(only_future)


def test_no_nodes_no_platform(tmp_path: Path) -> None:
    conf = read_slurm_conf(write(tmp_path, "PriorityWeightAge=10\n"))
    assert conf.platform is None and conf.settings == {"PriorityWeightAge": "10"}


def test_threads_and_memory_as_selection_counts_them(tmp_path: Path) -> None:
    text = "SelectTypeParameters=CR_Core\nNodeName=n[1-2] Sockets=2 CoresPerSocket=4 "
    text += "ThreadsPerCore=2 RealMemory=1000\nPartitionName=p Nodes=ALL\n"
    conf = read_slurm_conf(write(tmp_path, text))
    assert conf.platform is not None
    node = conf.platform.node_types[0]
    assert (node.cores, node.memory) == (16, 0)  # CPUs = 2 x 4 x 2; CR_Core: no memory
    assert any("ThreadsPerCore: 2 threads a core" in w for w in conf.warnings)
    assert any("RealMemory: not modelled" in w for w in conf.warnings)


@pytest.mark.parametrize(
    ("line", "key", "problem"),
    [
        ("NodeName", "NodeName", "not a Key=Value pair"),
        ("NodeName=n[5-8 CPUs=8", "NodeName", "unbalanced brackets"),
        ("NodeName=n[5-8] CPUs=-8", "CPUs", "out of range"),
        ("NodeName=n[5-8] CPUs=many", "CPUs", "not a whole number"),
        ("NodeName=n[5-8] Gres=gpu:x", "Gres", "not gpu[:type]:count"),
        ("PartitionName=q Nodes=n[1-9]", "Nodes", "n5 is no node"),
        ("PartitionName=q Nodes=n1 MaxTime=soon", "MaxTime", "not a time"),
        ("PartitionName=q Nodes=n1 OverSubscribe=SOMETIMES", "OverSubscribe", "is not NO"),
        ("PartitionName=q Nodes=n1 PriorityJobFactor=-1", "PriorityJobFactor", "out of range"),
        ("PartitionName=p Nodes=n1", "PartitionName", "defined twice"),
        ("PriorityWeightAge=-5", "PriorityWeightAge", "out of range"),
        ("PriorityWeightFairshare=lots", "PriorityWeightFairshare", "not a whole number"),
        ("PriorityWieghtAge=5", "PriorityWieghtAge", "unknown Priority key"),
        ("PriorityDecayHalfLife=aweek", "PriorityDecayHalfLife", "not a time"),
        ("PriorityDecayHalfLife=a week", "week", "not a Key=Value pair"),
        ("PriorityWeightTRES=CPU=1,billing=2", "PriorityWeightTRES", "over cpu, mem"),
        ("SchedulerParameters=bf_window=-1", "bf_window", "out of range"),
        ("SchedulerParameters=bf_max_job_test=x", "bf_max_job_test", "not a whole number"),
        ("SchedulerParameters=bf_windw=10", "bf_windw", "unknown backfill parameter"),
        ("SchedulerParameters=bf_window", "bf_window", "needs a value"),
        ("SchedulerParameters=bf_window=1,bf_resolution=120", "bf_window", "shorter than"),
        ("SelectType=select/magic", "SelectType", "is not one of"),
        ('Reason="half', "Reason", "an unclosed quote"),
        ("Include other%c.conf", "Include", "modifiers"),
    ],
)
def test_bad_line_names_file_line_and_key(
    tmp_path: Path, line: str, key: str, problem: str
) -> None:
    path = write(tmp_path, BASE + line + "\n")
    with pytest.raises(SlurmConfError) as err:
        read_slurm_conf(path)
    message = str(err.value)
    assert message.startswith(f"{path}:3: {key}: "), message
    assert problem in message and "\n" not in message


def test_bf_resolution_over_the_default_window(tmp_path: Path) -> None:
    # bf_window is minutes (default 1440), bf_resolution seconds: 3600 s fits a day
    conf = read_slurm_conf(write(tmp_path, "SchedulerParameters=bf_resolution=3600\n"))
    assert conf.settings == {"bf_resolution": "3600"}


def test_include_missing_names_the_include_line(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "Include missing.conf\n")
    with pytest.raises(SlurmConfError, match=rf"^{path}:3: Include: cannot read"):
        read_slurm_conf(path)


def test_partition_without_nodes_is_left_out_and_said(tmp_path: Path) -> None:
    conf = read_slurm_conf(write(tmp_path, BASE + 'PartitionName=empty Nodes=""\n'))
    assert conf.platform is not None and len(conf.platform.partitions) == 1
    assert any("partition empty has no nodes" in w for w in conf.warnings)


# -- sacctmgr show assoc -----------------------------------------------------------------------
def test_assoc_tree_from_parent_column() -> None:
    table = read_sacctmgr_assoc(DATA / "assoc.txt")
    tree = table.associations
    assert dict(tree.accounts) == {
        "science": ("root", 60.0),
        "physics": ("science", 40.0),
        "chem": ("science", 20.0),
        "teaching": ("root", 10.0),
    }
    # users are the trace's numbers; the root account's root user is Slurm's uid 0, kept:
    # Fair Tree ranks it (issue 34)
    assert dict(tree.users) == {
        0: ("root", 1.0),
        1: ("physics", 1.0),
        2: ("physics", 2.0),
        3: ("chem", 1.0),
        4: ("teaching", 1.0),
    }
    assert table.default_qos == {2: "high"}
    where = DATA / "assoc.txt"
    assert table.warnings == (
        f"{where}:5: GrpTRES: not modelled by sitesim (ignored)",
        f"{where}:9: MaxJobs: not modelled by sitesim (ignored)",
        f"{where}:7: QOS: not modelled by sitesim (a user's jobs run under its Def QOS) (ignored)",
    )


def test_assoc_tree_option_gives_the_same_tree() -> None:
    by_column = read_sacctmgr_assoc(DATA / "assoc.txt")
    by_indent = read_sacctmgr_assoc(DATA / "assoc_tree.txt")
    assert by_indent.associations == by_column.associations
    assert by_indent.default_qos == by_column.default_qos


HEAD = "Account|User|Share|Def QOS|ParentName\n"


@pytest.mark.parametrize(
    ("rows", "key", "problem"),
    [
        ("a||1||root\na|alice|1||\n", "User", "'alice' is a name, and the trace's users are"),
        # (a name ending in a number is no number: user004 is not user 4, issue 32)
        ("a||1||root\na|user004|1||\n", "User", "give the mapping that numbered them"),
        ("a||lots||root\n", "Share", "not a whole number"),
        ("a||1||root\na|1|1|\n", "4", "fields where the header has 5"),
        ("a||1||root\na|1|1||\na|01|1||\n", "User", "are both sitesim user 1"),
    ],
)
def test_bad_assoc_row(tmp_path: Path, rows: str, key: str, problem: str) -> None:
    path = write(tmp_path, HEAD + rows, "assoc.txt")
    with pytest.raises(SlurmConfError) as err:
        read_sacctmgr_assoc(path)
    message = str(err.value)
    last = len(rows.splitlines()) + 1
    assert message.startswith(f"{path}:{last}: {key}"), message
    assert problem in message


def test_assoc_cycle_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "a||1||b\nb||1||a\n", "assoc.txt")
    with pytest.raises(AssociationError, match=rf"^{path}: account a: a cycle: a -> b -> a"):
        read_sacctmgr_assoc(path)


def test_assoc_user_in_two_accounts_without_default(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "a||1||root\nb||1||root\na|7|1||\nb|7|1||\n", "assoc.txt")
    with pytest.raises(AssociationError, match=rf"^{path}: user 7: in accounts a, b with no"):
        read_sacctmgr_assoc(path)


def test_assoc_default_account_column(tmp_path: Path) -> None:
    text = "Account|User|Share|ParentName|Def Acct\na||1|root|\nb||1|root|\n"
    text += "a|7|1||b\nb|7|3||b\n"
    table = read_sacctmgr_assoc(write(tmp_path, text, "assoc.txt"))
    assert dict(table.associations.users) == {7: ("b", 3.0)}


def test_assoc_without_parents_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "Account|User|Share\nroot||1\na||1\na|1|1\n", "assoc.txt")
    with pytest.raises(SlurmConfError, match=rf"^{path}: ParentName: no column"):
        read_sacctmgr_assoc(path)


def test_assoc_parsable_and_two_clusters(tmp_path: Path) -> None:
    # --parsable: a '|' at the end of every line
    text = "Cluster|Account|User|Share|ParentName|\nc|a||1|root|\nc|a|1|1||\n"
    assert read_sacctmgr_assoc(write(tmp_path, text, "p.txt")).associations.users == {1: ("a", 1.0)}
    two = "Cluster|Account|User|Share|ParentName\nc|a||1|root\nd|a|1|1|\n"
    with pytest.raises(SlurmConfError, match="Cluster: rows of clusters c, d"):
        read_sacctmgr_assoc(write(tmp_path, two, "two.txt"))


# -- a listing by name, through the mapping of a conversion (issue 32) -------------------------
#: What ``sitesim convert --mapping`` writes: users numbered by first submission, not by name.
NAMES = {"users": {"user007": 1, "user004": 2, "user001": 3}, "accounts": {"a": 1, "b": 2}}


def names(tmp_path: Path, data: object = NAMES) -> UserNumbers:
    return UserNumbers.load(write(tmp_path, json.dumps(data), "names.json"))


def test_assoc_names_are_read_through_the_conversions_mapping(tmp_path: Path) -> None:
    rows = "a||1||root\nb||1||root\na|user001|1||\na|user004|2||\nb|user007|1|high|\n"
    table = read_sacctmgr_assoc(write(tmp_path, HEAD + rows, "assoc.txt"), names(tmp_path))
    assert dict(table.associations.users) == {3: ("a", 1.0), 2: ("a", 2.0), 1: ("b", 1.0)}
    assert table.default_qos == {1: "high"}
    assert table.warnings == ()


def test_listed_users_without_jobs_are_kept_and_warned(tmp_path: Path) -> None:
    # as in Slurm, they are in the tree (Fair Tree ranks every user), under numbers of their own
    rows = "a||1||root\na|user001|1||\na|frank|1||\na|user004|1||\na|grace|1||\na|user007|1||\n"
    path = write(tmp_path, HEAD + rows, "assoc.txt")
    table = read_sacctmgr_assoc(path, names(tmp_path))
    assert sorted(table.associations.users) == [1, 2, 3, 4, 5]
    assert table.warnings == (
        f"{path}:4: User: 2 of the 5 users listed are not in {tmp_path / 'names.json'} (no job "
        "in the trace); kept in their accounts",
    )


def test_trace_users_in_no_account_are_warned(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "a||1||root\na|user004|1||\n", "assoc.txt")
    table = read_sacctmgr_assoc(path, names(tmp_path))
    assert table.warnings == (
        f"{tmp_path / 'names.json'}: 2 of the trace's 3 users are in no account of {path} "
        "(users 1, 3): each is charged to an account of its own under root with one share",
    )


def test_a_listing_none_of_whose_users_the_mapping_has_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "a||1||root\na|alice|1||\na|bob|1||\n", "assoc.txt")
    with pytest.raises(SlurmConfError, match=rf"^{path}: User: none of its 2 users is in "):
        read_sacctmgr_assoc(path, names(tmp_path))


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("{", "not a mapping file (JSON)"),
        ({"accounts": {"a": 1}}, "users: no table of user name -> number"),
        ({"users": {"a": 0}}, "users: no table of user name -> number"),
        ({"users": {"a": 1, "b": 1}}, "users: two names have one number"),
    ],
)
def test_bad_mapping_files_are_one_line(tmp_path: Path, data: object, problem: str) -> None:
    path = write(tmp_path, data if isinstance(data, str) else json.dumps(data), "names.json")
    with pytest.raises(ConfigError, match=rf"^{path}: ") as err:
        UserNumbers.load(path)
    assert problem in str(err.value)


# -- sacctmgr show qos -------------------------------------------------------------------------
def test_qos_table() -> None:
    table = read_sacctmgr_qos(DATA / "qos.txt")
    assert list(table.qos) == ["normal", "high", "long"]
    high = table.qos["high"]
    assert (high.priority, high.max_wall) == (100, 86_400)
    assert (high.max_jobs_per_user, high.max_submit_jobs_per_user) == (4, 10)
    assert dict(high.grp_tres) == {"cpu": 256, "gres/gpu": 8}
    assert dict(high.max_tres_per_user) == {"cpu": 64}
    assert table.qos["normal"].max_wall == math.inf
    where = DATA / "qos.txt"
    # sacctmgr's own defaults (GraceTime 00:00:00, PreemptMode cluster, UsageFactor 1) are
    # not settings; DenyOnLimit and UsageFactor 2 are
    assert table.warnings == (
        f"{where}:4: Flags: not modelled by sitesim (ignored)",
        f"{where}:4: UsageFactor: not modelled by sitesim (ignored)",
    )


def test_qos_noheader_takes_the_default_columns(tmp_path: Path) -> None:
    row = dict.fromkeys(QOS_COLUMNS, "") | {"Name": "x", "Priority": "5", "MaxJobsPU": "3"}
    path = write(tmp_path, "|".join(row[c] for c in QOS_COLUMNS) + "\n", "qos.txt")
    qos = read_sacctmgr_qos(path).qos["x"]
    assert (qos.priority, qos.max_jobs_per_user) == (5, 3)


@pytest.mark.parametrize(
    ("row", "key", "problem"),
    [
        ("q|1||cpu=4,billing=3|", "GrpTRES", "unknown TRES 'billing'"),
        ("q|-1|||", "Priority", "out of range"),
        ("q|1|forever||", "MaxWall", "not a time"),
        ("q|1|||cpu=x", "MaxTRESPU", "is not a whole number"),
    ],
)
def test_bad_qos_row(tmp_path: Path, row: str, key: str, problem: str) -> None:
    path = write(tmp_path, "Name|Priority|MaxWall|GrpTRES|MaxTRESPU\n" + row + "\n", "q.txt")
    with pytest.raises(SlurmConfError) as err:
        read_sacctmgr_qos(path)
    assert str(err.value).startswith(f"{path}:2: {key}: "), str(err.value)
    assert problem in str(err.value)


# -- real configuration lines (issue 34): read, or warned with file and line ----------------
def test_priority_flags_slurm_documents_are_read_or_warned(tmp_path: Path) -> None:
    path = write(
        tmp_path, BASE + "PriorityFlags=SMALL_RELATIVE_TO_TIME,CALCULATE_RUNNING,MAX_TRES\n"
    )
    conf = read_slurm_conf(path)
    assert conf.settings["PriorityFlags"] == "SMALL_RELATIVE_TO_TIME"
    assert f"{path}:3: PriorityFlags=CALCULATE_RUNNING: not modelled by sitesim" in "\n".join(
        conf.warnings
    )
    assert any(w.startswith(f"{path}:3: PriorityFlags=MAX_TRES:") for w in conf.warnings)
    with pytest.warns(SlurmConfigWarning) as caught:
        slurm = SLURM(conf=str(path))  # (no longer an error naming no file or line)
    assert len(caught) == 2
    assert slurm.settings.flags == ("SMALL_RELATIVE_TO_TIME",)


def test_depth_oblivious_turns_fair_tree_off_as_in_slurm(tmp_path: Path) -> None:
    # read_config.c: DEPTH_OBLIVIOUS clears PRIORITY_FLAGS_FAIR_TREE
    conf = read_slurm_conf(write(tmp_path, BASE + "PriorityFlags=DEPTH_OBLIVIOUS\n"))
    assert conf.settings["PriorityFlags"] == "NO_FAIR_TREE"


def test_an_undocumented_priority_flag_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "PriorityFlags=NO_FAIRTREE\n")
    with pytest.raises(SlurmConfError, match=rf"^{path}:3: PriorityFlags: 'NO_FAIRTREE' is not"):
        read_slurm_conf(path)


def test_typed_gpu_weights_weigh_every_gpu(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "PriorityWeightTRES=CPU=10,GRES/gpu:a100=300,GRES/gpu:v100=100\n")
    conf = read_slurm_conf(path)
    assert conf.settings["PriorityWeightTRES"] == "CPU=10,GRES/gpu=300"
    assert any("sitesim's GPUs have no type" in w for w in conf.warnings)


def test_gres_with_socket_binding(tmp_path: Path) -> None:
    text = "NodeName=g[1-2] CPUs=8 Gres=gpu:a100:4(S:0-1),gpu:v100:2(S:0,1)\n"
    conf = read_slurm_conf(write(tmp_path, text + "PartitionName=p Nodes=g[1-2]\n"))
    assert conf.platform is not None and conf.platform.total_gpus == 12


def test_share_parent_is_warned_not_refused(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "a||1||root\na|1|parent||\na|2|1||\n", "assoc.txt")
    table = read_sacctmgr_assoc(path)
    assert dict(table.associations.users) == {1: ("a", 1.0), 2: ("a", 1.0)}
    assert table.warnings[0].startswith(f"{path}:3: Share: 'parent'")
