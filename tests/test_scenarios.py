"""Every scenario's --quick mode runs in the tests; only robust directions are checked."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.conftest import trace_path

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, SCENARIOS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quick(name: str, out: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    """Run a scenario's --quick mode serially into ``out``; its JSON."""
    assert load(name).main(["--quick", "--serial", "--out", str(out), *extra]) == 0
    (found,) = out.glob("*.json")
    return json.loads(found.read_text())


TESTED = {"validate_users", "open_vs_closed", "violations", "load_curves", "feedback_replay",
          "teaching_demo", "creasy_study", "utility_lee_snavely", "utility_robustness",
          "utility_site", "microeconomic", "dynp"}  # fmt: skip


def test_every_scenario_is_tested():
    assert {p.stem for p in SCENARIOS.glob("*.py")} == TESTED


def test_validate_users_quick(tmp_path, capsys):
    assert load("validate_users").main(["--quick", "--out", str(tmp_path)]) == 0
    assert "KS vs profile" in capsys.readouterr().out
    data = json.loads((tmp_path / "validation.json").read_text())
    rows = data["static"]["distributions"]
    assert set(rows) == {
        "batch widths",
        "sizes",
        "runtimes",
        "inter-submission gaps",
        "think times",
    }
    # generous bounds for a short run: the long run's numbers are in docs/reference/users.md
    for name, row in rows.items():
        assert row["ks_vs_profile"] < max(3 * row["ks_noise_floor"], 0.1), name
    assert data["cycles"]["batch_starts_in_own_window"] == pytest.approx(1.0)


def test_open_vs_closed_quick(tmp_path):
    data = quick("open_vs_closed", tmp_path)
    directions = {row["direction"] for row in data["runs"]}
    assert directions == {"EASY trace -> FCFS", "FCFS trace -> EASY"}
    assert len(data["runs"]) == 2 * 2 * 1 * 2  # directions x user counts x horizons x seeds
    assert all(row["error_wait_mean_min_pct"] >= 0 for row in data["runs"])
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"


def test_a_trace_replayed_under_its_own_scheduler_predicts_exactly():
    from sitesim.compare import ComparePoint, compare_point
    from sitesim.config import SiteConfig

    site = SiteConfig(model="static", users=5, days=10, warmup_days=1)
    rows = compare_point(ComparePoint(site, "EASY", "EASY"))
    assert isinstance(rows, list)
    for row in rows:
        for metric in ("response_mean_min", "wait_mean_min", "slowdown_mean"):
            assert row[f"error_{metric}_pct"] == 0.0


def test_violations_quick(tmp_path):
    data = quick("violations", tmp_path)
    assert data["site_level_clean"]  # none in site-level runs, by construction
    rows = data["summary"]
    for source in ("FCFS", "EASY"):
        fcfs = {
            r["load"]: r for r in rows if r["trace_of"] == source and r["replayed_under"] == "FCFS"
        }
        low, high = min(fcfs), max(fcfs)
        assert fcfs[high]["submission_violations"] > fcfs[low]["submission_violations"]
        assert all(r["ordering_violations"] == 0 for r in fcfs.values())  # FCFS keeps order


def test_load_curves_quick(tmp_path):
    data = quick("load_curves", tmp_path)
    models = {(r["model"], r["scheduler"]) for r in data["summary"]}
    assert models == {(m, s) for m in ("closed", "open") for s in ("FCFS", "EASY")}
    assert len(list(tmp_path.glob("*.png"))) == 4


def test_feedback_replay_quick(tmp_path):
    data = quick("feedback_replay", tmp_path)
    assert data["early_submissions"] == 0  # never before the predecessor ended
    easy = next(r for r in data["runs"] if r["scheduler"] == "EASY")
    assert easy["jobs_moved"] == 0  # the trace's own scheduler: nothing moves


def test_teaching_demo_quick(tmp_path):
    data = quick("teaching_demo", tmp_path)
    assert set(data["hourly"]) == {"FCFS", "EASY"}
    assert len(data["hourly"]["EASY"]["hour"]) == 4 * 24
    assert (tmp_path / "timeline.png").exists()


