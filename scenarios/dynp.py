"""Experiment 7: Streit's self-tuning dynP against the planning-based FCFS, SJF and LJF.

Part 1, real traces with the users' estimates (CTC-SP2, KTH-SP2, LANL-CM5 and SDSC-SP2 from
../shared/traces, those present; CTC-SP2 only its first 20,000 job lines, as replaying it whole
17 times does not fit the budget), replayed open: the planning-based FCFS, SJF and LJF; dynP
with each of the seven self-tuning metrics (advanced decider, half self-tuning); the simple,
advanced, SJF-preferred and FCFS-preferred deciders with half and full self-tuning (metric
SLDwA). Replays are deterministic: one run each. Reported per trace and variant: SLDwA (the
evaluation metric), utilization, the seven metrics measured on the actual schedule (to see
whether tuning for a metric is best for it), and dynP's switching statistics (self-tuning
steps, policy switches, share of jobs started under each policy), and each dynP replay's
self-tuning steps by case (the policies tied for the best plan, the active policy before the
step, the one chosen) beside the deciders' case analysis (which policy each decider picks in
each case, from the rules of schedulers.md). Part 2, the same in
site-level runs: complete users (the shipped profile, 40 users on 128 processors, EASY's
utilization about 0.89; 91 days after a week of warm-up) with exact and with the profile's
inaccurate estimates; EASY, PLAN FCFS/SJF/LJF and four dynP variants; SLDwA, utilization,
throughput and jobs per session, 5 seeds, 95 % intervals by Student's t, and each variant
against PLAN FCFS paired by seed (experiments.md §7; docs/results/dynp.md). Part 3 (not in
"all"): CTC-SP2 whole, under PLAN FCFS/SJF/LJF and dynP SLDwA with the simple and advanced
deciders, half and full self-tuning.

    python scenarios/dynp.py [--part 1|2|3|all] [--quick] [--out DIR] [--seed S] [--seeds N]
                             [--serial | --workers N | --dask ...]

--quick: part 1 on KTH-SP2's (else SDSC-SP2's) first 1,500 jobs, skipped without a trace;
part 2 with 10 users, 14 days, two seeds; part 3 on CTC-SP2's first 1,500 jobs.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.engine.metrics import slowdowns, window_jobs
from sitesim.results.report import table
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.runner import run
from sitesim.schedulers.planning import METRICS, POLICIES, DynP, decide
from sitesim.sweeps.sweep import counters, paired_differences, summarize_runs

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
#: The traces of part 1 (short name: file), and the job lines of those replayed in part only.
FILES = {
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL-CM5": "LANL-CM5-1994-4.1-cln.swf.gz",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
}
EXCERPTS: dict[str, tuple[int, int | None]] = {"CTC-SP2": (0, 20000)}
QUICK_TRACES = ("KTH-SP2", "SDSC-SP2")
QUICK_JOBS = (0, 1500)
#: Longest replays first (rough cost per run), so the pool ends together.
COST = {"CTC-SP2": 4, "SDSC-SP2": 3, "LANL-CM5": 2, "KTH-SP2": 1}
FULL = {"users": 40, "days": 91.0, "warmup_days": 7.0, "estimates": ["exact", "ratio"]}
QUICK = {"users": 10, "days": 14.0, "warmup_days": 1.0, "estimates": ["exact", "ratio"]}
#: The evaluation metrics measured on the actual schedule, as the self-tuning metrics.
EVALUATION = tuple(f"eval_{m}" for m in METRICS)
STEPS = ("scheduler_self_tuning_steps", "scheduler_policy_switches")
SITE_SHOWN = ("slowdown_area_weighted", "utilization", "throughput_per_h", "jobs_per_session",
              "response_mean_min", "wait_mean_min")  # fmt: skip


class Variant(NamedTuple):
    """A scheduler of the study: its label, registered name and parameters."""

    label: str
    scheduler: str
    params: dict[str, Any]


def plan(policy: str) -> Variant:
    return Variant(f"PLAN {policy}", "PLAN", {"policy": policy})


def dynp(
    metric: str = "SLDwA", decider: str = "advanced", tuning: str = "half", preferred: str = "SJF"
) -> Variant:
    name = f"{preferred}-preferred" if decider == "preferred" else decider
    params = {"metric": metric, "decider": decider, "tuning": tuning, "preferred": preferred}
    return Variant(f"dynP {metric} {name} {tuning}", "DYNP", params)


BASIC = [plan(policy) for policy in POLICIES]
BY_METRIC = [dynp(metric) for metric in METRICS]
BY_DECIDER = [dynp(decider=d, preferred=p, tuning=t)
              for d, p in (("simple", "SJF"), ("advanced", "SJF"), ("preferred", "SJF"),
                           ("preferred", "FCFS")) for t in ("half", "full")]  # fmt: skip
#: Part 1's variants, each once (dynP SLDwA advanced half is in both dynP groups).
REPLAYED = list({v.label: v for v in [*BASIC, *BY_METRIC, *BY_DECIDER]}.values())
#: Part 2's variants (EASY as the reference of the other studies).
SITE = [Variant("EASY", "EASY", {}), *BASIC, dynp(), dynp(tuning="full"), dynp(decider="simple"),
        dynp(decider="preferred")]  # fmt: skip
QUICK_SITE = [BASIC[0], BASIC[1], dynp(), dynp(tuning="full"), dynp(decider="simple")]
#: Part 3's variants, on CTC-SP2 whole: the basic policies, the simple and advanced deciders.
WHOLE_CTC = [*BASIC, *(dynp(decider=d, tuning=t) for d in ("simple", "advanced")
                       for t in ("half", "full"))]  # fmt: skip


# -- running -------------------------------------------------------------------------------------
def evaluation(records: np.ndarray) -> dict[str, float]:
    """The seven self-tuning metrics measured on the actual schedule of every job that ended:
    responses end - submit, slowdowns response / runtime (as the summary's), areas size x
    runtime; ART and ARTwA/ARTwW in minutes, makespan in days (first submit to last end)."""
    jobs = window_jobs(records, (-math.inf, math.inf))
    response = jobs["response"]
    slowdown, _ = slowdowns(jobs)
    width = jobs["size"].astype(float)
    area = width * np.maximum(jobs["runtime"], 1.0)
    found = {
        "ART": response.mean() / 60,
        "ARTwA": (area * response).sum() / area.sum() / 60,
        "ARTwW": (width * response).sum() / width.sum() / 60,
        "SLD": slowdown.mean(),
        "SLDwA": (area * slowdown).sum() / area.sum(),
        "SLDwW": (width * slowdown).sum() / width.sum(),
        "makespan": (jobs["end"].max() - records["submit"].min()) / 86400,
    }
    return {f"eval_{name}": float(value) for name, value in found.items()}


def best_set(scores: dict[str, float]) -> str:
    """The policies whose plans score the minimum, e.g. ``FCFS=SJF`` (every decider's choice
    depends only on this set and on the active policy)."""
    best = min(scores.values())
    return "=".join(p for p in POLICIES if scores[p] == best)


class CaseDynP(DynP):
    """dynP that counts its self-tuning steps by case: the policies tied for the best plan,
    the policy active before the step and the one the decider chose (the schedule is
    dynP's)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.cases: Counter[tuple[str, str, str]] = Counter()

    def step(self, now: float, resources: Any) -> Any:
        before = self.policy
        plans = super().step(now, resources)
        self.cases[best_set(self.last_scores), before, self.policy] += 1
        return plans


def run_row(task: tuple[RunConfig, bool]) -> dict[str, Any]:
    """Run one configuration (a worker's task): its summary, the scheduler's counters and,
    when asked, the evaluation metrics; ``wall_s`` its run time. A replay under dynP also
    gives its steps by case (``cases``: best set, policy before, policy chosen, steps)."""
    config, evaluate = task
    timer = scenario.Timer()
    cased = None
    if isinstance(config, ReplayConfig) and config.scheduler == "DYNP":
        cased = CaseDynP(**config.scheduler_params)
        cased.use_seed(config.seed)
        result = run_replay(config, scheduler=cased)
    else:
        result = run(config)
    row = {**result.summary.as_dict(), **counters(result.scheduler_stats)}
    if evaluate:
        row.update(evaluation(result.records))
    if cased is not None:
        row["cases"] = [[*case, n] for case, n in sorted(cased.cases.items())]
    return {**row, "wall_s": timer.seconds}


def describe(variant: Variant) -> dict[str, Any]:
    """The columns naming a variant in the rows."""
    blank = dict.fromkeys(("metric", "decider", "preferred", "tuning", "policy"), "")
    return {"variant": variant.label, "scheduler": variant.scheduler, **blank, **variant.params}


def switching(row: dict[str, Any]) -> dict[str, Any]:
    """dynP's counters, and the shares of the jobs started under each policy (NaN for PLAN
    and EASY)."""
    steps = {name: row.get(name, math.nan) for name in STEPS}
    started = {p: row.get(f"scheduler_started_{p}", math.nan) for p in POLICIES}
    total = sum(started.values())
    return {**steps, **{f"share_{p}": n / total if total else math.nan
                        for p, n in started.items()}}  # fmt: skip


def replays(traces: dict[str, Path], jobs: dict[str, tuple[int, int | None]],
            variants: list[Variant], args: Any) -> list[dict[str, Any]]:  # fmt: skip
    """Every variant on every trace (its job lines ``jobs[trace]``), one run each."""
    labels = [(name, v) for name in traces for v in variants]
    labels.sort(key=lambda label: -COST.get(label[0], 1))
    configs = []
    for name, variant in labels:
        start, stop = jobs[name]
        configs.append((ReplayConfig(trace=str(traces[name]), estimates="trace",
                                     start_job=start, stop_job=stop,
                                     scheduler=variant.scheduler,
                                     scheduler_params=variant.params), True))  # fmt: skip
    found = scenario.run_all(run_row, configs, args, "dynP replays", "replays")
    rows = [{"trace": name, **describe(v), **row}
            for (name, v), row in zip(labels, found, strict=True)]  # fmt: skip
    order = {v.label: k for k, v in enumerate(variants)}
    rows.sort(key=lambda r: (list(traces).index(r["trace"]), order[r["variant"]]))
    return [{**row, **switching(row)} for row in rows]


def case_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """dynP's self-tuning steps by case, a row per trace, variant and case (taken out of
    ``rows``): the best set, the policy before and after the step, the steps and their share."""
    out = []
    for row in rows:
        cases = row.pop("cases", None) or []
        total = sum(n for *_, n in cases)
        out.extend({"trace": row["trace"], "variant": row["variant"], "best": best,
                    "before": before, "chosen": chosen, "steps": n, "share": n / total}
                   for best, before, chosen, n in cases)  # fmt: skip
    return out


#: The cases of a self-tuning step: every set of policies that can tie for the best plan.
BEST_SETS = ("FCFS", "SJF", "LJF", "FCFS=SJF", "FCFS=LJF", "SJF=LJF", "FCFS=SJF=LJF")
DECIDED = (("simple", "SJF"), ("advanced", "SJF"), ("preferred", "SJF"), ("preferred", "FCFS"))


def decision_table() -> list[dict[str, Any]]:
    """The policy each decider picks in each case (best set x active policy), from the
    deciders as specified (schedulers.md): the case analysis of the deciders."""
    out = []
    for best in BEST_SETS:
        scores = {p: 0.0 if p in best.split("=") else 1.0 for p in POLICIES}
        for current in POLICIES:
            picks = {("simple" if d == "simple" else "advanced" if d == "advanced"
                      else f"{p}-preferred"): decide(d, scores, current, p)
                     for d, p in DECIDED}  # fmt: skip
            out.append({"best": best, "current": current, **picks})
    return out


def case_summary(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per trace and dynP variant: the share of the self-tuning steps in each best set, and
    of the steps that switched."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for c in cases:
        row = out.setdefault((c["trace"], c["variant"]),
                             {"trace": c["trace"], "variant": c["variant"],
                              **dict.fromkeys(BEST_SETS, 0.0), "switched": 0.0})  # fmt: skip
        row[c["best"]] += c["share"]
        if c["before"] != c["chosen"]:
            row["switched"] += c["share"]
    return list(out.values())


def site_runs(grid: dict[str, Any], variants: list[Variant], seeds: list[int], args: Any
              ) -> dict[str, Any]:  # fmt: skip
    """Every variant in site-level runs, per estimate model and seed."""
    base = SiteConfig(users=grid["users"], days=grid["days"], warmup_days=grid["warmup_days"])
    labels = [(estimates, v, seed) for estimates in grid["estimates"] for v in variants
              for seed in seeds]  # fmt: skip
    configs = [(base.replace(estimates=estimates, seed=seed, scheduler=v.scheduler,
                             scheduler_params=v.params), False)
               for estimates, v, seed in labels]  # fmt: skip
    found = scenario.run_all(run_row, configs, args, "site-level runs", "runs")
    runs = [{"estimates": estimates, **describe(v), "seed": seed, **row}
            for (estimates, v, seed), row in zip(labels, found, strict=True)]  # fmt: skip
    runs = [{**row, **switching(row)} for row in runs]
    stats = [*STEPS, *(f"share_{p}" for p in POLICIES)]
    summary = summarize_runs(runs, ["estimates", "variant"],
                             [*SITE_SHOWN, "jobs", "sessions", *stats])  # fmt: skip
    relative = paired_differences(
        runs, ["estimates", "variant"], "variant", "PLAN FCFS", SITE_SHOWN[:4], relative=True,
    )  # fmt: skip
    return {"runs": runs, "summary": summary, "relative": relative}


# -- reporting -----------------------------------------------------------------------------------
def by_trace(rows: list[dict[str, Any]], metric: str) -> list[list[Any]]:
    """Rows per variant, a column per trace."""
    traces = list(dict.fromkeys(r["trace"] for r in rows))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    value = {(r["trace"], r["variant"]): r[metric] for r in rows}
    return [[v, *(value.get((t, v), math.nan) for t in traces)] for v in variants]


def best_of(rows: list[dict[str, Any]], variants: list[Variant], metric: str) -> dict[str, str]:
    """Per trace, the variant among ``variants`` with the smallest ``metric``."""
    labels = {v.label for v in variants}
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["variant"] in labels:
            held = best.get(row["trace"])
            if held is None or row[metric] < held[metric]:
                best[row["trace"]] = row
    return {trace: row["variant"] for trace, row in best.items()}


def cross_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per trace and self-tuning metric (advanced, half): each evaluation metric relative to
    the best of the seven self-tuning metrics on it (1 = best)."""
    out = []
    for trace in dict.fromkeys(r["trace"] for r in rows):
        mine = [r for r in rows if r["trace"] == trace and r["variant"] in
                {v.label for v in BY_METRIC}]  # fmt: skip
        if not mine:
            continue
        best = {e: min(r[e] for r in mine) for e in EVALUATION}
        out.extend({"trace": trace, "metric": r["metric"],
                    **{e: r[e] / best[e] for e in EVALUATION}} for r in mine)  # fmt: skip
    return out


def diagonal(cross: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per trace and metric M: the rank (1 = best of 7) of tuning for M when M is evaluated,
    and how far it is from the best (%)."""
    out = []
    for trace in dict.fromkeys(r["trace"] for r in cross):
        mine = [r for r in cross if r["trace"] == trace]
        for metric in METRICS:
            tuned = [r[f"eval_{metric}"] for r in mine if r["metric"] == metric]
            if not tuned:  # not a variant of this run (--quick)
                continue
            own = tuned[0]
            column = sorted(r[f"eval_{metric}"] for r in mine)
            out.append({"trace": trace, "metric": metric, "rank": column.index(own) + 1,
                        "above_best_pct": 100 * (own - 1)})  # fmt: skip
    return out


def print_part1(rows: list[dict[str, Any]], cross: list[dict[str, Any]],
                diag: list[dict[str, Any]]) -> None:  # fmt: skip
    traces = list(dict.fromkeys(r["trace"] for r in rows))
    print("SLDwA (area-weighted slowdown; smaller is better):")
    print(table(("Variant", *traces), by_trace(rows, "slowdown_area_weighted")))
    print("\nutilization:")
    print(table(("Variant", *traces), by_trace(rows, "utilization")))
    for group, variants in (("basic policy", BASIC), ("dynP (any)", [*BY_METRIC, *BY_DECIDER])):
        found = best_of(rows, variants, "slowdown_area_weighted")
        print(f"best {group} by SLDwA: " + ", ".join(f"{t}: {v}" for t, v in found.items()))
    print("\nswitching statistics:")
    print(table(
        ("Trace", "Variant", "Steps", "Switches", "FCFS(%)", "SJF(%)", "LJF(%)", "Time(s)"),
        [[r["trace"], r["variant"], r["scheduler_self_tuning_steps"],
          r["scheduler_policy_switches"], *(100 * r[f"share_{p}"] for p in POLICIES),
          r["wall_s"]] for r in rows if r["scheduler"] == "DYNP"],
    ))  # fmt: skip
    if cross:
        print("\nself-tuning metric (rows) against the metric measured (columns), relative to "
              "the best self-tuning metric on that column:")  # fmt: skip
        print(
            table(
                ("Trace", "Tuned for", *METRICS),
                [[r["trace"], r["metric"], *(r[e] for e in EVALUATION)] for r in cross],
            )
        )
        print(f"\nrank (of {len(cross) // len(traces)}) of tuning for the metric measured:")
        ranks = {(d["trace"], d["metric"]): d for d in diag}
        shown = [m for m in METRICS if any(d["metric"] == m for d in diag)]
        print(table(("Trace", *shown),
                    [[t, *(f"{ranks[t, m]['rank']} (+{ranks[t, m]['above_best_pct']:.1f}%)"
                           for m in shown)] for t in traces]))  # fmt: skip


def print_cases(decisions: list[dict[str, Any]], by_case: list[dict[str, Any]]) -> None:
    print("\nthe deciders' case analysis: the policy picked, by the policies tied for the best "
          "plan and the active policy:")  # fmt: skip
    deciders = [k for k in decisions[0] if k not in ("best", "current")]
    shown = [[d["best"], d["current"], *(d[k] for k in deciders)] for d in decisions]
    print(table(("Best", "Active", *deciders), shown))
    print("\nself-tuning steps by case (% of the steps):")
    print(table(("Trace", "Variant", *BEST_SETS, "switched"),
                [[r["trace"], r["variant"].removeprefix("dynP "),
                  *(100 * r[k] for k in (*BEST_SETS, "switched"))] for r in by_case]))  # fmt: skip


def print_part2(study: dict[str, Any]) -> None:
    print(table(
        ("Estimates", "Variant", "n", "SLDwA", "Utilization", "Jobs/h", "Jobs/session",
         "Avg.Response(min)", "Switches", "SJF(%)", "LJF(%)"),
        [[r["estimates"], r["variant"], r["n"], *(pm(r, m) for m in SITE_SHOWN[:5]),
          r["scheduler_policy_switches"], 100 * r["share_SJF"], 100 * r["share_LJF"]]
         for r in study["summary"]],
    ))  # fmt: skip
    print("\nrelative to PLAN FCFS, paired by seed, %:")
    print(table(
        ("Estimates", "Variant", "SLDwA", "Utilization", "Jobs/h", "Jobs/session"),
        [[r["estimates"], r["variant"],
          *(pm(r, f"{m}_rel_pct", "+.1f") for m in SITE_SHOWN[:4])]
         for r in study["relative"]],
    ))  # fmt: skip


def replay_part(part: str, traces: dict[str, Path], jobs: dict[str, tuple[int, int | None]],
                variants: list[Variant], args: Any, outputs: tuple[dict[str, Any], ...]
                ) -> None:  # fmt: skip
    """Replay ``variants`` on ``traces`` (their job lines ``jobs``), print the part's tables
    and add its data, tables and figures to ``outputs``."""
    data, tables, figures = outputs
    if not traces:
        print(f"== Part {part} skipped: no trace")
        return
    timer = scenario.Timer()
    rows = replays(traces, jobs, variants, args)
    cases = case_rows(rows)
    cross = cross_table(rows)
    diag = diagonal(cross)
    print(f"== Part {part}: {len(rows)} replays in {timer.seconds:.0f} s ("
          + ", ".join(f"{n}: job lines {a}:{b if b is not None else 'end'}"
                      for n, (a, b) in jobs.items()) + ")")  # fmt: skip
    print_part1(rows, cross, diag)
    decisions, by_case = decision_table(), case_summary(cases)
    print_cases(decisions, by_case)
    name = f"part{part}"
    data[name] = {"traces": {n: str(p) for n, p in traces.items()}, "jobs": jobs, "runs": rows,
                  "cross": cross, "diagonal": diag, "cases": cases, "case_summary": by_case,
                  "decisions": decisions, "seconds": timer.seconds}  # fmt: skip
    tables.update({f"{name}_runs.csv": rows, f"{name}_cross.csv": cross,
                   f"{name}_cases.csv": cases, f"{name}_case_summary.csv": by_case})  # fmt: skip
    figures[f"{name}_sldwa.png"] = lambda path: sldwa_figure(rows, path)
    figures[f"{name}_switching.png"] = lambda path: switching_figure(rows, path)


def main(argv: list[str] | None = None) -> int:
    p = scenario.parser(__doc__, replications=(5, 2))
    p.add_argument("--part", choices=("1", "2", "3", "all"), default="all",
                   help="1: the traces, 2: site-level runs, all: both; "
                        "3: CTC-SP2 whole, the basic policies and 4 dynP variants")  # fmt: skip
    args = scenario.parse(p, argv)
    data: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    figures: dict[str, Any] = {}
    if args.part in ("1", "all"):
        if args.quick:
            path = scenario.real_trace(TRACES, [FILES[name] for name in QUICK_TRACES])
            names = {file: name for name, file in FILES.items()}
            traces = {} if path is None else {names[path.name]: path}
        else:
            traces = {name: TRACES / file for name, file in FILES.items()
                      if (TRACES / file).exists()}  # fmt: skip
            missing = [file for name, file in FILES.items() if name not in traces]
            if missing:
                print(f"not found in {TRACES}, left out: {', '.join(missing)}")
        jobs = {name: (QUICK_JOBS if args.quick else EXCERPTS.get(name, (0, None)))
                for name in traces}  # fmt: skip
        replay_part("1", traces, jobs, REPLAYED, args, (data, tables, figures))
    if args.part == "3":
        path = TRACES / FILES["CTC-SP2"]
        traces = {"CTC-SP2": path} if path.exists() else {}
        if not traces:
            print(f"not found in {TRACES}: {FILES['CTC-SP2']}")
        jobs = {"CTC-SP2": QUICK_JOBS if args.quick else (0, None)}
        replay_part("3", traces, jobs, WHOLE_CTC, args, (data, tables, figures))
    if args.part in ("2", "all"):
        timer = scenario.Timer()
        grid = QUICK if args.quick else FULL
        seeds = scenario.seeds(args)
        part2 = site_runs(grid, QUICK_SITE if args.quick else SITE, seeds, args)
        part2.update(grid=grid, seeds=seeds, seconds=timer.seconds)
        print(f"\n== Part 2: {grid['users']} complete users, {grid['days']:g} days, seeds "
              f"{seeds[0]}-{seeds[-1]}: {len(part2['runs'])} runs in {timer.seconds:.0f} s; "
              "mean ± 95 % CI")  # fmt: skip
        print_part2(part2)
        data["part2"] = part2
        tables.update({"part2_runs.csv": part2["runs"], "part2_summary.csv": part2["summary"],
                       "part2_relative.csv": part2["relative"]})  # fmt: skip
        figures["part2.png"] = lambda path: site_figure(part2["relative"], path)
    scenario.publish(args.out, data, name="dynp", tables=tables, figures=figures)
    return 0


# -- figures -------------------------------------------------------------------------------------
def sldwa_figure(rows, path):  # type: ignore[no-untyped-def]
    """Per trace: SLDwA of every variant relative to the best basic policy."""
    from sitesim.figures import grid, save

    traces = list(dict.fromkeys(r["trace"] for r in rows))
    fig, axes = grid(len(traces), width=5.2, height=5.0, cols=2)
    colors = {"PLAN": "tab:gray", "metric": "tab:blue", "decider": "tab:orange"}
    metric_labels = {v.label for v in BY_METRIC}
    for ax, trace in zip(axes, traces, strict=True):
        mine = [r for r in rows if r["trace"] == trace]
        best = min(r["slowdown_area_weighted"] for r in mine if r["scheduler"] == "PLAN")
        y = np.arange(len(mine))
        kinds = [r["scheduler"] if r["scheduler"] == "PLAN" else
                 "metric" if r["variant"] in metric_labels else "decider"
                 for r in mine]  # fmt: skip
        ax.barh(y, [r["slowdown_area_weighted"] / best for r in mine],
                color=[colors[k] for k in kinds])  # fmt: skip
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_yticks(y, [r["variant"].removeprefix("dynP ") for r in mine], fontsize=7)
        ax.invert_yaxis()
        ax.set_title(f"{trace}: SLDwA / best basic policy's ({best:.3g})", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    return save(fig, path)


def switching_figure(rows, path):  # type: ignore[no-untyped-def]
    """Per trace: the share of jobs each dynP variant started under FCFS, SJF and LJF."""
    from sitesim.figures import grid, save

    traces = list(dict.fromkeys(r["trace"] for r in rows))
    fig, axes = grid(len(traces), width=5.2, height=4.4, cols=2)
    for ax, trace in zip(axes, traces, strict=True):
        mine = [r for r in rows if r["trace"] == trace and r["scheduler"] == "DYNP"]
        y = np.arange(len(mine))
        left = np.zeros(len(mine))
        for policy in POLICIES:
            share = np.array([r[f"share_{policy}"] for r in mine])
            ax.barh(y, share, left=left, label=policy)
            left += share
        ax.set_yticks(y, [r["variant"].removeprefix("dynP ") for r in mine], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_title(f"{trace}: share of jobs started under each policy", fontsize=9)
        ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.05))
    return save(fig, path)


def site_figure(relative, path):  # type: ignore[no-untyped-def]
    """Site-level runs: each variant against PLAN FCFS, paired by seed, with 95 % intervals; a
    16:9 slide, one legend below."""
    import matplotlib

    from sitesim.figures import SLIDE_STYLE, bars_with_ci, save, slide

    titles = ("SLDwA", "utilization", "throughput", "jobs per session")
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(2, 2, sharex=True)
        for ax, metric, title in zip(axes, SITE_SHOWN[:4], titles, strict=True):
            bars_with_ci(ax, relative, "variant", f"{metric}_rel_pct", "estimates")
            ax.axhline(0, color="k", lw=1)
            ax.set_title(f"{title} against PLAN FCFS (%)")
            ax.grid(alpha=0.3, axis="y")
        names = [t.get_text().replace("dynP SLDwA ", "dynP ") for t in axes[2].get_xticklabels()]
        for ax in axes[2:]:
            ax.set_xticks(ax.get_xticks(), names, rotation=30, ha="right", fontsize=12)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, [f"{label} estimates" for label in labels], loc="outside lower center",
                   ncols=len(labels), frameon=False)  # fmt: skip
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
