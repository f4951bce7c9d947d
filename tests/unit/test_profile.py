"""Workload profiles: building with equal trace weights, JSON, validation, the shipped one."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from sitesim.errors import ConfigError, SitesimError
from sitesim.workload.profile import WorkloadProfile, build_profile, default_profile, size_class
from sitesim.workload.swf import read_swf
from tests.conftest import TRACES, trace_path
from tests.unit.test_activity import trace

ROOT_TRACES = (
    "SDSC-SP2-1998-4.2-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz", "SDSC-Par-1996-3.1-cln.swf.gz",
)  # fmt: skip


def small_traces():  # type: ignore[no-untyped-def]
    """Trace A: 10 one-processor jobs, a 1-hour break after the fifth; trace B: 100
    four-processor jobs in pairs (batches of width 2). Requested time 60 s everywhere."""
    a = trace([(100 * i + 3600 * (i >= 5), 0, 10, 1, 1, 60) for i in range(10)])
    b = trace([(50 * (i // 2) + (i % 2), 0, 30, 4, 2, 60) for i in range(100)])
    return [a, b]


def test_each_trace_weighs_the_same():
    profile = build_profile(small_traces())
    assert profile.sizes.values.tolist() == [1, 4]
    assert np.allclose(profile.sizes.probabilities, [0.5, 0.5])  # not 10:100
    assert profile.batch_widths.values.tolist() == [1, 2]
    assert np.allclose(profile.batch_widths.probabilities, [0.5, 0.5])
    assert [s["jobs"] for s in profile.sources] == [10, 100]


def test_json_round_trip_is_exact(tmp_path):
    profile = build_profile(small_traces())
    profile.save(tmp_path / "p.json")
    again = WorkloadProfile.load(tmp_path / "p.json")
    assert json.dumps(again.to_dict()) == json.dumps(profile.to_dict())


def test_runtime_tables_by_size_class():
    assert size_class([1, 2, 3, 4, 5, 128, 129]).tolist() == [1, 2, 4, 4, 8, 128, 256]
    profile = default_profile()
    assert profile.runtime_table(3) is profile.runtimes_by_size[4]
    assert profile.runtime_table(100_000) is profile.runtimes  # no such class: overall


def negative_probabilities(dist):  # type: ignore[no-untyped-def]
    dist["probabilities"] = [-1.0] * len(dist["values"])


def shifted(dist, by):  # type: ignore[no-untyped-def]
    dist["x"] = [x + by if i == 0 else x for i, x in enumerate(dist["x"])]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="other"), "not a sitesim workload profile"),
        (lambda d: d.update(version=99), "profile version 99; this sitesim reads 1"),
        (lambda d: d["distributions"].pop("sizes"), "missing key 'sizes'"),
        (lambda d: d.update(daily=[1, 2]), "daily: expected 24 non-negative shares"),
        (lambda d: negative_probabilities(d["distributions"]["sizes"]),
         "distributions.sizes: probabilities must be >= 0"),
        (lambda d: d["distributions"].update(sizes=d["distributions"]["runtimes"]),
         "distributions.sizes: must be discrete, not 'quantiles'"),
        (lambda d: d.update(max_estimate=-5), "max_estimate: must be a number > 0, got -5"),
        (lambda d: d.update(max_estimate="long"), "max_estimate: must be a number > 0"),
        (lambda d: shifted(d["distributions"]["runtimes"], -100),
         "distributions.runtimes: values must be >= 0, found -100"),
        (lambda d: shifted(d["runtimes_by_size"]["1"], -5),
         "runtimes_by_size.1: values must be >= 0, found -5"),
        (lambda d: shifted(d["distributions"]["estimate_ratios"], -1e9),
         "distributions.estimate_ratios: values must be > 0"),
        (lambda d: d["distributions"]["runtimes"]["x"].reverse(),
         "distributions.runtimes: quantiles must not decrease"),
        (lambda d: d["distributions"]["runtimes"].update(x="abc"),
         "distributions.runtimes: "),
        (lambda d: d["distributions"]["batch_widths"].update(values=[0.5, 2], probabilities=[1, 1]),
         "distributions.batch_widths: values must be >= 1, found 0.5"),
        (lambda d: d.update(runtimes_by_size=[1, 2]), "runtimes_by_size: expected an object"),
        (lambda d: d.update(runtimes_by_size={"3": {}}),
         "runtimes_by_size: keys must be powers of two"),
        (lambda d: d.update(distributions="none"), "distributions: expected an object"),
        (lambda d: d["distributions"].update(breaks=7), "distributions.breaks: expected an object"),
    ],
)  # fmt: skip
def test_bad_profiles_get_clear_errors(tmp_path, edit, message):
    data = default_profile().to_dict()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as err:
        WorkloadProfile.load(path)
    assert str(err.value).startswith(str(path)) and message in str(err.value)


def test_a_compressed_or_binary_profile_is_refused_clearly(tmp_path):
    path = tmp_path / "p.json.gz"
    path.write_bytes(gzip.compress(b'{"format": "sitesim-profile"}'))
    with pytest.raises(ConfigError, match=r"p.json.gz: not a text file"):
        WorkloadProfile.load(path)


def test_a_missing_distribution_is_named():
    # jobs that never overlap: no batch is wider than 1, so no inter-submission time exists
    a = trace([(100 * i, 0, 10, 1, 1, 60) for i in range(10)])
    with pytest.raises(SitesimError, match=r"no samples of inter-submission times"):
        build_profile([a])


def test_unreadable_profiles(tmp_path):
    with pytest.raises(SitesimError, match="cannot read"):
        WorkloadProfile.load(tmp_path / "none.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        WorkloadProfile.load(tmp_path / "x.json")


def test_the_shipped_profile():
    profile = default_profile()
    assert [s["name"] for s in profile.sources] == list(ROOT_TRACES)
    assert profile.sources[0]["sha256"].startswith("e03fe48b")  # traces/README.md
    assert profile.machine_sizes == [128, 338, 100, 1152, 400]
    assert profile.sizes.mode == 1 and profile.batch_widths.mode == 1
    # the spec's description: width 1 dominates, width 2 around a tenth
    widths = profile.batch_widths
    p = dict(zip(widths.values.tolist(), widths.probabilities, strict=True))
    assert p[1] > 0.7 and 0.05 < p[2] < 0.15
    assert profile.think_short.x[0] > 0 and profile.think_short.x[-1] <= 1200
    assert profile.breaks.x[0] > 1200 and profile.breaks.x[-1] <= 8 * 3600
    assert profile.weekly[:5].sum() > 0.75  # weekdays


@pytest.mark.traces
def test_the_shipped_profile_is_what_the_build_script_makes():
    """scripts/build_default_profile.sh reproduces sitesim/data/default_profile.json."""
    for name in ROOT_TRACES:
        trace_path(name)
    rebuilt = build_profile([read_swf(TRACES / name) for name in ROOT_TRACES])
    assert json.dumps(rebuilt.to_dict()) == json.dumps(default_profile().to_dict())
