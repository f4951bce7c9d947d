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
          "utility_site", "microeconomic", "dynp", "maintenance", "fairshare",
          "rl_open_vs_closed"}  # fmt: skip


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
    assert load("open_vs_closed").main(["--quick", "--serial", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "compare.json").read_text())
    directions = {row["direction"] for row in data["runs"]}
    assert directions == {"EASY trace -> FCFS", "FCFS trace -> EASY"}
    assert len(data["runs"]) == 2 * 2 * 1 * 2  # directions x user counts x horizons x seeds
    assert all(row["error_wait_mean_min_pct"] >= 0 for row in data["runs"])
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"
    # the two-loop part: complete users with both loops and with session aborts off
    loops = json.loads((tmp_path / "loops.json").read_text())
    assert {(r["loops"], r["scheduler"]) for r in loops["runs"]} == {
        (loops_, s) for loops_ in ("both loops", "aborts off") for s in ("FCFS", "EASY")
    }
    assert len(loops["errors"]) == 2 * 2 * 2  # settings x directions x seeds
    _check_loop_split(loops["gains"], "throughput_per_h")
    assert {r["loops"] for r in loops["error_differences"]} == {"both loops"}


def _check_loop_split(gains: list, metric: str) -> None:  # type: ignore[type-arg]
    """Three rows, and the difference is that of the two gains (the same seeds in both)."""
    row = {r["loops"]: r for r in gains}
    assert set(row) == {"both loops", "aborts off", "difference"}
    assert all(r["n"] == 2 for r in gains)
    assert row["difference"][metric] == pytest.approx(
        row["both loops"][metric] - row["aborts off"][metric]
    )


def test_loop_split_pairs_by_seed():
    from sitesim.cli.scenario import loop_split

    throughput = {  # (loops, seed): (FCFS, EASY)
        ("both loops", 1): (2.0, 3.0), ("both loops", 2): (4.0, 5.0),
        ("aborts off", 1): (2.0, 2.5), ("aborts off", 2): (4.0, 4.4),
    }  # fmt: skip
    runs = [{"loops": loops, "seed": seed, "scheduler": name, "x": value}
            for (loops, seed), values in throughput.items()
            for name, value in zip(("FCFS", "EASY"), values, strict=True)]  # fmt: skip
    row = {r["loops"]: r for r in loop_split(runs, ["x"])}
    assert row["both loops"]["x"] == pytest.approx((50 + 25) / 2)  # +50 %, +25 %
    assert row["aborts off"]["x"] == pytest.approx((25 + 10) / 2)
    assert row["difference"]["x"] == pytest.approx((25 + 15) / 2)
    # paired: the per-seed differences are 25 and 15 points, t(1) = 12.706
    assert row["difference"]["x_ci95"] == pytest.approx(12.706 * 5, rel=1e-3)  # sd 5√2, n 2


def test_a_trace_replayed_under_its_own_scheduler_predicts_exactly():
    from sitesim.runs.config import SiteConfig
    from sitesim.sweeps.compare import ComparePoint, compare_point

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
    paired = data["fcfs_vs_easy"]  # FCFS against EASY, closed, per user count
    assert [r["level"] for r in paired] == [2, 6, 12]
    assert all(r["scheduler"] == "FCFS" and r["n"] == 2 for r in paired)
    assert len(list(tmp_path.glob("*.png"))) == 4


def test_feedback_replay_quick(tmp_path):
    data = quick("feedback_replay", tmp_path)
    assert data["early_submissions"] == 0  # never before the predecessor ended
    easy = next(r for r in data["runs"] if r["scheduler"] == "EASY")
    assert easy["jobs_moved"] == 0  # the trace's own scheduler: nothing moves


