"""``sitesim convert``: each format's test file, skipped lines by reason, and bad input as one
line with exit status 2 and nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sitesim.cli.main import main
from sitesim.workload.swf import read_swf

DATA = Path(__file__).resolve().parent / "data" / "formats"
GOOD = "9|u|a|p|q|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|1|1|COMPLETED"
HEADER = "JobID|User|Account|Partition|QOS|Submit|Start|End|Timelimit|NNodes|NCPUS|State"


NO_PYARROW = "pyarrow is not installed: pip install 'sitesim[parquet]'"


def test_sacct_to_swf_with_mapping_and_platform(tmp_path, capsys):
    out = tmp_path / "site.swf"
    names, platform = tmp_path / "names.json", tmp_path / "site.toml"
    code = main(["convert", str(DATA / "site.sacct"), "-o", str(out), "--mapping", str(names),
                 "--platform-out", str(platform)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "11 jobs written to" in printed
    assert "skipped 3 lines: a job step (give sacct --allocations) 1" in printed
    assert f"{DATA / 'site.sacct'}:12: 1010.batch|" in printed
    trace = read_swf(out)
    assert len(trace) == 11 and trace.header_value("TimeZoneString") == "UTC"
    assert json.loads((tmp_path / "names.json").read_text())["users"]["carol"] == 3
    assert "alice" not in out.read_text()
    # the platform file is one sitesim reads, and the trace replays on it
    assert main(["replay", str(out), "--platform", str(tmp_path / "site.toml")]) == 0
    assert "inferred: 8 nodes, 232 cores, 2 GPUs, 2 partitions" in capsys.readouterr().out


def test_pbs_batsim_and_back(tmp_path, capsys):
    assert main(["convert", str(DATA / "torque.pbs"), "-o", str(tmp_path / "t.swf")]) == 0
    assert "skipped 4 lines: record type Q (only E records end a job) 2" in capsys.readouterr().out
    assert main(["convert", str(DATA / "workload.json"), "-o", str(tmp_path / "w.swf")]) == 0
    assert "4 jobs written" in capsys.readouterr().out
    assert main(["convert", str(tmp_path / "w.swf"), "-o", str(tmp_path / "w2.json")]) == 0
    jobs = json.loads((tmp_path / "w2.json").read_text())["jobs"]
    assert [j["id"] for j in jobs] == ["1", "2", "5", "3"]


def test_a_run_folder_to_batsim_jobs_and_parquet(tmp_path, capsys):
    top = tmp_path / "run"
    assert main(["run", "--users", "3", "--days", "7", "--warmup", "1", "--out", str(top)]) == 0
    assert main(["convert", str(top), "-o", str(tmp_path / "out_jobs.csv")]) == 2
    assert "holds the run folders users-0003-EASY: give one" in capsys.readouterr().err
    run = top / "users-0003-EASY"
    assert main(["convert", str(run), "-o", str(tmp_path / "out_jobs.csv")]) == 0
    lines = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert lines[0].startswith("job_id,workload_name,profile,submission_time")
    assert len(lines) == len((run / "jobs.csv").read_text().splitlines())
    pytest.importorskip(
        "pyarrow", reason="pyarrow is not installed: pip install 'sitesim[parquet]'"
    )
    assert main(["convert", str(run), "--to", "parquet", "-o", str(tmp_path / "tables")]) == 0
    written = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert written == ["jobs.parquet", "users.parquet"]


def test_swf_to_parquet_keeps_the_header(tmp_path):
    pytest.importorskip(
        "pyarrow", reason="pyarrow is not installed: pip install 'sitesim[parquet]'"
    )
    import pyarrow.parquet as pq

    assert main(["convert", str(DATA / "site.sacct"), "-o", str(tmp_path / "s.swf")]) == 0
    assert main(["convert", str(tmp_path / "s.swf"), "-o", str(tmp_path / "s.parquet")]) == 0
    table = pq.read_table(tmp_path / "s.parquet")
    assert table.num_rows == 11 and table.column("runtime_s").to_pylist()[0] == 3600
    header = json.loads(table.schema.metadata[b"sitesim.swf_header"])
    assert header == read_swf(tmp_path / "s.swf").header


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("log.sacct", f"{HEADER}\n{GOOD}\n1|u|a|p|q|2024-01-01T00:00:00\n",
         "log.sacct:3: field Start: line truncated"),
        ("log.sacct", f"{HEADER}\n{GOOD}\n" + GOOD.replace("2024-01-01T00:00:00", "Jan 1 2024"),
         "log.sacct:3: field Submit: 'Jan 1 2024' is not a time sacct prints"),
        ("log.sacct", f"{HEADER}\n{GOOD.replace('|1|1|COMPLETED', '|1|-8|COMPLETED')}\n",
         "log.sacct:2: field NCPUS: '-8' is a negative count"),
        ("log.sacct", (DATA / "torque.pbs").read_text(),
         "log.sacct:1: field header: not sacct --parsable2 output"),
        ("log.pbs", (DATA / "site.sacct").read_text(),
         "log.pbs:1: field record: not a PBS accounting log"),
        ("w.json", "; SWF\n", "w.json:1: field JSON: not a Batsim workload"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, name, content, message):
    source = tmp_path / name
    source.write_text(content)
    out = tmp_path / "out"
    out.mkdir()
    code = main(["convert", str(source), "-o", str(out / "x.swf"), "--mapping",
                 str(out / "names.json")] if not name.endswith(".json") else
                ["convert", str(source), "-o", str(out / "x.swf")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"sitesim: error: {tmp_path}/{message}")
    assert list(out.iterdir()) == []


def test_outputs_are_not_replaced_without_force(tmp_path, capsys):
    out = tmp_path / "x.swf"
    out.write_text("precious")
    assert main(["convert", str(DATA / "torque.pbs"), "-o", str(out)]) == 2
    assert "exists; give --force" in capsys.readouterr().err and out.read_text() == "precious"
    assert main(["convert", str(DATA / "torque.pbs"), "-o", str(out), "--force"]) == 0
    assert len(read_swf(out)) == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x.txt", "-o", "y.swf"], "cannot tell its format from the name; give --from"),
        (["site.sacct", "-o", "y.txt"], "cannot tell the output format from the name"),
        (["workload.json", "-o", "y_jobs.csv"], "cannot convert Batsim JSON workload to"),
        (["torque.pbs", "-o", "y.swf", "--platform-out", "p.toml"], "only sacct output shows"),
        (["site.sacct", "-o", "y.swf", "--timezone", "Mars/Olympus"], "not an IANA time zone"),
    ],
)
def test_usage_errors(tmp_path, capsys, monkeypatch, args, message):
    for name in ("site.sacct", "torque.pbs", "workload.json"):
        shutil.copy(DATA / name, tmp_path / name)
    (tmp_path / "x.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    assert main(["convert", *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "y.swf").exists()


def test_help_lists_every_format_and_option(capsys):
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    text = capsys.readouterr().out
    for word in ("sacct", "pbs", "batsim-jobs", "parquet", "--timezone", "--submit-time",
                 "--mapping", "--platform-out", "--force", "exit status 2"):  # fmt: skip
        assert word in text, word


def test_an_output_that_cannot_be_made_stops_before_any_is_written(tmp_path, capsys):
    source = tmp_path / "log.sacct"
    source.write_text(
        "JobID|User|Submit|Start|End|NCPUS|State\n"
        "1|u|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|1|COMPLETED\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    args = ["convert", str(source), "-o", str(out / "x.swf"), "--mapping",
            str(out / "names.json"), "--platform-out", str(out / "p.toml")]  # fmt: skip
    assert main(args) == 2
    assert "no platform to write" in capsys.readouterr().err
    assert list(out.iterdir()) == []
