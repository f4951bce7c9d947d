"""Slurm's multifactor priority and the SLURM settings.

The numbers follow Slurm's priority/multifactor page (slurm.schedmd.com/priority_multifactor
.html): the sections "Age Factor", "Job Size Factor", "Partition Factor", "Quality of Service
(QOS) Factor", "TRES Factors" and the "Configuration Example" (PriorityDecayHalfLife=14-0,
PriorityMaxAge=14-0, PriorityFavorSmall=NO, PriorityWeightAge=1000,
PriorityWeightFairshare=10000, PriorityWeightJobSize=1000, PriorityWeightPartition=1000,
PriorityWeightQOS=0), and the job size factor as Slurm's ``set_priority_factors`` computes it
(the mean of the node and CPU fractions).
"""

from __future__ import annotations

import pytest

from sitesim.errors import ConfigError
from sitesim.slurm.multifactor import Multifactor, SlurmSettings

#: The page's "Configuration Example".
EXAMPLE = {
    "PriorityDecayHalfLife": "14-0",
    "PriorityMaxAge": "14-0",
    "PriorityFavorSmall": "NO",
    "PriorityWeightAge": "1000",
    "PriorityWeightFairshare": "10000",
    "PriorityWeightJobSize": "1000",
    "PriorityWeightPartition": "1000",
    "PriorityWeightQOS": "0",
}
DAY = 86_400.0


def example(nodes: int = 100, cores: int = 3200, **more: str) -> Multifactor:
    return Multifactor(SlurmSettings.build({**EXAMPLE, **more}), nodes, cores)


def test_the_configuration_example_reads_as_slurm_means_it() -> None:
    s = SlurmSettings.build(EXAMPLE)
    assert s.PriorityDecayHalfLife == 14 * DAY and s.PriorityMaxAge == 14 * DAY
    assert (s.PriorityWeightAge, s.PriorityWeightFairshare) == (1000, 10000)
    assert s.algorithm == "fair_tree"  # Slurm's default since 19.05
    # Slurm's defaults where the example says nothing
    assert s.PriorityCalcPeriod == 300 and s.bf_interval == 30 and s.bf_window == 1440 * 60
    assert s.bf_resolution == 60 and s.default_queue_depth == 100 and s.bf_max_job_test == 500


def test_age_factor_reaches_one_at_priority_max_age() -> None:
    # "Age Factor": the factor grows with the time pending and reaches 1.0 at PriorityMaxAge
    # (the example's comment: "after waiting in the queue for 2 weeks")
    mf = example()
    assert mf.age(0) == 0.0
    assert mf.age(7 * DAY) == pytest.approx(0.5)
    assert mf.age(14 * DAY) == 1.0 and mf.age(30 * DAY) == 1.0


def test_job_size_factor_favors_large_jobs_by_default() -> None:
    # "Job Size Factor": "A job that requests all the nodes on the machine will get a job size
    # factor of 1.0"; the factor is the mean of nodes/all nodes and CPUs/all CPUs
    mf = example()
    assert mf.job_size(100, 3200, 3600) == 1.0
    assert mf.job_size(1, 32, 3600) == pytest.approx((1 / 100 + 32 / 3200) / 2)
    assert mf.job_size(50, 1600, 3600) == pytest.approx(0.5)


def test_favor_small_gives_the_single_node_job_the_largest_factor() -> None:
    # PriorityFavorSmall=YES: "the single node job will receive the 1.0 job size factor"
    # (with Slurm's CPU term: the mean of the two complements, the largest for one node)
    mf = example(PriorityFavorSmall="YES")
    small, large = mf.job_size(1, 1, 3600), mf.job_size(100, 3200, 3600)
    assert small == pytest.approx(((100 - 1) / 100 + (3200 - 1) / 3200) / 2)
    assert large == 0.0 and small > mf.job_size(2, 64, 3600)


