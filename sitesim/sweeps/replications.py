"""Statistics over replications: the runs of a sweep (or any rows with a ``seed`` column)
summarized per combination of factor levels with Student's t intervals, differences to a
baseline paired by seed, and competitive ratios against a baseline scheduler."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sitesim.engine.metrics import Summary, competitive_ratio
from sitesim.schedulers import REGISTRY, parameters


def summarize_runs(
    rows: Sequence[dict[str, Any]],
    factors: Sequence[str],
    metrics: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Per combination of factor levels: n, and per metric the mean over the runs, the sample
    standard deviation (``_sd``) and the half-width of the 95 % confidence interval of the mean
    by Student's t (``_ci95``); NaN where n < 2. Runs keep their plan order. ``metrics``
    defaults to every :class:`~sitesim.engine.metrics.Summary` field."""
    from scipy.special import stdtrit  # the quantile of Student's t (lighter than scipy.stats)

    metrics = Summary.fields() if metrics is None else metrics
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        key = tuple(_hashable(row.get(name)) for name in factors)
        groups.setdefault(key, []).append(row)
    out = []
    for members in groups.values():
        n = len(members)
        entry: dict[str, Any] = {name: members[0].get(name) for name in factors}
        entry["n"] = n
        t = float(stdtrit(n - 1, 0.975)) if n > 1 else math.nan
        for metric in metrics:
            values = [float(m[metric]) for m in members]
            finite = [v for v in values if math.isfinite(v)]
            mean = sum(finite) / len(finite) if len(finite) == n else math.nan
            if n > 1 and len(finite) == n:
                sd = math.sqrt(sum((v - mean) ** 2 for v in finite) / (n - 1))
                ci = t * sd / math.sqrt(n)
            else:
                sd = ci = math.nan
            entry[metric], entry[f"{metric}_sd"], entry[f"{metric}_ci95"] = mean, sd, ci
        out.append(entry)
    return out


def paired_differences(
    rows: Sequence[dict[str, Any]],
    factors: Sequence[str],
    by: str,
    baseline: Any,
    metrics: Sequence[str] = ("utilization", "throughput_per_h", "response_mean_min"),
    *,
    relative: bool = False,
) -> list[dict[str, Any]]:
    """Differences to a baseline level, paired by seed.

    Within each combination of the other factors, every level of ``by`` is compared with
    ``baseline`` seed by seed (the same users under both): per metric the mean difference
    (``<metric>_diff``) and the half-width of its 95 % confidence interval by Student's t
    (``<metric>_diff_ci95``). Pairing removes the variation between user populations, which
    dominates at small user counts, so these intervals are much narrower than those of the two
    means taken apart.

    Args:
        rows: the runs (:attr:`SweepResult.runs`, or runs.csv read back).
        factors: the sweep's factors.
        by: the factor whose levels are compared (e.g. ``"scheduler"``).
        baseline: its level to compare with (e.g. ``"EASY"``).
        metrics: summary fields to compare.
        relative: compare as 100 × (level / baseline − 1) per seed, in %: the columns are then
            ``<metric>_rel_pct`` and ``<metric>_rel_pct_ci95``.
    """
    from scipy.special import stdtrit

    others = [name for name in factors if name != by]
    groups: dict[tuple[Any, ...], dict[Any, dict[Any, dict[str, Any]]]] = {}
    for row in rows:
        key = tuple(_hashable(row.get(name)) for name in others)
        groups.setdefault(key, {}).setdefault(_hashable(row.get(by)), {})[row["seed"]] = row
    out = []
    for key, levels in groups.items():
        base = levels.get(_hashable(baseline))
        if base is None:
            continue
        for level, runs in levels.items():
            if level == _hashable(baseline):
                continue
            seeds = sorted(set(runs) & set(base))
            n = len(seeds)
            entry: dict[str, Any] = {**dict(zip(others, key, strict=True)), by: level, "n": n}
            t = float(stdtrit(n - 1, 0.975)) if n > 1 else math.nan
            for metric in metrics:
                pairs = [(float(runs[s][metric]), float(base[s][metric])) for s in seeds]
                if relative:
                    diffs = [100 * (x / b - 1) if b else math.nan for x, b in pairs]
                else:
                    diffs = [x - b for x, b in pairs]
                mean = sum(diffs) / n if n else math.nan
                sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else math.nan
                name = f"{metric}_rel_pct" if relative else f"{metric}_diff"
                entry[name] = mean
                entry[f"{name}_ci95"] = t * sd / math.sqrt(n) if n > 1 else math.nan
            out.append(entry)
    return out


def with_competitive_ratios(
    rows: Sequence[dict[str, Any]],
    factors: Sequence[str],
    baseline: str = "EASY",
    *,
    scheduler_parameters: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """The runs with ``competitive_ratio`` filled in: a run's aggregate utility over that of
    the ``baseline`` scheduler with the same seed and levels of the other factors, scheduler
    parameters aside (utility.md §3); NaN where there is no such run or it earned nothing.

    Args:
        rows: the runs.
        factors: the sweep's factors.
        baseline: the ``scheduler`` level to compare with (any case).
        scheduler_parameters: the factors that are scheduler parameters (default: those of
            every registered scheduler).
    """
    if scheduler_parameters is None:
        scheduler_parameters = set().union(*(parameters(name) for name in REGISTRY))
    others = [name for name in factors if name != "scheduler" and name not in scheduler_parameters]
    reference = {
        (*(_hashable(row.get(name)) for name in others), row["seed"]): float(row["utility_total"])
        for row in rows
        if str(row.get("scheduler", "")).upper() == baseline.upper()
    }
    out = []
    for row in rows:
        base = reference.get((*(_hashable(row.get(name)) for name in others), row["seed"]), 0.0)
        ratio = competitive_ratio(float(row["utility_total"]), base)
        out.append({**row, "competitive_ratio": ratio})
    return out


def _hashable(value: Any) -> Any:
    """A level as a key: a list as a tuple, a table (SLURM's ``accounts``) as its pairs."""
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    if isinstance(value, Mapping):
        return tuple((key, _hashable(item)) for key, item in value.items())
    return value
