"""A researcher's own scheduler and user factory, named by import path or handed as objects:
created, simulated, swept (on the process pool too), and rerun from their results.json."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import sitesim
from sitesim.cli.main import main
from sitesim.errors import ConfigError
from sitesim.runs.config import SiteConfig
from sitesim.schedulers import EASY, canonical_name, create, parameters
from sitesim.sweeps.sweep import SweepPlan, sweep
from tests.fairshare import FairEASY, population

FAIR = "tests.fairshare:FairEASY"
POPULATION = "tests.fairshare:population"
SHORT = {"days": 7, "warmup_days": 1}


def same_records(a: sitesim.SiteResult, b: sitesim.SiteResult) -> bool:
    return all(
        np.array_equal(a.records[name], b.records[name], equal_nan=True)
        for name in a.records.dtype.names
    )


def untimed(rows: list[dict]) -> str:  # type: ignore[type-arg]
    """The rows without wall times and the scheduler's column, as text (NaN equals NaN)."""
    drop = ("wall_s", "scheduler", "half_life")
    return json.dumps([{k: v for k, v in row.items() if k not in drop} for row in rows])


def test_a_scheduler_is_named_by_the_import_path_of_its_class():
    scheduler = create(FAIR, half_life=2)
    assert isinstance(scheduler, FairEASY) and scheduler.half_life == 2.0
    assert parameters(FAIR) == {"half_life"}
    assert canonical_name("sitesim.schedulers:EASY") == "EASY"  # a registered class by path
    config = SiteConfig(scheduler=FAIR, scheduler_params={"half_life": 2})
    assert (config.scheduler, config.scheduler_params) == (FAIR, {"half_life": 2})
    assert SiteConfig(scheduler=FAIR).scheduler_params == {"half_life": 24.0}  # the default
    assert config.replace(half_life=5).scheduler_params == {"half_life": 5}
    with pytest.raises(ConfigError, match=rf"scheduler {FAIR} does not take 'alpha'"):
        create(FAIR, alpha=1)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("FAIREASY", "unknown scheduler 'FAIREASY'; choose one of FCFS, EASY"),
        ("tests.no_such_module:X", "cannot import module tests.no_such_module"),
        ("tests.fairshare:Missing", "module tests.fairshare has no Missing"),
        (POPULATION, "is <function population"),
    ],
)
def test_a_scheduler_path_that_names_no_scheduler_is_refused(name, message):
    with pytest.raises(ConfigError, match=message):
        SiteConfig(scheduler=name)


def test_a_module_that_fails_while_imported_is_told_apart_from_a_missing_name(
    tmp_path, monkeypatch
):
    """An AttributeError that the module's own code raises while it is imported is that
    module's failure, not a name the module lacks."""
    (tmp_path / "broken_scheduler.py").write_text("import math\n\nmath.no_such_function\n")
    monkeypatch.syspath_prepend(tmp_path)
    with pytest.raises(ConfigError) as refused:
        SiteConfig(scheduler="broken_scheduler:FairEASY")
    assert str(refused.value) == (
        "scheduler broken_scheduler:FairEASY: importing module broken_scheduler failed: "
        "AttributeError: module 'math' has no attribute 'no_such_function'"
    )


def test_simulate_passes_run_settings_on_beside_a_scheduler_object():
    by_object = sitesim.simulate(6, FairEASY(), estimates="ratio", seed=2, **SHORT)
    by_path = sitesim.simulate(6, FAIR, estimates="ratio", seed=2, **SHORT)
    assert by_object.config is None  # an object that is not registered: not described
    assert by_path.config is not None and by_path.config.estimates == "ratio"
    assert by_path.config.scheduler == FAIR and same_records(by_object, by_path)
    assert same_records(by_path, sitesim.run(by_path.config))
    easy = sitesim.simulate(6, EASY(), estimates="ratio", utility=True, seed=2, **SHORT)
    assert easy.config == sitesim.simulate(6, "EASY", estimates="ratio", utility=True, seed=2,
                                           **SHORT).config  # fmt: skip
    assert easy.config is not None and easy.config.utility
    with pytest.raises(ConfigError, match="half_life: not a setting of simulate"):
        sitesim.simulate(6, FairEASY(), half_life=3, **SHORT)


