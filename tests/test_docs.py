"""The documentation's examples run, and print exactly what the docs show.

Every ```python block in README.md and docs/ is executed, each on its own, as a reader who
copies it would run it; a block whose first line is a comment starting "# continues" runs
after the page's blocks before it, in their namespace. A block that begins with a comment
"# needs: module, module" (an optional package: gymnasium, stable-baselines3) runs only where
those modules import; where one does not, the page's other blocks run and the test is then
reported skipped, naming the modules. When a ```text block follows, the
printed output must match it. Every `$ sitesim ...` line of a ```console block runs, and so
does the command of a ```sh block that a ```text block follows (the README's first run, the
tutorial's teaching demo): what it prints must begin with the text block. The replications
how-to's sweep files run, and its tables are what they give. Examples that read a real trace
skip when ../shared/traces is absent.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import TRACES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
#: The first line of a python block that runs after the page's blocks before it.
CONTINUES = "# continues"
#: A comment line of a python block naming the optional modules it needs.
NEEDS = re.compile(r"^# needs: (.+)$", re.MULTILINE)


def missing_modules(code: str) -> list[str]:
    """The modules a block's ``# needs:`` line names that do not import here."""
    found = NEEDS.search(code)
    names = [name.strip() for name in found.group(1).split(",")] if found else []
    return [name for name in names if importlib.util.find_spec(name) is None]


def fenced(page: Path) -> list[tuple[str, str]]:
    """(language, body) of each fenced block of a page, in order."""
    return FENCE.findall(page.read_text())


def followed_by_text(page: Path, kind: str) -> list[tuple[str, str | None]]:
    """(body, the text block right after it or None) for each ``kind`` block of a page."""
    blocks = fenced(page)
    out = []
    for i, (language, body) in enumerate(blocks):
        if language == kind:
            follows = blocks[i + 1] if i + 1 < len(blocks) else None
            out.append((body, follows[1] if follows and follows[0] == "text" else None))
    return out


def examples(page: Path) -> list[tuple[str, str | None]]:
    """(code, expected output or None) for each python block of a page."""
    return followed_by_text(page, "python")