def test_teaching_demo_quick(tmp_path):
    demo = load("teaching_demo")
    assert demo.main(["--quick", "--out", str(tmp_path)]) == 0  # (no executor options)
    data = json.loads((tmp_path / "teaching_demo.json").read_text())
    assert set(data["hourly"]) == {"FCFS", "EASY"}
    assert len(data["hourly"]["EASY"]["hour"]) == 4 * 24
    hourly = (tmp_path / "hourly.csv").read_text().splitlines()
    assert hourly[0].startswith("scheduler,hour,") and len(hourly) == 1 + 2 * 4 * 24
    for name in ("timeline.png", "gantt.png", "lanes.png"):
        assert (tmp_path / name).stat().st_size > 10_000, name
    assert not (tmp_path / "animation.gif").exists()
    # the multi-seed part: 2 seeds x 2 p_cont settings x 2 schedulers
    assert len(data["runs"]) == 8 and data["seeds"] == [1, 2]
    assert {(r["loops"], r["scheduler"]) for r in data["means"]} == {
        (loops, s) for loops in ("both loops", "aborts off") for s in ("FCFS", "EASY")
    }
    _check_loop_split(data["gains"], "jobs")
    first = {
        r["scheduler"]: r for r in data["runs"] if r["seed"] == 1 and r["loops"] == "both loops"
    }
    assert [first[s]["jobs"] for s in ("FCFS", "EASY")] == [r["jobs"] for r in data["summary"]]
    for held in data["blocking"].values():
        assert all(j["size"] >= 64 and j["runtime_h"] >= 12 for j in held)


def test_teaching_demo_options(tmp_path, capsys):
    from PIL import Image

    demo = load("teaching_demo")
    argv = ["--quick", "--users", "6", "--days", "3", "--scheduler", "EASY,CONSERVATIVE",
            "--seeds", "1", "--animate", "--out", str(tmp_path)]  # fmt: skip
    assert demo.main(argv) == 0
    data = json.loads((tmp_path / "teaching_demo.json").read_text())
    assert (
        data["users"] == 6 and data["days"] == 3 and data["schedulers"] == ["EASY", "CONSERVATIVE"]
    )
    assert {r["scheduler"] for r in data["runs"]} == {"EASY", "CONSERVATIVE"}
    assert "CONSERVATIVE's gain over EASY" in capsys.readouterr().out
    with Image.open(tmp_path / "animation.gif") as gif:
        assert gif.n_frames == 3 * 8 + 1  # a frame every 3 simulated hours
    for bad, says in ((["--scheduler", "EASY"], "give two schedulers"), (["--animate"], "--out")):
        assert demo.main(["--quick", *bad]) == 2
        assert says in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the executor options are gone: the runs are small
        demo.main(["--quick", "--serial"])


def test_maintenance_quick(tmp_path):
    from sitesim.runs.config import SiteConfig
    from sitesim.runs.runner import run

    data = quick("maintenance", tmp_path)
    runs = data["runs"]
    assert len(runs) == 2 * 4 * 2  # closed and open x window lengths x seeds
    # over the whole run, drain included: no job ran during a window, none was requeued
    assert data["jobs_in_windows"] == {"closed": 0, "open": 0}
    assert data["jobs_requeued"] == {"closed": 0, "open": 0}
    assert "[downtime" not in (tmp_path / "maintenance-0h.toml").read_text()
    assert "[downtime" in (tmp_path / "maintenance-8h.toml").read_text()
    run_of = {(r["model"], r["window_h"], r["seed"]): r for r in runs}
    users, days, warmup = data["users"], data["days"], data["warmup_days"]
    for seed in data["seeds"]:
        # the 0-hour trace replayed on the 0-hour platform is its own run
        closed, open_ = run_of["closed", 0, seed], run_of["open", 0, seed]
        for metric in ("throughput_per_h", "wait_mean_min", "response_mean_min", "utilization"):
            assert open_[metric] == closed[metric], (seed, metric)
        # no [downtime]: the plain machine of --procs 128, bit for bit
        plain = run(SiteConfig(users=users, days=days, warmup_days=warmup, seed=seed, procs=128))
        assert plain.summary.wait_mean_min == closed["wait_mean_min"]
        # 8 hours a week down on every node, from time 0 to the horizon
        down = len(range(32, int(days * 24), 7 * 24)) * 8 / (days * 24)
        assert run_of["closed", 8, seed]["availability"] == pytest.approx(1 - down)
    # the open replay keeps every job of the trace at every window length
    opened = [r for r in data["changes"] if r["model"] == "open"]
    assert [r["throughput_per_h"] for r in opened] == [0.0, 0.0, 0.0]
    assert {r["window_h"] for r in data["gap"]} == {2, 4, 8}
    assert (tmp_path / "maintenance.png").exists()