def test_small_relative_to_time_divides_the_size_by_the_time_limit() -> None:
    # PriorityFlags=SMALL_RELATIVE_TO_TIME: size (CPUs, at least nodes x mean CPUs a node) over
    # the time limit in minutes, over the machine's CPUs
    mf = example(PriorityFlags="SMALL_RELATIVE_TO_TIME")
    assert mf.job_size(100, 3200, 60) == 1.0  # the whole machine for one minute
    assert mf.job_size(1, 8, 600) == pytest.approx(32 / 10 / 3200)  # node's 32 CPUs, 10 min


def test_partition_and_qos_factors_are_normalized_by_the_largest() -> None:
    # "Partition Factor": PriorityJobFactor over the largest; "QOS Factor": Priority over the
    # largest QOS priority
    settings = SlurmSettings.build({**EXAMPLE, "PriorityWeightQOS": "500"})
    mf = Multifactor(
        settings, 100, 3200, partition_factors={0: 1, 1: 10}, qos_priorities={"a": 20, "b": 5}
    )
    js, pf, qf, tres = mf.static_factors(1, 32, 0, 0, 3600, 0, "b")
    assert (pf, qf, tres) == (0.1, 0.25, 0.0)
    assert mf.static_part(js, pf, qf, tres) == pytest.approx(1000 * js + 1000 * 0.1 + 500 * 0.25)


def test_tres_factor_is_the_share_of_the_partition_asked() -> None:
    # "TRES Factors": each TRES's factor is the job's request over the partition's total
    settings = SlurmSettings.build({"PriorityWeightTRES": "CPU=1000,GRES/gpu=3000"})
    totals = {0: {"CPU": 400.0, "GRES/GPU": 8.0, "NODE": 10.0, "MEM": 0.0}}
    mf = Multifactor(settings, 10, 400, partition_tres=totals)
    *_, tres = mf.static_factors(2, 100, 4, 0, 3600, 0, "normal")
    assert tres == pytest.approx(1000 * 100 / 400 + 3000 * 4 / 8)


def test_the_priority_is_the_whole_weighted_sum() -> None:
    mf = example()
    js, pf, qf, tres = mf.static_factors(50, 1600, 0, 0, 3600, 0, "normal")
    static = mf.static_part(js, pf, qf, tres)
    # a week pending (age 0.5), fairshare 0.25: 1000*0.5 + 10000*0.25 + 1000*0.5 = 3500
    assert mf.priority(static, 7 * DAY, 0.25) == 3500
    assert isinstance(mf.priority(static, 1.0, 0.123456), int)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"PriorityWeightAge": "-1"}, "PriorityWeightAge: must be a whole number >= 0"),
        ({"PriorityWeightAgee": "1"}, "unknown setting 'PriorityWeightAgee'"),
        ({"bf_window": "0.5", "bf_resolution": "60"}, "bf_window: must be a number of minutes"),
        ({"bf_window": "1", "bf_resolution": "120"}, "bf_window (1 min) is shorter than"),
        ({"PriorityFavorSmall": "maybe"}, "PriorityFavorSmall: must be YES or NO"),
        ({"PriorityUsageResetPeriod": "HOURLY"}, "must be one of NONE, NOW, DAILY"),
        ({"PriorityFlags": "MAX_TRES"}, "flag 'MAX_TRES' is not modelled"),
        ({"PriorityMaxAge": "two weeks"}, "PriorityMaxAge: 'two weeks' is not a time"),
        ({"PriorityWeightTRES": "CPU=1000,Disk=3"}, "PriorityWeightTRES: 'Disk=3' is not"),
        ({"default_queue_depth": "0"}, "default_queue_depth: must be a whole number >= 1"),
    ],
)
def test_bad_settings_name_the_key_and_the_allowed_values(
    given: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=r"^SLURM: ") as err:
        SlurmSettings.build(given)
    assert message in str(err.value)


def test_changed_settings_are_stored_in_slurms_units() -> None:
    s = SlurmSettings.build({"bf_window": 2880, "PriorityMaxAge": "1-0", "bf_interval": 0})
    assert s.changed() == {"PriorityMaxAge": "1-00:00:00", "bf_interval": 0.0, "bf_window": 2880}
    assert SlurmSettings.build(s.changed()) == s