def load_file(path: Path) -> ModuleType:
    """A Python file of the project (a scenario, a docs script) loaded as a module."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)], ids=lambda p: p.name)
def test_page_examples(page, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)  # examples use paths relative to the project folder
    namespace: dict[str, object] = {}
    skipped: set[str] = set()
    skipping = False
    for code, expected in examples(page):
        if "../shared/traces" in code and not TRACES.exists():
            pytest.skip(f"example reads a real trace; {TRACES} is absent")
        if not code.startswith(CONTINUES):
            namespace = {"__name__": "docs_example"}  # a block runs alone
            skipping = False
        missing = missing_modules(code)
        skipping = skipping or bool(missing)  # (a block that continues a skipped one too)
        if skipping:
            skipped.update(missing)
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, str(page), "exec"), namespace)
        if expected is not None:
            assert printed.getvalue().rstrip() == expected.rstrip()
    if skipped:
        pytest.skip(f"the page's other examples ran; some need {', '.join(sorted(skipped))}")


CONSOLE = re.compile(r"```console\n(.*?)```", re.DOTALL)
SETUP = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def console_examples() -> list[tuple[Path, str, list[str]]]:
    """(page, command, expected output lines) of every `$ sitesim ...` line in the docs."""
    found = []
    for page in PAGES:
        for block in CONSOLE.findall(page.read_text()):
            command, expected = None, []
            for line in [*block.splitlines(), "$ end"]:
                if line.startswith("$ "):
                    if command is not None:
                        found.append((page, command, expected))
                    command, expected = line[2:], []
                    if not command.startswith("sitesim "):
                        command = None
                else:
                    expected.append(line)
    return found


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line; a line '...' stands for any number of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return (
        bool(actual)
        and expected[0].rstrip() == actual[0].rstrip()
        and matches(expected[1:], actual[1:])
    )


def shown_commands() -> list[tuple[Path, str, list[str]]]:
    """(page, command, expected output lines) for every ```sh block of one command that a
    ```text block follows; the command is the last of an ``&&`` chain (the README's first
    run). The text block shows the table: the lines after it (files written) may be left out."""
    found = []
    for page in PAGES:
        for body, expected in followed_by_text(page, "sh"):
            if expected is not None:
                (line,) = body.strip().splitlines()
                command = line.split("&&")[-1].strip()
                found.append((page, command, [*expected.rstrip().splitlines(), "..."]))
    return found


COMMANDS = console_examples() + shown_commands()
#: Commands that more than one page shows (the replay of SDSC-SP2 in the README and in the
#: tutorial): they run once, and every page's output is compared with that run's.
SHARED = {c for c in (c for _, c, _ in COMMANDS) if sum(c == d for _, d, _ in COMMANDS) > 1}
#: What each shared command printed, once it ran in this process (``--dist loadfile`` runs a
#: module's tests in one worker).
PRINTED: dict[str, list[str]] = {}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "command", "expected"),
    COMMANDS,
    ids=[f"{p.name}:{c[:60]}" for p, c, _ in COMMANDS],
)
def test_commands_print_what_the_docs_show(page, command, expected, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(ROOT)
    if "../shared/traces" in command and not TRACES.exists():
        pytest.skip(f"example reads a real trace; {TRACES} is absent")
    actual = PRINTED.get(command)
    if actual is None:
        written = run_command(command, tmp_path)
        captured = capsys.readouterr()
        actual = shown_as(captured.err.splitlines() + captured.out.splitlines(), written)
        if command in SHARED:
            PRINTED[command] = actual
    assert matches(expected, actual), "\n".join(actual)


def test_the_readme_and_the_tutorial_share_the_replay_of_sdsc_sp2():
    """Their replay of SDSC-SP2 under four schedulers runs once for both pages."""
    pages = {p.name for p, c, _ in COMMANDS if c in SHARED and "SDSC-SP2" in c}
    assert pages == {"README.md", "tutorial.md"}


def run_command(command: str, tmp_path: Path) -> dict[str, str]:
    """Run a documented ``sitesim ...`` or ``python scenarios/NAME.py ...`` command in this
    process, its output folder moved into ``tmp_path`` (the project folder stays clean).
    Returns the folders moved: where they went -> the folder the docs name."""
    args = shlex.split(command)
    written = {}
    for flag in ("--out", "-o"):
        if flag in args:
            k = args.index(flag) + 1
            written[str(tmp_path / flag.strip("-"))], args[k] = (
                args[k],
                str(tmp_path / flag.strip("-")),
            )
    if args[0] == "sitesim":
        from sitesim.cli.main import main

        assert main(args[1:]) == 0
    elif args[0] == "python" and args[1].startswith("scenarios/"):
        assert load_file(ROOT / args[1]).main(args[2:]) == 0
    else:
        pytest.fail(f"the docs test cannot run {command!r}")
    return written


def shown_as(lines: list[str], written: dict[str, str]) -> list[str]:
    """Output lines with the folders moved by :func:`run_command` named as in the docs."""
    for path, shown in written.items():
        lines = [line.replace(path, shown) for line in lines]
    return lines


def test_the_readme_and_the_tutorial_show_their_first_run():
    shown = {(page.name, command) for page, command, _ in shown_commands()}
    first_run = "sitesim run --users 20 --scheduler FCFS,EASY --days 91"
    assert ("README.md", first_run) in shown
    assert ("tutorial.md", "python scenarios/teaching_demo.py --out runs/demo") in shown
    assert any(first_run in command for _, command, _ in console_examples())  # the tutorial


def first_run_table(text: str) -> dict[str, list[float]]:
    """The rows of the first run's table (20 users, FCFS and EASY) shown in a page."""
    rows = re.findall(r"^20 +([\d. ]+?) +(FCFS|EASY)$", text, re.MULTILINE)
    table = {name: [float(x) for x in values.split()] for values, name in rows}
    assert sorted(table) == ["EASY", "FCFS"] and len(rows) == 2, rows
    return table


@pytest.mark.parametrize("name", ["README.md", "docs/tutorial.md"])
def test_the_sentences_after_the_first_run_quote_its_table(name):
    text = (ROOT / name).read_text()
    table = first_run_table(text)  # utilization, throughput, jobs/session, response, slowdown
    (easy_u, easy_x, easy_j, *_), (fcfs_u, fcfs_x, fcfs_j, *_) = table["EASY"], table["FCFS"]
    (more,) = re.findall(r"(\d+) % more work", text)
    assert int(more) == round(100 * (easy_x / fcfs_x - 1)), "the gain in throughput"
    # the quoted values, rounded from the table's three decimals
    quoted = {
        r"\(([\d.]+) jobs per session instead of ([\d.]+)\)": (easy_j, fcfs_j),
        r"\(([\d.]+) against ([\d.]+)\)": (easy_u, fcfs_u),
    }
    for pattern, values in quoted.items():
        for found in re.findall(pattern, text):
            for number, value in zip(found, values, strict=True):
                assert abs(float(number) - value) <= 0.0051, (pattern, found, values)


def test_the_readme_quotes_the_open_versus_closed_error_of_the_results_page():
    """The ratio of the open replay's mean response to the users' own, at 10 users (the
    spec's point), in the README and in the results page: from the results table."""
    results = (ROOT / "docs" / "results" / "open-vs-closed.md").read_text()
    errors = [
        float(error.replace(",", ""))
        for error in re.findall(r"^\| EASY trace → FCFS \| 10 \|[^|]*\|[^|]*\|[^|]*\| \+([\d,]+) ±",
                                results, re.MULTILINE)
    ]  # fmt: skip
    assert len(errors) == 3, errors  # 28, 91 and 182 days
    low, high = round(1 + min(errors) / 100), round(1 + max(errors) / 100)
    assert f"{low} to {high} times" in results
    assert f"{low}–{high} times" in (ROOT / "README.md").read_text()


REPLICATIONS = ROOT / "docs" / "howto" / "replications.md"
SWEEPS = ROOT / "docs" / "howto" / "replications"


