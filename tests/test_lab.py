"""The lab notebook (docs/lab.ipynb) runs from top to bottom as a lecturer would run it, and
its first exercise shows the event list it describes."""

from __future__ import annotations

from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[1] / "docs" / "lab.ipynb"


def test_the_lab_notebook_runs():
    nbformat = pytest.importorskip("nbformat", reason="needs nbformat (the dev extra)")
    nbclient = pytest.importorskip("nbclient", reason="needs nbclient (the dev extra)")
    pytest.importorskip("ipykernel", reason="needs ipykernel (the dev extra)")
    notebook = nbformat.read(LAB, as_version=4)
    assert not any(c.get("outputs") for c in notebook.cells if c.cell_type == "code"), (
        "commit the lab without outputs"
    )
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3",
        resources={"metadata": {"path": str(LAB.parent.parent)}},
    )  # fmt: skip
    client.execute()  # (raises CellExecutionError, naming the cell, on any error)
    text = "".join(
        output.get("text", "")
        for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )  # fmt: skip
    assert "t=    2  select   4 free -> start [3]" in text  # EASY backfills job 3 at t = 2
    assert "starts: [0.0, 100.0, 2.0, 200.0]" in text
    images = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]  # fmt: skip
    assert len(images) == 2  # the Gantt chart and the lanes