def test_a_user_factory_from_a_module_is_named_by_its_import_path():
    result = sitesim.simulate(6, "EASY", model=population, seed=3, **SHORT)
    assert result.config is not None and result.config.model == POPULATION
    assert same_records(result, sitesim.run(result.config))
    assert same_records(result, sitesim.simulate(6, "EASY", model=POPULATION, seed=3, **SHORT))
    with pytest.raises(ConfigError, match="estimates is a setting of the built-in user models"):
        sitesim.simulate(6, "EASY", model=population, estimates="ratio", **SHORT)


def test_a_sweep_of_an_own_scheduler_by_path_with_its_parameter(tmp_path):
    factors = {"scheduler": ["EASY", FAIR], "half_life": [1, 48]}
    result = sweep(SiteConfig(users=6, **SHORT), factors, seeds=2, out=tmp_path,
                   executor="serial", save_jobs=False)  # fmt: skip
    assert [(r["scheduler"], r.get("half_life"), r["seed"]) for r in result.runs] == [
        ("EASY", None, 1), ("EASY", None, 2),
        (FAIR, 1, 1), (FAIR, 1, 2), (FAIR, 48, 1), (FAIR, 48, 2),
    ]  # fmt: skip
    stored = json.loads((tmp_path / "scheduler=tests.fairshare.FairEASY,half_life=48,seed=2"
                         / "results.json")
                        .read_text())["config"]  # fmt: skip
    assert (stored["scheduler"], stored["scheduler_params"]) == (FAIR, {"half_life": 48})


def test_a_sweep_file_names_an_own_scheduler(tmp_path, capsys):
    toml = tmp_path / "s.toml"
    toml.write_text(f'[base]\ndays = 7\nwarmup_days = 1\nusers = 4\n[factors]\n'
                    f'scheduler = ["EASY", "{FAIR}"]\n')  # fmt: skip
    assert (
        main(["sweep", str(toml), "--serial", "--results-only", "--out", str(tmp_path / "o")]) == 0
    )
    assert "2 of 2 runs complete" in capsys.readouterr().out


def test_scheduler_objects_and_factories_are_swept_each_run_with_a_fresh_copy(tmp_path):
    """On the process pool; the template objects are never run themselves."""
    template = FairEASY(half_life=48)
    base = SiteConfig(users=6, **SHORT)
    factors = {"scheduler": [template], "model": [population, "static"]}
    result = sweep(base, factors, seeds=2, out=tmp_path, executor="process", workers=2)
    assert not result.failed and len(result.runs) == 4
    assert template.usage == {} and template.queue == []
    named = sweep(base, {"scheduler": [FAIR], "half_life": [48], "model": [POPULATION, "static"]},
                  seeds=2, executor="serial")  # fmt: skip
    assert untimed(result.runs) == untimed(named.runs)
    folder = tmp_path / "scheduler=FAIREASY_half_life_48,model=tests.fairshare.population,seed=1"
    document = json.loads((folder / "results.json").read_text())
    assert document["config"] is None and document["sweep"]["custom"]["scheduler"] == FAIR
    again = sweep(base, factors, seeds=2, out=tmp_path, executor="serial")
    assert again.resumed == 4 and untimed(again.runs) == untimed(result.runs)