def test_creasy_study_quick(tmp_path):
    data = quick("creasy_study", tmp_path)
    assert {"part1", "part2", "part3", "part4"} <= set(data)
    alphas = {row["alpha"] for row in data["part1"]["summary"]}
    assert alphas == {0, 1500, 3000, 4500, 6000}
    assert len(list(tmp_path.glob("part*.png"))) == 4


def _same_jobs_for_every_scheduler(runs, keys):  # type: ignore[no-untyped-def]
    """In an open replay every scheduler gets the same jobs with the same true functions."""
    possible: dict[tuple, set] = {}  # type: ignore[type-arg]
    for row in runs:
        possible.setdefault(tuple(row[k] for k in keys), set()).add(row["utility_possible"])
    assert all(len(values) == 1 for values in possible.values())


def test_utility_lee_snavely_quick(tmp_path):
    trace_path("SDSC-BLUE-2000-4.2-cln.swf.gz")
    data = quick("utility_lee_snavely", tmp_path)
    runs = data["runs"]
    assert {r["scheduler"] for r in runs} == {"EASY", "CONSERVATIVE", "PRIORITY", "GA"}
    assert all(r["utility_jobs"] > 250 for r in runs)
    assert all(r["competitive_ratio"] == 1.0 for r in runs if r["scheduler"] == "EASY")
    _same_jobs_for_every_scheduler(runs, ("setting", "seed"))
    baseline = {r["seed"]: r["utility_possible"] for r in runs if r["setting"] == "baseline"}
    assert len(set(baseline.values())) == 2  # each seed its own functions
    assert (tmp_path / "competitive_ratio.png").exists()
    # Lee & Snavely's load: the same jobs, arriving half as fast
    span = {r["setting"]: r["makespan_d"] for r in runs if r["scheduler"] == "EASY"}
    assert span["inter-arrival x 2, exact estimates"] > 1.3 * span["exact estimates"]


def test_utility_lee_snavely_setting_option(capsys):
    module = load("utility_lee_snavely")
    assert set(module.chosen_settings(True, None)) == set(module.QUICK_SETTINGS)
    chosen = module.chosen_settings(False, ["inter-arrival x 2", "baseline"])
    assert list(chosen) == ["baseline", "inter-arrival x 2"]  # in the settings' order
    assert chosen["inter-arrival x 2"] == {"scale": 2.0}
    with pytest.raises(SystemExit) as stopped:
        module.main(["--setting", "inter-arrival x 3"])
    assert stopped.value.code == 2
    assert "invalid choice: 'inter-arrival x 3'" in capsys.readouterr().err


def test_utility_robustness_quick(tmp_path):
    trace_path("SDSC-BLUE-2000-4.2-cln.swf.gz")
    data = quick("utility_robustness", tmp_path)
    load = {name: regime["offered_load"] for name, regime in data["regimes"].items()}
    assert load["extreme"] == pytest.approx(2 * load["loaded"]) and load["light"] < load["loaded"]
    runs = data["runs"]
    _same_jobs_for_every_scheduler(runs, ("regime", "seed"))
    # FCFS+EASY ignores the values users state: inaccuracy cannot change what it earns
    easy: dict[tuple, set] = {}  # type: ignore[type-arg]
    for row in runs:
        if row["scheduler"] == "FCFS+EASY":
            easy.setdefault((row["regime"], row["seed"]), set()).add(row["utility_total"])
    assert all(len(values) == 1 for values in easy.values())
    assert len(list(tmp_path.glob("*.png"))) == 2


def test_utility_robustness_other_trace_quick(tmp_path):
    trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")
    data = quick("utility_robustness", tmp_path, "--trace", "SDSC-SP2", "--seeds", "1")
    assert data["trace"] == "SDSC-SP2-1998-4.2-cln.swf.gz"
    assert {r["utilization"] <= 1.0 for r in data["runs"]} == {True}  # 128 processors, not 1,152
    _same_jobs_for_every_scheduler(data["runs"], ("regime", "seed"))


