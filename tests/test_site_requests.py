"""Simulated users ask for what a site's jobs ask for (issue 34, item 4): a profile built from a
site's sacct log holds the request mix (partition, GPUs and memory per node, node features),
and a site-level run on a platform draws each job's request from it."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import sitesim
from sitesim.cli.main import main
from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.formats.traces import read_trace
from sitesim.platform.boundary import RequestsWarning
from sitesim.slurm.conf import expand_hostlist
from sitesim.workload.profile import WorkloadProfile, build_profile, default_profile
from sitesim.workload.request_mix import RequestClass, RequestMix

ROOT = Path(__file__).resolve().parents[1]
FEATURES = ROOT / "tests" / "data" / "slurm" / "features"
SITE = ROOT / "docs" / "howto" / "own-site"
#: The own-site cluster: cn01-16 are nodes 0-15, gpu1-4 nodes 16-19 (4 GPUs each).
GPU_NODES = set(range(16, 20))


def tiny_mix() -> RequestMix:
    trace = read_trace(FEATURES / "site.sacct")
    assert trace.requests is not None
    return RequestMix.fit([(trace.column("procs"), trace.requests)])


def test_the_mix_of_a_tiny_log_is_its_jobs_requests_per_size_class() -> None:
    mix = tiny_mix()
    assert mix.classes == (
        RequestClass("batch", 0, 16000, "intel"),
        RequestClass("batch", 0, 400000, "bigmem"),
        RequestClass("gpu", 4, 32000, "a100"),
        RequestClass("gpu", 2, 8000, "a100"),
        RequestClass("batch", 0, 64000, "intel"),
    )
    assert mix.overall.tolist() == [0.2] * 5
    # sizes 8, 16, 64, 8, 64: classes 8 and 64 have two jobs each
    assert sorted(mix.by_size) == [8, 16, 64]
    assert mix.by_size[8].tolist() == [0.5, 0, 0, 0.5, 0]
    assert mix.by_size[64].tolist() == [0, 0, 0.5, 0, 0.5]
    assert mix.table(5).probabilities.tolist() == [0.5, 0, 0, 0.5, 0]  # (size 5: class 8)
    assert mix.table(2).probabilities.tolist() == [0.2] * 5  # (no job of class 2: overall)
    assert mix.share(lambda c: c.gpus_per_node > 0) == pytest.approx(0.4)


def test_traces_weigh_the_same_and_a_swf_trace_asks_for_nothing_more() -> None:
    trace = read_trace(FEATURES / "site.sacct")
    assert trace.requests is not None
    plain = dataclasses.replace(trace, requests=None)
    profile_mix = RequestMix.fit(
        [(trace.column("procs"), trace.requests), (plain.column("procs"), _nothing(len(plain)))]
    )
    assert profile_mix.classes[-1] == RequestClass()
    assert profile_mix.overall[-1] == pytest.approx(0.5)


def _nothing(n: int):  # type: ignore[no-untyped-def]
    from sitesim.workload.requests import JobRequests

    return JobRequests.empty(n)


def test_a_profile_keeps_its_mix_and_one_without_loads_as_before(tmp_path: Path) -> None:
    old = default_profile()
    assert old.requests is None and "requests" not in old.to_dict()
    new = dataclasses.replace(old, requests=tiny_mix())
    new.save(tmp_path / "p.json")
    back = WorkloadProfile.load(tmp_path / "p.json")
    assert back.requests is not None
    assert back.requests.classes == new.requests.classes  # type: ignore[union-attr]
    assert back.to_dict() == new.to_dict()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda r: r.update(classes=[]), r"requests\.classes: expected a list"),
        (lambda r: r["classes"][0].update(gpus_per_node=-1), r"classes\[0\]\.gpus_per_node"),
        (lambda r: r["classes"][0].update(cores=2), r"unknown key 'cores'"),
        (lambda r: r.update(overall=[1.0]), r"requests\.overall: expected 5 non-negative"),
        (lambda r: r["by_size"].update({"3": [1] * 5}), r"powers of two"),
    ],
)
def test_a_bad_mix_names_its_entry(tmp_path: Path, change, problem) -> None:  # type: ignore[no-untyped-def]
    data = dataclasses.replace(default_profile(), requests=tiny_mix()).to_dict()
    change(data["requests"])
    with pytest.raises(ConfigError, match=problem):
        WorkloadProfile.from_dict(json.loads(json.dumps(data)), where="p.json")


@pytest.fixture(scope="module")
def site_profile() -> WorkloadProfile:
    return build_profile([read_trace(SITE / "site.sacct.gz")])


def site_run(profile: WorkloadProfile, seed: int = 1, **settings) -> SiteResult:  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return sitesim.simulate(
            12, "EASY", profile=profile, days=7, warmup_days=1, seed=seed,
            platform=str(SITE / "slurm.conf"), **settings,
        )  # fmt: skip


def test_a_site_run_from_a_site_profile_places_gpu_jobs_on_gpu_nodes(
    site_profile: WorkloadProfile,
) -> None:
    result = site_run(site_profile)
    table, nodes = result.placement.table, result.placement.nodes  # type: ignore[union-attr]
    gpu_jobs = np.flatnonzero(table["gpus"] > 0)
    assert len(gpu_jobs) > 20
    for row in gpu_jobs.tolist():
        assert {int(n[2:]) for n in expand_hostlist(f"xx[{nodes[row]}]")} <= GPU_NODES
    assert result.platform_stats["gpu_utilization"] > 0
    parts = {str(r["partition"]): r for r in result.per_partition}  # type: ignore[union-attr]
    assert parts["gpu"]["jobs"] > 0 and np.isfinite(parts["gpu"]["wait_mean_min"])
    assert parts["gpu"]["gpu_utilization"] == pytest.approx(
        result.platform_stats["gpu_utilization"]
    )  # (every GPU is in partition gpu)
    assert parts["batch"]["gpus"] == 0


def test_the_same_seed_gives_the_same_records_and_draws_stay_apart(
    site_profile: WorkloadProfile,
) -> None:
    first, again = site_run(site_profile), site_run(site_profile)
    assert first.records.tobytes() == again.records.tobytes()  # (NaN fields too)
    assert first.placement.table.tobytes() == again.placement.table.tobytes()  # type: ignore[union-attr]
    assert site_run(site_profile, seed=2).records.tobytes() != first.records.tobytes()
    # a mix that asks for nothing more draws from its own stream: every other draw is as
    # without a mix, so the run is the run of the profile without one
    old = default_profile()
    nothing = RequestMix((RequestClass(),), np.ones(1), {})
    plain = site_run(old)
    drawn = site_run(dataclasses.replace(old, requests=nothing))
    assert len(plain.records) > 50 and plain.records.tobytes() == drawn.records.tobytes()


def test_constrained_and_big_memory_jobs_go_to_nodes_that_have_them() -> None:
    profile = dataclasses.replace(default_profile(), requests=tiny_mix())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RequestsWarning)
        result = sitesim.simulate(
            6, "EASY", profile=profile, days=7, warmup_days=0,
            platform=str(FEATURES / "slurm.conf"),
        )  # fmt: skip
    # nodes: cpu1-4 (0-3), big1 (4, bigmem), gpu1-2 (5-6, a100, 4 GPUs)
    table, nodes = result.placement.table, result.placement.nodes  # type: ignore[union-attr]
    where = [{int(n) for n in expand_hostlist(f"[{text}]")} if text else set() for text in nodes]
    held = [(int(t["gpus"]), int(t["memory"]), int(t["nodes"])) for t in table]
    big = [w for w, (_, memory, n) in zip(where, held, strict=True) if n and memory / n > 128000]
    gpu = [w for w, (gpus, _, _) in zip(where, held, strict=True) if gpus]
    assert big and all(w == {4} for w in big)
    assert gpu and all(w <= {5, 6} for w in gpu)
    assert result.platform_stats["gpu_utilization"] > 0
    # each partition's memory utilization: what its jobs held of its own memory (the two
    # partitions share no node, so together they are the platform's)
    parts = result.per_partition
    assert parts is not None and [int(r["memory_mb"]) for r in parts] == [4 * 64000 + 512000,
                                                                           2 * 128000]  # fmt: skip
    assert all(r["memory_utilization"] > 0 for r in parts)
    held = sum(float(r["memory_utilization"] * r["memory_mb"]) for r in parts)
    total = result.platform_stats["memory_utilization"] * sum(int(r["memory_mb"]) for r in parts)
    assert held == pytest.approx(total)


def test_a_gpu_platform_without_gpu_requests_warns_once(site_profile: WorkloadProfile) -> None:
    with pytest.warns(RequestsWarning) as caught:
        sitesim.simulate(2, "EASY", days=1, warmup_days=0, platform=str(SITE / "slurm.conf"))
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1 and "16 GPUs and no job of the simulated users will ask" in texts[0]
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        sitesim.simulate(
            2, "EASY", days=1, warmup_days=0, profile=site_profile,
            platform=str(SITE / "slurm.conf"),
        )  # fmt: skip
    assert not [w for w in quiet if issubclass(w.category, RequestsWarning)]


def test_partitions_the_platform_has_not_are_refused_and_counted(
    site_profile: WorkloadProfile,
) -> None:
    with pytest.warns(RequestsWarning, match=r"ask for partitions .* has not \(debug;"):
        result = sitesim.simulate(
            12, "EASY", days=3, warmup_days=0, profile=site_profile,
            platform=str(FEATURES / "slurm.conf"),
        )  # fmt: skip
    assert result.rejected.get("unknown partition", 0) > 0


def test_the_profile_command_reads_a_sacct_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site.json"
    assert main(["profile", str(SITE / "site.sacct.gz"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "GPUs/node" in printed and "gpu " in printed
    mix = WorkloadProfile.load(out).requests
    assert mix is not None and mix.share(lambda c: c.gpus_per_node > 0) > 0
    run = tmp_path / "run"
    argv = ["run", "--users", "8", "--days", "3", "--warmup", "0", "--profile", str(out)]
    argv += ["--platform", str(SITE / "slurm.conf"), "--out", str(run)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "GPU.Util" in printed
    (partitions,) = run.rglob("partitions.csv")
    header = partitions.read_text().splitlines()[0]
    assert header.endswith(
        "wait_mean_min,response_mean_min,slowdown_mean,bsld_mean,"
        "core_utilization,gpus,gpu_utilization,memory_mb,memory_utilization"
    )