def test_creasy_study_quick(tmp_path):
    data = quick("creasy_study", tmp_path)
    assert {"part1", "part2", "part3", "part4", "part5"} <= set(data)
    alphas = {row["alpha"] for row in data["part1"]["summary"]}
    assert alphas == {0, 1500, 3000, 4500, 6000}
    assert len(list(tmp_path.glob("part*.png"))) == 5
    assert {r["loops"] for r in data["part4"]["loops"]} == {"both loops", "aborts off",
                                                             "difference"}  # fmt: skip
    part5 = data["part5"]
    # three regimes; the thesis' session starts, the loops apart and clocked starts (a
    # sensitivity option) in the revisited, work-matched one
    kinds = {(r["regime"], r["session_starts"], r["loops"]) for r in part5["relative"]}
    assert kinds == {("work matched", "after_break", "both loops"),
                     ("work matched", "after_break", "aborts off"),
                     ("work matched", "clocked", "both loops"),
                     ("uncompressed", "after_break", "both loops"),
                     ("fitted", "after_break", "both loops")}  # fmt: skip
    assert {r["loops"] for r in part5["loops"]} == {"both loops", "aborts off", "difference"}
    residuals = part5["residuals"]["work matched"]
    shown = {(r["users"], r["metric"]) for r in residuals}
    assert shown >= {(50, "throughput_per_h"), (50, "batches_per_session")}
    assert {r["source"] for r in residuals} == {"ch. 2, CREASY", "ch. 5, EASY"}
    assert all("batches_per_session_rel_pct" in r for r in part5["relative"])


def test_creasy_thesis_calibration_quick(tmp_path):
    assert (
        load("creasy_study").main(
            ["--quick", "--serial", "--out", str(tmp_path), "--part", "5", "--calibrate"]
        )
        == 0
    )
    data = json.loads((tmp_path / "creasy.json").read_text())
    fits = data["part5_calibration"]["fits"]
    assert {f["session_starts"] for f in fits} == {"after_break", "scheduled"}
    clocked = data["part5_calibration"]["clocked"]
    assert 0.5 < clocked["start_gap_scale"] < 50.0 and clocked["target_throughput_per_h"] > 0
    assert all(0.02 < f["break_scale"] < 2.0 for f in fits)
    profile = json.loads((tmp_path / "thesis_profile.json").read_text())
    assert profile["settings"]["thesis_regime"]["max_width"] == 1


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
    check_cases(data["part1"])


def check_cases(part: dict) -> None:  # type: ignore[type-arg]
    """dynP's steps by case add up to its counters, and the deciders' case analysis is the
    specified one."""
    for row in part["runs"]:
        if row["scheduler"] != "DYNP":
            continue
        mine = [c for c in part["cases"] if c["variant"] == row["variant"]]
        assert sum(c["steps"] for c in mine) == row["scheduler_self_tuning_steps"]
        switched = sum(c["steps"] for c in mine if c["before"] != c["chosen"])
        assert switched == row["scheduler_policy_switches"]
        for case in mine:  # every decider picks one of the policies tied for the best
            assert case["chosen"] in case["best"].split("=")
    decisions = part["decisions"]
    assert len(decisions) == 7 * 3  # the sets of policies tied for the best x active policy
    for d in decisions:
        tied = d["best"].split("=")
        assert d["simple"] == tied[0]  # ties broken FCFS, then SJF, then LJF
        assert d["advanced"] == (d["current"] if d["current"] in tied else tied[0])
        if "SJF" in tied:
            assert d["SJF-preferred"] == "SJF"


