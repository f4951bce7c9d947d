"""``sitesim report`` as a person uses it: the files it writes, one clear line for bad input,
and the HTML report opened in a real headless Chromium (skipped, with the reason, where none
can be had)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from sitesim.cli.main import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory):  # type: ignore[no-untyped-def]
    pytest.importorskip("bokeh", reason="the HTML report needs Bokeh (the report extra)")
    out = tmp_path_factory.mktemp("runs") / "demo"
    argv = ["run", "--users", "12", "--days", "14", "--warmup", "0", "--scheduler", "FCFS,EASY",
            "--out", str(out), "--report"]  # fmt: skip
    assert main(argv) == 0
    return out


def test_run_report_writes_an_html_report_into_each_run_folder(runs):
    for name in ("users-0012-FCFS", "users-0012-EASY"):
        page = (runs / name / "report.html").read_text()
        assert page.startswith("<!DOCTYPE html>") and "Bokeh" in page
        assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"?(https?:)?//", page)


def test_report_writes_the_gantt_and_the_lanes(runs, tmp_path, capsys):
    easy, fcfs = runs / "users-0012-EASY", runs / "users-0012-FCFS"
    gantt, lanes = tmp_path / "gantt.png", tmp_path / "lanes.png"
    argv = ["report", str(easy), "--gantt", str(gantt), "--lanes", str(lanes), "--compare",
            str(fcfs), "--window", "3:10", "--color-by", "state"]  # fmt: skip
    assert main(argv) == 0
    assert gantt.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and lanes.stat().st_size > 10_000
    assert capsys.readouterr().out.startswith("written: ")
    html = tmp_path / "zoom.html"
    assert main(["report", str(easy), "--out", str(html), "--window", "5:", "--user", "3"]) == 0
    assert "1 users (as named)" in html.read_text()


def test_the_figures_are_written_as_their_names_say_and_together(runs, tmp_path, monkeypatch):
    easy = runs / "users-0012-EASY"
    gantt, lanes = tmp_path / "gantt.svg", tmp_path / "lanes.pdf"
    argv = ["report", str(easy), "--gantt", str(gantt), "--lanes", str(lanes), "--window", "3:5"]
    assert main(argv) == 0
    first = gantt.read_bytes(), lanes.read_bytes()
    assert first[0].startswith(b"<?xml") and b"<svg" in first[0][:500]
    assert first[1].startswith(b"%PDF")
    assert main(argv) == 0
    assert (gantt.read_bytes(), lanes.read_bytes()) == first  # (no dates, no random ids)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    from sitesim.views import lanes as lanes_module

    monkeypatch.setattr(lanes_module, "lanes_figure", interrupted)  # Ctrl-C after the Gantt
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    argv = ["report", str(easy), "--gantt", str(quiet / "g.png"), "--lanes", str(quiet / "l.png")]
    assert main(argv) == 130
    assert list(quiet.iterdir()) == []


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], match: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sitesim: error: ") and match in err, err


def test_bad_run_folders_are_one_line_and_status_2(runs, tmp_path, capsys):
    easy = runs / "users-0012-EASY"
    _fails(["report", str(tmp_path / "none")], capsys, "no such run folder")
    _fails(["report", str(runs)], capsys, "holds several runs (users-0012-EASY, users-0012-FCFS)")
    half = tmp_path / "half"  # interrupted: results.json (written last) missing
    half.mkdir()
    shutil.copy(easy / "jobs.csv", half / "jobs.csv")
    _fails(["report", str(half)], capsys, "half-written run folder")
    scenario = tmp_path / "scenario"  # a scenario's --out: its tables, figures and JSON
    scenario.mkdir()
    for name in ("creasy.json", "part5_runs.csv", "part5.png"):
        (scenario / name).write_text("x")
    _fails(["report", str(scenario)], capsys,
           "not a run folder (no results.json): it holds other results (creasy.json, part5.png, "
           "part5_runs.csv)")  # fmt: skip
    cut = tmp_path / "cut"  # a file that is not what results.json lists
    shutil.copytree(easy, cut)
    with (cut / "jobs.csv").open("r+b") as fh:
        fh.truncate(1000)
    _fails(["report", str(cut)], capsys, "jobs.csv: half-written or changed since the run")
    bare = tmp_path / "bare"  # a sweep's --results-only folder
    bare.mkdir()
    document = json.loads((easy / "results.json").read_text())
    document["files"] = {}
    (bare / "results.json").write_text(json.dumps(document))
    _fails(["report", str(bare)], capsys, "holds no per-job records")
    _fails(["report", str(easy), "--window", "40:50"], capsys, "lies outside the run")
    _fails(["report", str(easy), "--window", "5"], capsys, "--window 5: give days as A:B")
    _fails(["report", str(easy), "--color-by", "decision", "--gantt", str(tmp_path / "g.png")],
           capsys, "records no decisions")  # fmt: skip
    _fails(["run", "--users", "2", "--days", "2", "--warmup", "0", "--report"], capsys,
           "--report writes into the run folders: give --out DIR")  # fmt: skip


def test_the_report_opens_in_a_browser(runs, tmp_path):
    from sitesim.views.browser import browser_missing, open_report

    if (missing := browser_missing()) is not None:
        pytest.skip(missing)
    shot = tmp_path / "report.png"
    opened = open_report(runs / "users-0012-EASY" / "report.html", screenshot=shot)
    assert opened.problems == []
    assert opened.painted > 0.2, f"the Gantt chart's frame is {100 * opened.painted:.0f} % painted"
    assert opened.seconds < 20  # (the benchmark measures it; here only a hang would fail)
    assert shot.stat().st_size > 20_000


def test_the_how_to_commands_run_in_order(tmp_path, monkeypatch, capsys):
    """docs/howto/look-at-a-run.md: its sitesim commands, one after the other, as a reader
    types them (each reads the folders the ones before wrote)."""
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "howto" / "look-at-a-run.md").read_text()
    lines = [line for block in re.findall(r"^```sh\n(.*?)^```$", page, re.S | re.M)
             for line in block.splitlines() if line.startswith("sitesim ")]  # fmt: skip
    assert len(lines) == 7
    monkeypatch.chdir(tmp_path)
    for line in lines:
        args = [arg.replace("docs/", f"{root}/docs/", 1) for arg in shlex.split(line)[1:]]
        assert main(args) == 0, line
    for written in ("runs/demo/users-0020-EASY/report.html", "gantt.png", "lanes.png",
                    "runs/reported/users-0020-FCFS/report.html", "slurm.png"):  # fmt: skip
        assert (tmp_path / written).stat().st_size > 10_000, written


def test_a_report_past_its_rectangle_limit_shows_the_density_image(runs, tmp_path, monkeypatch):
    from sitesim.views import html
    from sitesim.views.browser import browser_missing, open_report
    from sitesim.views.run_view import read_run

    monkeypatch.setattr(html, "MAX_QUADS", 100)
    page = html.write_report(read_run(runs / "users-0012-EASY"), tmp_path / "dense.html")
    assert "drawn as density" in page.read_text()
    if (missing := browser_missing()) is not None:
        pytest.skip(missing)
    opened = open_report(page)
    assert opened.problems == [] and opened.painted > 0.2
