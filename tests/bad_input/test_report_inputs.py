"""``sitesim report`` refuses bad input with one line on stderr and exit status 2, and writes
nothing: not the files it was asked for, not a temporary file, not one figure of two.

Each case is a command line over one small run (``{run}``; ``{runs}`` holds it and another);
relative output names land in the test's own folder, which must stay as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sitesim.cli.main import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "small"
    argv = ["run", "--users", "4", "--days", "3", "--warmup", "0", "--scheduler", "FCFS,EASY",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    return out


def tree(*folders: Path) -> dict[str, int]:
    """Every file under ``folders`` (hidden ones too), with its size."""
    return {str(p): p.stat().st_size for f in folders for p in f.rglob("*") if p.is_file()}


#: (command line, what the line says); "html": the case needs Bokeh (the report extra).
CASES = [
    # the run folder
    ("{run}/jobs.csv", "jobs.csv: is a file, not a run folder: give the folder a run wrote"),
    ("{run}/results.json", "results.json: is a file, not a run folder: give the folder that "
     "holds it"),
    ("{run}/jobs.csv --gantt g.png", "jobs.csv: is a file, not a run folder"),
    ("{runs}/none --gantt g.png", "none: no such run folder"),
    ("{runs} --gantt g.png", "holds several runs (users-0004-EASY, users-0004-FCFS)"),
    ("{run} --compare {runs}/none --lanes l.png", "none: no such run folder"),
    ("{run} --compare {run}/jobs.csv --lanes l.png", "jobs.csv: is a file, not a run folder"),
    # the names of the outputs
    ("{run} --gantt g.txt", "--gantt g.txt: a figure is written as .png, .svg or .pdf (by the "
     "name's extension); not .txt"),
    ("{run} --lanes lanes", "--lanes lanes: a figure is written as .png, .svg or .pdf (by the "
     "name's extension); this name has none"),
    ("{run} --gantt g.png.gz", "not .gz"),
    ("{run} --gantt g.png --lanes l.html", "--lanes l.html: a figure is written as"),
    ("{run} --out report.txt", "--out report.txt: the report is HTML: give a name ending in "
     ".html or .htm"),
    ("{run} --out r.png --gantt g.png", "--out r.png: the report is HTML"),
    ("{run} --gantt same.png --lanes same.png", "--gantt and --lanes name the same file, "
     "same.png: give two"),
    ("{run} --gantt {run}", "is a folder; give a file name"),
    ("{run} --gantt {run}/jobs.csv/g.png", "cannot create it"),
    # what is drawn: the first figure is not written when the second fails
    ("{run} --gantt g.png --lanes l.png --user 999", "user 999 has no jobs"),
    ("{run} --gantt g.png --lanes l.png --color-by partition", "colour by partition: this run "
     "has no platform"),
    ("{run} --lanes l.png --out r.html --color-by account", "colour by account: this run has no "
     "accounts"),
    ("{run} --gantt g.png --lanes l.png --window 40:50", "lies outside the run"),
    ("{run} --gantt g.png --window 5", "--window 5: give days as A:B"),
    ("{run} --gantt g.png --window 3:2", "--window 3:2: give days as A:B with A < B"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "says"), CASES, ids=[case[0] for case in CASES])
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    runs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    line: str,
    says: str,
) -> None:
    if ".htm" in line:
        pytest.importorskip("bokeh", reason="the HTML report needs Bokeh (the report extra)")
    monkeypatch.chdir(tmp_path)
    argv = ["report", *line.format(run=runs / "users-0004-EASY", runs=runs).split()]
    before = tree(runs, tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sitesim: error: "), err
    assert says in err, err
    assert tree(runs, tmp_path) == before