def test_a_factory_that_cannot_travel_is_refused_for_the_pool_but_runs_serially():
    def local(uid, profile, procs, seed):  # type: ignore[no-untyped-def]
        return population(uid, profile, procs, seed)

    plan = SweepPlan(SiteConfig(users=3, **SHORT), {"model": [local]})
    with pytest.raises(ConfigError, match="cannot be sent to the worker processes"):
        sweep(plan, executor="process")
    (row,) = sweep(plan, executor="serial").runs
    assert row["model"].endswith("local") and row["jobs"] > 0


def test_rerun_imports_a_module_only_when_allowed_and_says_which(tmp_path, capsys):
    out = tmp_path / "o"
    sweep(SiteConfig(users=4, **SHORT), {"scheduler": [FAIR]}, out=out, executor="serial")
    results = out / "scheduler=tests.fairshare.FairEASY,seed=1" / "results.json"  # (no ":")
    module = sys.modules.pop("tests.fairshare")
    try:
        assert main(["rerun", str(results)]) == 2
        assert "tests.fairshare" not in sys.modules  # refused before importing it
    finally:
        sys.modules["tests.fairshare"] = module
    err = capsys.readouterr().err
    assert f"module tests.fairshare (the scheduler {FAIR})" in err and "--allow-import" in err
    assert main(["rerun", str(results), "--allow-import"]) == 0
    printed = capsys.readouterr()
    assert f"importing module tests.fairshare for the scheduler {FAIR}" in printed.err
    assert "same summary as" in printed.out


def test_the_command_line_takes_a_scheduler_by_its_import_path(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["run", "--users", "3", "--days", "7", "--warmup", "1", "-s", f"EASY,{FAIR}"]
    assert main([*argv, "--param", "half_life=12", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "FAIREASY half_life=12" in table
    (results,) = out.glob("*FairEASY*/results.json")
    # a colon is not valid in a Windows file name: the import path's ":" becomes "."
    assert results.parent.name == "users-0003-tests.fairshare.FairEASY"
    config = json.loads(results.read_text())["config"]
    assert (config["scheduler"], config["scheduler_params"]) == (FAIR, {"half_life": 12.0})


class CountingEASY(EASY):
    """A researcher's EASY with its own select and backfill, counting their calls."""

    name = "COUNTING"

    def __init__(self) -> None:
        super().__init__()
        self.selects = self.backfills = 0

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        self.selects += 1
        return super().select(now, resources)

    def backfill(self, now, resources, queue, first, started):  # type: ignore[no-untyped-def]
        self.backfills += 1
        super().backfill(now, resources, queue, first, started)


def test_an_own_easy_keeps_its_logic_on_a_platform_and_gives_the_processors_schedule():
    """A subclass of EASY with its own select and backfill: both are called on a platform of
    nodes as on processors (the platform runs the scheduler's own logic, never a substitute),
    and on N one-core nodes it starts every job when it does on N processors."""
    from sitesim.engine.site import Site
    from sitesim.models.trace_user import TraceUser, TraceWorkload
    from sitesim.platform import Platform

    rng = np.random.default_rng(7)
    n = 200
    work = TraceWorkload.from_jobs(
        np.cumsum(rng.integers(0, 50, n)).tolist(),
        rng.integers(1, 17, n).tolist(),
        rng.integers(1, 900, n).tolist(),
        (rng.integers(1, 900, n) + 900).tolist(),
    )
    nodes = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 16, "cores": 1, "memory": 1}],
            "partitions": [{"name": "all", "nodes": ["n"]}],
        }
    )
    results = {}
    for machine in (16, nodes):
        scheduler = CountingEASY()
        site = Site(machine, scheduler)
        site.add_user(TraceUser(work))
        results[str(machine)] = (site.run(), scheduler)
    (procs, on_procs), (platform, on_nodes) = results.values()
    assert platform.platform is not None  # (it ran on the machine of nodes)
    assert on_nodes.selects > 50 and on_nodes.backfills > 20
    assert (on_nodes.selects, on_nodes.backfills) == (on_procs.selects, on_procs.backfills)
    assert np.array_equal(procs.records["start"], platform.records["start"])
