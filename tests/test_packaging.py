"""Packaging: every package ships, and no module can be loaded twice under two names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def packages_in(folder: Path, name: str) -> set[str]:
    """Dotted names of the packages under ``folder`` installed as ``name`` (no symlinks)."""
    found = set()
    for path, _, files in os.walk(folder):  # does not follow symlinks
        if "__init__.py" in files:
            found.add(".".join((name, *Path(path).relative_to(folder).parts)))
    return found


def test_every_package_folder_is_listed_in_pyproject():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for name, folder in setuptools["package-dir"].items():
        found |= packages_in(ROOT / folder, name)
    assert sorted(setuptools["packages"]) == sorted(found)


@pytest.mark.parametrize("name", ["models", "models.users", "schedulers", "schedulers.base"])
def test_mapped_folders_cannot_be_imported_a_second_time(name):
    """From the project folder, ``models`` is on the path; importing it must fail clearly."""
    code = f"import {name}"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert "ImportError: import sitesim." in done.stderr.splitlines()[-1]


def test_the_installed_names_load_once():
    code = (
        "import sys, sitesim.models.users, sitesim.schedulers;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('models', 'schedulers')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_import_sitesim_is_light_and_gives_the_public_api():
    code = (
        "import sys, sitesim; heavy = [m for m in ('simpy', 'numpy', 'scipy', 'matplotlib') "
        "if m in sys.modules]; print(heavy);"
        "print(all(callable(getattr(sitesim, n)) for n in sitesim.__all__ if n != '__version__'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["[]", "True"]


def test_the_command_line_does_not_load_scipy_or_matplotlib():
    code = "import sys, sitesim.cli.main; print(sorted({'scipy', 'matplotlib'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_classroom_extra_installs_what_the_lab_needs():
    """`pip install -e '.[classroom]'` then `jupyter lab docs/lab.ipynb` (docs/index.md):
    JupyterLab and a kernel, widgets, and nbconvert/nbclient to execute the notebooks."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    names = {re.split(r"[<>=\[]", spec)[0] for spec in extras["classroom"]}
    assert {"jupyterlab", "ipykernel", "ipywidgets", "nbconvert", "nbformat", "nbclient"} <= names