def test_dynp_whole_ctc_quick(tmp_path):
    from tests.conftest import TRACES

    data = quick("dynp", tmp_path, "--part", "3")
    if not (TRACES / "CTC-SP2-1996-3.1-cln.swf.gz").exists():
        assert data == {}  # skipped, and said so
        return
    part = data["part3"]
    assert part["jobs"] == {"CTC-SP2": [0, 1500]}
    assert [r["variant"] for r in part["runs"]] == [
        "PLAN FCFS", "PLAN SJF", "PLAN LJF", "dynP SLDwA simple half", "dynP SLDwA simple full",
        "dynP SLDwA advanced half", "dynP SLDwA advanced full",
    ]  # fmt: skip
    assert len({r["jobs"] for r in part["runs"]}) == 1
    check_cases(part)
    assert "part1" not in data and "part2" not in data


def test_fairshare_quick(tmp_path):
    data = quick("fairshare", tmp_path)
    groups = ("heavy", "light", "all")
    configs = [tuple(c) for c in data["configs"]]
    assert len(configs) == 10 and configs[0] == (0, "-")
    assert {w for w, _ in configs} == {0, 1000, 10000, 100000}
    rows = [r for r in data["runs"] if r["unit"] in groups]
    assert len(rows) == 2 * 10 * 2 * 3  # closed and open x configurations x seeds x groups
    run_of = {(r["model"], r["unit"], r["weight"], r["half_life"], r["seed"]): r
              for r in data["runs"]}  # fmt: skip
    for seed in data["seeds"]:
        for unit in groups:
            # the weight-0 trace replayed under its own configuration is its own run
            closed, open_ = run_of["closed", unit, 0, "-", seed], run_of["open", unit, 0, "-", seed]
            for metric in ("jobs_per_hour", "wait_mean_min", "response_mean_min", "core_hours"):
                assert open_[metric] == closed[metric], (seed, unit, metric)
        for model in ("closed", "open"):
            for w, h in configs:  # every account in one group: the groups add up
                jobs = {u: run_of[model, u, w, h, seed]["jobs"] for u in groups}
                assert jobs["heavy"] + jobs["light"] == jobs["all"]
    # the open replay keeps every job of the trace, whatever the weight: its jobs an hour cannot
    # change; it has no sessions
    opened = [r for r in data["changes"] if r["model"] == "open"]
    assert len(opened) == 9 * (len(data["means"]) // 20)
    assert all(r["jobs_per_hour"] == 0.0 for r in opened)
    assert all(r["sessions"] is None for r in opened)  # NaN, written as null
    # the same jobs, the heavy accounts over their share: fairshare moves waiting onto them
    wait = {u: sum(r["wait_mean_min"] for r in opened if r["unit"] == u) for u in groups[:2]}
    assert wait["heavy"] > wait["light"]
    assert {(r["weight"], r["half_life"]) for r in data["gap"]} == set(configs[1:])
    assert (tmp_path / "fairshare.png").exists()


def test_rl_open_vs_closed_quick(tmp_path):
    from sitesim.gym.policies import LinearPriority

    data = quick("rl_open_vs_closed", tmp_path)
    runs = data["runs"]
    assert len(runs) == 4 * 2 * 2  # schedulers x (open replay, users in the loop) x seeds
    by = {(r["scheduler"], r["judged"], r["seed"]): r for r in runs}
    for seed in data["seeds"]:
        # EASY's own trace replayed under EASY predicts its run exactly
        easy = [
            by[("EASY", judged, seed)]["bsld_mean"]
            for judged in ("open replay", "users in the loop")
        ]
        assert easy[0] == easy[1]
        # an open replay fixes the throughput, whatever the scheduler
        names = ("EASY", "CREASY", "trained open", "trained closed")
        assert len({by[(n, "open replay", seed)]["throughput_per_h"] for n in names}) == 1
    changes = [r for r in data["bsld_advantage"] if r["judged"] == "change"]
    assert {r["scheduler"] for r in changes} == {"CREASY", "trained open", "trained closed"}
    assert {(p["mode"], p["replication"]) for p in data["policies"]} == {
        (mode, seed) for mode in ("open", "closed") for seed in data["seeds"]
    }
    for policy in data["policies"]:
        LinearPriority(policy["weights"])  # (9 weights, as the scheduler reads them)
    assert (tmp_path / "rl_open_vs_closed.png").read_bytes()[:4] == b"\x89PNG"
