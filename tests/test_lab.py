"""The lab notebook (docs/lab.ipynb) and its solutions (docs/lab-solutions.ipynb) run from top
to bottom as a lecturer would run them; the first exercises show the event list they
describe, and the solutions print what their answers say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def executed(name: str) -> tuple[Any, str]:
    """The notebook ``name`` executed in a fresh kernel in docs/ (where ``jupyter lab
    docs/lab.ipynb`` starts its kernels), and the text its cells printed."""
    nbformat = pytest.importorskip("nbformat", reason="needs nbformat (the dev extra)")
    nbclient = pytest.importorskip("nbclient", reason="needs nbclient (the dev extra)")
    pytest.importorskip("ipykernel", reason="needs ipykernel (the dev extra)")
    notebook = nbformat.read(DOCS / name, as_version=4)
    assert not any(c.get("outputs") for c in notebook.cells if c.cell_type == "code"), (
        f"commit {name} without outputs"
    )
    client = nbclient.NotebookClient(
        notebook, timeout=180, kernel_name="python3",
        resources={"metadata": {"path": str(DOCS)}},
    )  # fmt: skip
    client.execute()  # (raises CellExecutionError, naming the cell, on any error)
    text = "".join(
        output.get("text", "")
        for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )  # fmt: skip
    return notebook, text


def test_the_lab_notebook_runs():
    notebook, text = executed("lab.ipynb")
    assert "t=    2  select   4 free -> start [3]" in text  # EASY backfills job 3 at t = 2
    assert "starts: [0.0, 100.0, 2.0, 200.0]" in text
    # the tiny site: the users' events, and the queue at the pauses
    for event in ("submits job", "waits for job", "continues the session", "takes a break"):
        assert event in text, event
    assert ">> d0 Mon 12:00:00  waiting [10:2 15:1]  running [9:2]" in text
    assert "c = 8, rho = 0.8: P(wait)" in text  # the M/M/c check
    images = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]  # fmt: skip
    assert len(images) == 2  # the Gantt chart and the lanes


def test_the_solutions_run_and_print_what_their_answers_say():
    notebook, text = executed("lab-solutions.ipynb")
    lab = [c.source for c in executed_cells("lab.ipynb")]
    solutions = [c.source for c in notebook.cells]
    # every lab cell but its introduction, in order, with the answers among them
    assert [s for s in solutions if s in lab] == lab[1:]
    answers = [s for s in solutions if s.startswith("**A.**")]
    questions = [s for s in lab if s.startswith("**Q.**")]
    assert len(answers) == len(questions) == 7
    # the answers' facts, as the cells compute them
    assert "window closed: session over, back at d1 Tue" in text  # user 1, q2
    assert "paired: the interval excludes zero from" in text
    assert "c = 8, rho = 0.95" in text
    assert "job 377: submitted day 4.05, ran days 4.47-5.74" in text  # user 9's first wide job


def executed_cells(name: str) -> list[Any]:
    nbformat = pytest.importorskip("nbformat", reason="needs nbformat (the dev extra)")
    return list(nbformat.read(DOCS / name, as_version=4).cells)
