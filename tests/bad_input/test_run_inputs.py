"""Bad input to the commands that run simulations (issue 32): one line on stderr, exit status 2,
nothing written. Each case failed before its fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_bad_input import error

TRACE = """\
; MaxProcs: 8
1 0 0 100 2 -1 -1 2 600 -1 1 1 -1 -1 -1 -1 -1 -1
2 10 0 50 4 -1 -1 4 600 -1 1 2 -1 -1 -1 -1 -1 -1
"""


def sweep_file(factors: str, seeds: str) -> str:
    return f'out = "o"\nseeds = {seeds}\n[base]\ndays = 3\nwarmup_days = 0\n[factors]\n{factors}\n'


WIDE, SEEDS = list(range(1, 202)), str(list(range(25)))  # (201 x 2 levels x 25 seeds)
#: (command line, its files, the end of the one line it prints); "o" is the output folder.
CASES = {
    "run: a scheduler twice": (
        ["run", "-s", "EASY,EASY", "--days", "3", "--warmup", "0", "--out", "o"],
        {},
        "argument --scheduler/-s: EASY is given twice in 'EASY,EASY'",
    ),
    "run: a scheduler twice, in two cases": (
        ["run", "-s", "FCFS,easy,Easy", "--days", "3", "--warmup", "0", "--out", "o"],
        {},
        "argument --scheduler/-s: EASY is given twice in 'FCFS,easy,Easy' ('Easy' is EASY)",
    ),
    "replay: a scheduler twice": (
        ["replay", "t.swf", "-s", "CONSERVATIVE,conservative", "--out", "o"],
        {"t.swf": TRACE},
        "CONSERVATIVE is given twice in 'CONSERVATIVE,conservative' "
        "('conservative' is CONSERVATIVE)",
    ),
    "compare: the same scheduler twice": (
        ["compare", "--schedulers", "FCFS,FCFS", "--out", "o"],
        {},
        "argument --schedulers: FCFS is given twice in 'FCFS,FCFS'",
    ),
    "sweep: a million runs": (
        ["sweep", "s.toml"],
        {"s.toml": sweep_file("users = [1, 2]", "500_000")},
        "s.toml: the sweep plans 1,000,000 runs (factor levels x seeds: 2 x 500,000), more "
        "than the limit of 10,000; if you mean it, raise the limit (sitesim sweep --max-runs "
        "N; max_runs=N in Python)",
    ),
    "sweep: a million runs, dry": (
        ["sweep", "s.toml", "--dry-run"],
        {"s.toml": sweep_file("users = [1, 2]", "500_000")},
        "s.toml: the sweep plans 1,000,000 runs (factor levels x seeds: 2 x 500,000), more "
        "than the limit of 10,000; if you mean it, raise the limit (sitesim sweep --max-runs "
        "N; max_runs=N in Python)",
    ),
    "sweep: seeds no memory could list": (
        ["sweep", "s.toml", "--dry-run", "--max-runs", "1000000"],
        {"s.toml": sweep_file("users = [1]", "1_000_000_000_000_000")},
        "the sweep plans 1,000,000,000,000,000 runs (factor levels x seeds: 1 x "
        "1,000,000,000,000,000), more than the limit of 1,000,000; if you mean it, raise "
        "the limit (sitesim sweep --max-runs N; max_runs=N in Python)",
    ),
    "sweep: levels x seeds over the limit": (
        ["sweep", "s.toml"],
        {"s.toml": sweep_file(f"users = {WIDE}\nscheduler = ['FCFS', 'EASY']", SEEDS)},
        "the sweep plans 10,050 runs (factor levels x seeds: 402 x 25), more than the limit of "
        "10,000",
    ),
    "sweep: over --max-runs": (
        ["sweep", "s.toml", "--max-runs", "5"],
        {"s.toml": sweep_file("users = [1, 2, 3]", "[4, 5]")},
        "the sweep plans 6 runs (factor levels x seeds: 3 x 2), more than the limit of 5; if "
        "you mean it, raise the limit (sitesim sweep --max-runs N; max_runs=N in Python)",
    ),
    "sweep: --max-runs 0": (
        ["sweep", "s.toml", "--max-runs", "0"],
        {"s.toml": sweep_file("users = [1]", "1")},
        "argument --max-runs: must be a whole number >= 1, got 0",
    ),
}


@pytest.mark.parametrize(("argv", "files", "message"), CASES.values(), ids=CASES.keys())
def test_a_bad_command_line_is_one_line_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    files: dict[str, str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    line = error(capsys, argv)
    assert line.startswith("sitesim") and message in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)  # nothing written