def test_the_replications_page_shows_its_sweep_files():
    shown = [body for language, body in fenced(REPLICATIONS) if language == "toml"]
    names = [re.match(r"# (\w+\.toml):", body) for body in shown]
    assert all(names), "each sweep file shown starts with '# NAME.toml:'"
    assert {name[1] for name in names if name} == {p.name for p in SWEEPS.glob("*.toml")}
    for body, name in zip(shown, names, strict=True):
        assert name is not None and (SWEEPS / name[1]).read_text() == body


@pytest.mark.slow
def test_the_replications_tables_are_what_the_sweeps_give(tmp_path):
    """The page's three sweeps in full (110 runs, about 10 s on one core; the page runs them on
    every core, which gives the same runs), then its script."""
    from sitesim.cli.main import main

    for name in ("horizon", "pair20", "warmup"):
        toml = SWEEPS / f"{name}.toml"
        assert main(["sweep", str(toml), "--out", str(tmp_path / name), "--serial",
                     "--results-only"]) == 0  # fmt: skip
    page = REPLICATIONS.read_text()
    tables = load_file(SWEEPS / "tables.py").tables(tmp_path)
    assert len(tables) == len(re.findall(r"^\| ---: \|", page, re.MULTILINE))
    for table in tables:
        assert table in page, table


def test_ci_runs_the_readme_setup_commands():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text().replace(" -q", "")
    for block in SETUP.findall(readme.split("## Set-up")[1].split("\n## ")[0]):
        for command in block.strip().splitlines():
            assert command in ci, f".ci/run does not run the README's set-up command: {command}"


def test_the_configuration_reference_names_every_setting():
    from sitesim.runs.config import ReplayConfig, SiteConfig

    page = (ROOT / "docs" / "reference" / "config.md").read_text()
    missing = [name for cls in (SiteConfig, ReplayConfig) for name in cls.settings()
               if f"`{name}`" not in page]  # fmt: skip
    assert not missing, f"docs/reference/config.md does not describe {missing}"


def test_the_metrics_reference_names_every_summary_field():
    from sitesim.engine.metrics import Summary

    page = (ROOT / "docs" / "reference" / "metrics.md").read_text()
    fields = list(Summary.fields())
    covered = {name for name in fields if f"`{name}`" in page}
    for first, last in re.findall(r"`(\w+)` … `(\w+)`", page):  # a range, in Summary's order
        covered |= set(fields[fields.index(first) : fields.index(last) + 1])
    for prefix in re.findall(r"`(\w+_)…`", page):  # every field of a prefix
        covered |= {name for name in fields if name.startswith(prefix)}
    missing = [name for name in fields if name not in covered]
    assert not missing, f"docs/reference/metrics.md does not describe {missing}"


def test_the_user_models_page_shows_what_the_validation_gives(tmp_path):
    """docs/background/users.md's validation numbers are scenarios/validate_users.py's output:
    every cell of its table and the numbers of the sentences after it (the full run, about
    20 s)."""
    import json

    module = load_file(ROOT / "scenarios" / "validate_users.py")
    with contextlib.redirect_stdout(io.StringIO()):
        assert module.main(["--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "validation.json").read_text())
    static, cycles = data["static"], data["cycles"]
    page = (ROOT / "docs" / "background" / "users.md").read_text()
    section = page[page.index("## Validation against the profile") :]

    def number(value: float) -> str:
        return f"{value:g}" if float(value).is_integer() else f"{value:.1f}"

    for name, row in static["distributions"].items():
        unit = "" if name in ("batch widths", "sizes") else " s"
        expected = (
            f"| {name} | {row['samples']:,} | {row['ks_vs_profile']:.4f} | "
            f"{row['ks_noise_floor']:.4f} | {number(row['median_simulated'])}{unit} | "
            f"{number(row['median_profile'])}{unit} |"
        )
        assert expected in section, expected
    decomposed = static["distributions"]
    pct = {key: f"{100 * value:.1f} %" for key, value in cycles.items() if isinstance(value, float)}
    quoted = [
        f"{static['users']} static users for {static['days']} days ({static['jobs']:,} jobs)",
        f"(KS {decomposed['think times']['ks_decomposed_vs_profile']:.4f})",
        f"({decomposed['batch widths']['ks_decomposed_vs_profile']:.4f})",
        f"({decomposed['inter-submission gaps']['ks_decomposed_vs_profile']:.4f})",
        f"{cycles['users']} complete users for {cycles['days']} days ({cycles['jobs']:,} jobs)",
        f"{pct['daytime_share']} of submissions fall",
        f"{pct['weekday_share']} on weekdays",
        f"{100 * cycles['day_workers']:.0f} % day workers",
        f"{100 * cycles['weekday_workers']:.0f} % weekday workers",
        f"made {pct['share_by_day_workers']} and {pct['share_by_weekday_workers']} of",
        f"({pct['continuation_share']} of",
        f"only {pct['continuations_in_own_window']} of the time",
    ]
    flat = " ".join(section.split())
    for text in quoted:
        assert " ".join(text.split()) in flat, text
