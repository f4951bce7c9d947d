"""DataFrames and Parquet: typed columns, units in the names, the same whichever way read."""

from __future__ import annotations

import numpy as np
import pytest

import sitesim
from sitesim.formats.tables import load, records_frame, swf_frame
from sitesim.results.report import write_outputs
from sitesim.schedulers import create
from sitesim.workload.swf import SWFTrace
from tests.conftest import run_jobs

pd = pytest.importorskip("pandas", reason="pandas is not installed: pip install 'sitesim[pandas]'")

JOBS = [(0, 3, 10, 12), (0, 2, 5), (1, 4, 8, 4), (5, 2, 20), (9, 5, 3)]


NO_PYARROW = "pyarrow is not installed: pip install 'sitesim[parquet]'"


def test_to_pandas_types_the_columns_and_names_their_units():
    result = run_jobs(JOBS, 8, create("EASY"))
    frame = sitesim.to_pandas(result)
    assert len(frame) == len(JOBS)
    for name in ("submit_s", "start_s", "end_s", "wait_s", "response_s", "runtime_s",
                 "estimate_s", "think_s"):  # fmt: skip
        assert frame[name].dtype == np.float64, name
    assert frame["procs"].dtype == np.int64 and frame["procs"].tolist() == [3, 2, 4, 2, 5]
    assert frame["killed"].dtype == bool and frame["killed"].tolist()[2]
    assert isinstance(frame["state"].dtype, pd.CategoricalDtype)
    assert frame["state"].tolist() == ["completed", "completed", "killed", "completed",
                                       "completed"]  # fmt: skip
    assert (frame["wait_s"] == frame["start_s"] - frame["submit_s"]).all()


def test_load_reads_a_run_folder_back_to_the_same_frame(tmp_path):
    result = run_jobs(JOBS, 8, create("EASY"))
    folder = write_outputs(tmp_path / "run", result, users=True)
    tables = sitesim.load(folder)
    pd.testing.assert_frame_equal(tables.jobs, sitesim.to_pandas(result))
    assert tables.results is not None and tables.results["procs"] == 8
    assert "response_mean_min" in tables.users.columns
    with pytest.raises(sitesim.SitesimError, match="holds no runs table"):
        tables.runs  # noqa: B018


def test_load_refuses_what_is_not_a_run_folder(tmp_path):
    with pytest.raises(sitesim.SitesimError, match="not a folder"):
        load(tmp_path / "missing")
    with pytest.raises(sitesim.SitesimError, match="holds no table sitesim writes"):
        load(tmp_path)


def test_an_swf_frame_keeps_integers_and_names_units():
    data = np.array([[1, 0, 5, 60, 4, 12.5, 2048, 4, 120, 4096, 1, 7, 1, 2, 1, 3, -1, -1]], float)
    frame = swf_frame(SWFTrace("t", [], data))
    assert frame.columns[:5].tolist() == ["job", "submit_s", "wait_s", "runtime_s", "procs"]
    assert frame["procs"].dtype == np.int64 and frame["cpu_s"].tolist() == [12.5]
    assert frame["req_memory_kb"].tolist() == [4096.0]


def test_parquet_of_a_run_folder_loads_as_the_csv_did(tmp_path):
    pytest.importorskip(
        "pyarrow", reason="pyarrow is not installed: pip install 'sitesim[parquet]'"
    )
    from sitesim.formats.tables import run_tables_parquet

    result = run_jobs(JOBS, 8, create("EASY"))
    folder = write_outputs(tmp_path / "run", result, users=True)
    out = tmp_path / "tables"
    out.mkdir()
    assert run_tables_parquet(load(folder), out) == ["jobs.parquet", "users.parquet"]
    again = load(out)
    pd.testing.assert_frame_equal(again.jobs, records_frame(result.records))
    pd.testing.assert_frame_equal(again.users, load(folder).users)
