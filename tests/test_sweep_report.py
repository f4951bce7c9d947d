"""``sitesim report`` of a sweep folder (issue 34): a tiny SLURM sweep on a platform with GPUs,
memory and accounts, run in process, and its report read back: the paired difference against
one computed by hand from runs.csv, an account's share and usage, a partition's GPU
utilization, the resolved SLURM settings; missing runs named; bad input one line, exit 2."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import shutil
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest
from scipy import stats

from sitesim.cli.main import main
from sitesim.formats.traces import read_trace
from sitesim.workload.profile import default_profile
from sitesim.workload.request_mix import RequestMix

FEATURES = Path(__file__).resolve().parent / "data" / "slurm" / "features"
#: The runs of the sweep: bf_interval 30 (Slurm's default) and -1 (no backfill) x seeds 1, 2.
RUNS = [f"bf_interval={level},seed={seed}" for level in (30, -1) for seed in (1, 2)]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sweep's folder: 6 users for 3 days under SLURM with fairshare over two accounts, on
    the tiny site of tests/data/slurm/features (GPU nodes, a big-memory node, memory placed),
    the users asking for GPUs and memory as that site's five jobs did."""
    folder = tmp_path_factory.mktemp("sweep")
    trace = read_trace(FEATURES / "site.sacct")
    assert trace.requests is not None
    mix = RequestMix.fit([(trace.column("procs"), trace.requests)])
    dataclasses.replace(default_profile(), requests=mix).save(folder / "profile.json")
    conf = FEATURES / "slurm.conf"
    (folder / "sweep.toml").write_text(
        "seeds = 2\nbaseline = false\n[base]\nusers = 6\ndays = 3\nwarmup_days = 0\n"
        f"profile = 'profile.json'\nplatform = '{conf}'\nscheduler = 'SLURM'\n"
        f"scheduler_params = {{conf = '{conf}', accounts = {{phys = 4, chem = 2}}, "
        "PriorityWeightFairshare = 1000}\n[factors]\nbf_interval = [30, -1]\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the mix's partitions and features: said elsewhere)
        status = main(["sweep", str(folder / "sweep.toml"), "--serial", "--out",
                       str(folder / "out")])  # fmt: skip
    assert status == 0
    return folder / "out"


class _Tables(HTMLParser):
    """The tables of a page, each under the title (h2 or h3) before it, as rows of cell texts;
    with each row whether it is highlighted."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[tuple[list[str], bool]]] = {}
        self._title = ""
        self._in: str | None = None
        self._text = ""
        self._row: list[str] | None = None
        self._marked = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3", "td", "th"):
            self._in, self._text = tag, ""
        elif tag == "table":
            self.tables[self._title] = []
        elif tag == "tr":
            self._row, self._marked = [], ("class", "d") in attrs

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3"):
            self._title, self._in = self._text.strip(), None
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(self._text.strip())
            self._in = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._title].append((self._row, self._marked))
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text += data


def tables(page: str) -> dict[str, list[tuple[list[str], bool]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def row_of(table: list[tuple[list[str], bool]], **cells: str) -> dict[str, str]:
    """The one row of ``table`` whose columns have the values ``cells``, by column title."""
    head = table[0][0]
    rows = [dict(zip(head, row, strict=True)) for row, _ in table[1:]]
    found = [row for row in rows if all(row[k] == v for k, v in cells.items())]
    assert len(found) == 1, (cells, rows)
    return found[0]


def pm(mean: float, half: float, *, signed: bool = False) -> str:
    """As the report writes a mean and its half-width (3 decimals under 10, else 1)."""
    digits = 3 if max(abs(mean), abs(half)) < 10 else 1
    return f"{mean:{'+' if signed else ''},.{digits}f} ± {half:,.{digits}f}"


def test_the_report_of_a_sweep_compares_its_runs(
    swept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sorted(json.loads((swept / "sweep.json").read_text())["runs"]) == sorted(RUNS)
    assert main(["report", str(swept)]) == 0
    assert capsys.readouterr().out.startswith(f"written: {swept / 'report.html'} (4 of 4 runs")
    page = (swept / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'src="data:image/png;base64,' in page
    found = tables(page)

    # the paired difference, computed by hand from runs.csv: -1 minus 30, seed by seed
    runs = list(csv.DictReader(io.StringIO((swept / "runs.csv").read_text())))
    by = {(row["bf_interval"], row["seed"]): row for row in runs}
    paired = row_of(found["bf_interval: each level − 30"], bf_interval="-1")
    assert paired["n"] == "2"
    for metric, title in (("wait_mean_min", "Δ mean wait (min)"), ("utilization",
                                                                    "Δ utilization")):  # fmt: skip
        diffs = [float(by["-1", s][metric]) - float(by["30", s][metric]) for s in ("1", "2")]
        mean = sum(diffs) / 2
        half = stats.t.ppf(0.975, 1) * abs(diffs[0] - diffs[1]) / math.sqrt(2) / math.sqrt(2)
        assert abs(diffs[0] - diffs[1]) > 0  # (backfilling changes the schedule)
        assert paired[title].replace("<b>", "") == pm(mean, half, signed=True)

    # an account: its share of the tree (two accounts of one share each) and its usage, the
    # share of the core-hours its jobs used, averaged over the seeds
    phys = row_of(found["Per account"], bf_interval="30", account="phys")
    usage = []
    for seed in (1, 2):
        rows = list(csv.DictReader(io.StringIO(
            (swept / f"bf_interval=30,seed={seed}" / "accounts.csv").read_text())))  # fmt: skip
        core_h = {row["account"]: float(row["core_hours"]) for row in rows}
        usage.append(core_h["phys"] / sum(core_h.values()))
    assert phys["n"] == "2" and phys["share"] == "0.500 ± 0.000"
    half = stats.t.ppf(0.975, 1) * abs(usage[0] - usage[1]) / 2
    assert phys["usage (core-h share)"] == pm(sum(usage) / 2, half)

    # a partition's GPU and memory utilization (the batch partition has no GPUs)
    gpu = row_of(found["Per partition"], bf_interval="-1", partition="gpu")
    util = [
        next(float(row["gpu_utilization"]) for row in csv.DictReader(io.StringIO(
            (swept / f"bf_interval=-1,seed={seed}" / "partitions.csv").read_text()))
            if row["partition"] == "gpu")
        for seed in (1, 2)
    ]  # fmt: skip
    assert min(util) > 0
    assert gpu["GPU util."] == pm(sum(util) / 2, stats.t.ppf(0.975, 1) * abs(util[0] - util[1]) / 2)
    assert gpu["memory util."] != "-"
    assert row_of(found["Per partition"], bf_interval="-1", partition="batch")["GPU util."] == "-"

    # the resolved settings: the one that differs first and highlighted, then the others
    settings = found["SLURM settings as the runs used them"]
    assert settings[0][0] == ["setting", "bf_interval=30", "bf_interval=-1"]
    assert settings[2] == (["bf_interval", "30.0", "-1.0"], True)
    assert (["bf_resolution", "60.0", "60.0"], False) in settings  # (Slurm's default)
    assert (["PriorityWeightFairshare", "1000", "1000"], False) in settings
    assert (["gpu: PriorityJobFactor", "1", "1"], False) in settings  # (the conf's partitions)
    assert sum(marked for _, marked in settings) == 1


def test_missing_runs_are_named_and_the_rest_is_reported(
    swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(swept, copy)
    (copy / "report.html").unlink(missing_ok=True)
    shutil.rmtree(copy / "bf_interval=30,seed=2")  # never run
    failed = copy / "bf_interval=-1,seed=2"  # failed: its traceback, no results.json
    (failed / "results.json").unlink()
    (failed / "error.txt").write_text("--- attempt 1\nTraceback ...\nValueError: boom\n")
    out = tmp_path / "cmp.html"
    assert main(["report", str(copy), "--baseline", "bf_interval=-1", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    warned = captured.err.strip().splitlines()
    assert len(warned) == 2 and "(2 of 4 runs complete)" in captured.out
    assert warned[0].startswith("sitesim: warning: run bf_interval=30,seed=2 is missing: not run")
    assert "bf_interval=-1,seed=2 is missing: failed: ValueError: boom" in warned[1]
    page = out.read_text()
    assert "2 of 4 planned runs complete" in page and "ValueError: boom" in page
    paired = row_of(tables(page)["bf_interval: each level − -1"], bf_interval="30")
    assert paired["n"] == "1"  # (seed 1 alone: a difference, no interval)
    assert "±" not in paired["Δ utilization"] and paired["Δ utilization"] != "-"


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], match: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err


def test_bad_input_is_one_line_and_writes_nothing(
    swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    sweep = ["report", str(swept), "--out", str(out)]
    _fails([*sweep, "--baseline", "bf_window=1"], capsys,
           "--baseline bf_window=1: bf_window is not a factor of the sweep")  # fmt: skip
    _fails([*sweep, "--baseline", "bf_interval=7"], capsys,
           "bf_interval=7: 7 is not a level of bf_interval (its levels: 30, -1)")  # fmt: skip
    _fails([*sweep, "--baseline", "bf_interval"], capsys, "give factor=level")
    _fails([*sweep, "--gantt", str(tmp_path / "g.png")], capsys, "--gantt draws one run")
    _fails([*sweep, "--window", "1:2"], capsys, "--window draws one run")
    _fails(["report", str(swept / RUNS[0]), "--baseline", "bf_interval=30", "--out", str(out)],
           capsys, "--baseline compares the levels of a sweep's factors")  # fmt: skip
    _fails(["report", str(swept), "--out", str(tmp_path / "r.txt")], capsys, "the report is HTML")
    assert not out.exists() and not (tmp_path / "r.txt").exists()