def test_utility_site_quick(tmp_path):
    data = quick("utility_site", tmp_path)
    labels = {r["scheduler"] for r in data["summary"]}
    assert labels == {"EASY", "CONSERVATIVE", "PRIORITY", "GA", "PRIO static", "PRIO demand",
                      "FIRSTPRICE"}  # fmt: skip
    assert all(r["competitive_ratio"] == 1.0 for r in data["runs"] if r["scheduler"] == "EASY")
    assert all(r["utility_jobs"] > 0 and r["throughput_per_h"] > 0 for r in data["runs"])
    kept = [r for r in data["runs"] if not r["cancel_expired"]]
    assert all(r["jobs_cancelled"] == 0 for r in kept)


def test_microeconomic_quick(tmp_path):
    data = quick("microeconomic", tmp_path)
    runs = data["runs"]
    policies = ("FCFS", "RES", "SCDF", "ECON_PROP", "ECON_CONST", "ECON_INV")
    assert len(runs) == 3 * len(policies) * 2  # loads x policies x seeds
    run = {(r["seed"], r["load"], r["policy"]): r for r in runs}
    seeds, loads = {r["seed"] for r in runs}, sorted({r["load"] for r in runs})
    assert set(run) == {(s, load, p) for s in seeds for load in loads for p in policies}
    for s in seeds:
        for p in policies:  # the same jobs, arriving faster: more work done
            utilization = [run[s, load, p]["utilization"] for load in loads]
            assert utilization == sorted(utilization), (s, p)
        for load in loads:  # FCFS idles processors behind a blocked head
            response = {p: run[s, load, p]["response_mean_min"] for p in policies}
            assert max(response, key=response.__getitem__) == "FCFS", (s, load)
        high = loads[-1]  # FCFS is near saturation: its head-of-line waits are the longest
        assert run[s, high, "RES"]["wait_max_min"] < run[s, high, "FCFS"]["wait_max_min"]
    assert all(r["scheduler_system_income"] > 0 for r in runs if r["scheduler"] == "ECON")
    assert (tmp_path / "config1.png").read_bytes()[:4] == b"\x89PNG"


def test_dynp_quick(tmp_path):
    from tests.conftest import TRACES

    data = quick("dynp", tmp_path)
    runs = data["part2"]["runs"]
    assert {r["variant"] for r in runs} == {
        "PLAN FCFS", "PLAN SJF", "dynP SLDwA advanced half", "dynP SLDwA advanced full",
        "dynP SLDwA simple half",
    }  # fmt: skip
    assert all(r["throughput_per_h"] > 0 and 0 < r["utilization"] <= 1 for r in runs)
    for row in runs:
        if row["scheduler"] == "DYNP":
            assert row["scheduler_policy_switches"] <= row["scheduler_self_tuning_steps"]
    if not any((TRACES / name).exists() for name in ("KTH-SP2-1996-2.1-cln.swf.gz",
                                                     "SDSC-SP2-1998-4.2-cln.swf.gz")):  # fmt: skip
        assert "part1" not in data  # skipped, and said so
        return
    replays = data["part1"]["runs"]
    assert len(replays) == 3 + 7 + 7  # basic policies, metrics, deciders x tuning (one shared)
    assert len({r["jobs"] for r in replays}) == 1  # the same jobs, all of them ended
    for row in replays:
        assert row["eval_SLDwA"] == pytest.approx(row["slowdown_area_weighted"])
        if row["scheduler"] == "DYNP":
            shares = sum(row[f"share_{p}"] for p in ("FCFS", "SJF", "LJF"))
            assert shares == pytest.approx(1.0)
            assert row["scheduler_policy_switches"] <= row["scheduler_self_tuning_steps"]
            if row["tuning"] == "half":  # a step per pass with submissions
                assert row["scheduler_self_tuning_steps"] <= row["jobs"]
    assert len(data["part1"]["diagonal"]) == 7
    assert len(list(tmp_path.glob("*.png"))) == 3
