"""Every scenario's --quick mode runs in the tests."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, SCENARIOS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_scenario_is_tested():
    tested = {"validate_users"}
    assert {p.stem for p in SCENARIOS.glob("*.py")} == tested


def test_validate_users_quick(tmp_path, capsys):
    assert load("validate_users").main(["--quick", "--out", str(tmp_path)]) == 0
    assert "KS vs profile" in capsys.readouterr().out
    data = json.loads((tmp_path / "validation.json").read_text())
    rows = data["static"]["distributions"]
    assert set(rows) == {
        "batch widths",
        "sizes",
        "runtimes",
        "inter-submission gaps",
        "think times",
    }
    # generous bounds for a short run: the long run's numbers are in docs/reference/users.md
    for name, row in rows.items():
        assert row["ks_vs_profile"] < max(3 * row["ks_noise_floor"], 0.1), name
    assert data["cycles"]["batch_starts_in_own_window"] == pytest.approx(1.0)
