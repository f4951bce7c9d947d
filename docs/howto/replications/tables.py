"""The tables of docs/howto/replications.md, from the runs of its three sweeps.

From the project folder::

    for name in horizon pair20 warmup; do
        sitesim sweep docs/howto/replications/$name.toml --out runs/replications/$name
    done
    python docs/howto/replications/tables.py runs/replications

prints every table of the page, in Markdown, as the page shows it. Each cell is the mean over
the seeds ± the half-width of its 95 % confidence interval (Student's t); the pairing tables
take the first 5, 10 and 20 seeds of ``pair20`` and compare EASY with FCFS seed by seed
(``sitesim.sweeps.sweep.paired_differences``).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

from sitesim.sweeps.sweep import paired_differences, summarize_runs

#: (summary field, column heading, decimals)
UTILIZATION = ("utilization", "utilization", 3)
THROUGHPUT = ("throughput_per_h", "throughput (jobs/h)", 3)
RESPONSE = ("response_mean_min", "mean response (min)", 1)
SLOWDOWN = ("slowdown_mean", "mean slowdown", 1)


def read_runs(folder: Path) -> list[dict[str, Any]]:
    """The rows of a sweep's runs.csv."""
    with open(folder / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def markdown(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, every column aligned right."""
    lines = [header, ["---:"] * len(header), *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def interval(row: dict[str, Any], field: str, decimals: int, sign: str = "") -> str:
    """``mean ± half-width`` of a summary (or paired-difference) row."""
    return f"{row[field]:{sign}.{decimals}f} ± {row[field + '_ci95']:.{decimals}f}"


def by_factor(runs: list[dict[str, Any]], factor: str, heading: str, metrics: list[Any]) -> str:
    """One row per level of ``factor``: mean ± half-width of each metric."""
    rows = summarize_runs(runs, [factor], [field for field, _, _ in metrics])
    return markdown(
        [heading, *(title for _, title, _ in metrics)],
        [[row[factor], *(interval(row, f, d) for f, _, d in metrics)] for row in rows],
    )


def paired(runs: list[dict[str, Any]], field: str, title: str, decimals: int) -> str:
    """FCFS, EASY and EASY − FCFS paired by seed, over the first 5, 10 and 20 seeds."""
    rows = []
    for seeds in (5, 10, 20):
        first = [run for run in runs if int(run["seed"]) <= seeds]
        means = {row["scheduler"]: row for row in summarize_runs(first, ["scheduler"], [field])}
        (diff,) = paired_differences(first, ["scheduler"], "scheduler", "FCFS", [field])
        rows.append(
            [
                str(seeds),
                interval(means["FCFS"], field, decimals),
                interval(means["EASY"], field, decimals),
                interval(diff, field + "_diff", decimals, "+"),
            ]
        )
    header = ["seeds", f"FCFS {title}", f"EASY {title}", "EASY − FCFS, paired"]
    return markdown(header, rows)


def tables(folder: Path) -> list[str]:
    """The page's tables, in its order, from the sweeps' output folders under ``folder``."""
    pair20 = read_runs(folder / "pair20")
    return [
        by_factor(
            read_runs(folder / "horizon"),
            "days",
            "days",
            [UTILIZATION, THROUGHPUT, RESPONSE, SLOWDOWN],
        ),
        paired(pair20, "throughput_per_h", "throughput", 3),
        paired(pair20, "jobs_per_session", "jobs/session", 3),
        by_factor(
            read_runs(folder / "warmup"),
            "warmup_days",
            "warm-up (days)",
            [UTILIZATION, THROUGHPUT, RESPONSE],
        ),
    ]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tables.py FOLDER  (the folder holding horizon, pair20, warmup)")
    print("\n\n".join(tables(Path(sys.argv[1]))))
