"""The documentation's Python examples run, and print exactly what the docs show.

Every ```python block in README.md and docs/ is executed (blocks of one page share a
namespace, in order). When a ```text block follows, the printed output must match it.
Blocks that read a real trace skip when ../shared/traces is absent.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.conftest import TRACES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.DOTALL)


def examples(page: Path) -> list[tuple[str, str | None]]:
    """(code, expected output or None) for each python block of a page."""
    blocks = BLOCK.findall(page.read_text())
    out = []
    for i, (kind, body) in enumerate(blocks):
        if kind == "python":
            follows = blocks[i + 1] if i + 1 < len(blocks) else None
            out.append((body, follows[1] if follows and follows[0] == "text" else None))
    return out


@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)], ids=lambda p: p.name)
def test_page_examples(page, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)  # examples use paths relative to the project folder
    namespace: dict[str, object] = {"__name__": "docs_example"}
    for code, expected in examples(page):
        if "../shared/traces" in code and not TRACES.exists():
            pytest.skip(f"example reads a real trace; {TRACES} is absent")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, str(page), "exec"), namespace)
        if expected is not None:
            assert printed.getvalue().rstrip() == expected.rstrip()


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


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "command", "expected"),
    console_examples(),
    ids=[f"{p.name}:{c[:60]}" for p, c, _ in console_examples()],
)
def test_console_examples_print_what_the_docs_show(
    page, command, expected, monkeypatch, capsys, tmp_path
):
    monkeypatch.chdir(ROOT)
    if "../shared/traces" in command and not TRACES.exists():
        pytest.skip(f"example reads a real trace; {TRACES} is absent")
    args = command.split()[1:]
    written = {}
    for flag in ("--out", "-o"):  # keep the project folder clean
        if flag in args:
            k = args.index(flag) + 1
            written[str(tmp_path / flag.strip("-"))], args[k] = (
                args[k],
                str(tmp_path / flag.strip("-")),
            )
    from sitesim.cli import main

    assert main(args) == 0
    captured = capsys.readouterr()
    actual = captured.err.splitlines() + captured.out.splitlines()
    for path, shown in written.items():
        actual = [line.replace(path, shown) for line in actual]
    assert matches(expected, actual), "\n".join(actual)


def test_ci_runs_the_readme_setup_commands():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text().replace(" -q", "")
    for block in SETUP.findall(readme.split("## Set-up")[1].split("\n## ")[0]):
        for command in block.strip().splitlines():
            assert command in ci, f".ci/run does not run the README's set-up command: {command}"


def test_the_configuration_reference_names_every_setting():
    from sitesim.config import ReplayConfig, SiteConfig

    page = (ROOT / "docs" / "reference" / "config.md").read_text()
    missing = [name for cls in (SiteConfig, ReplayConfig) for name in cls.settings()
               if f"`{name}`" not in page]  # fmt: skip
    assert not missing, f"docs/reference/config.md does not describe {missing}"


def test_the_metrics_reference_names_every_summary_field():
    from sitesim.metrics import Summary

    page = (ROOT / "docs" / "reference" / "metrics.md").read_text()
    fields = list(Summary.fields())
    covered = {name for name in fields if f"`{name}`" in page}
    for first, last in re.findall(r"`(\w+)` … `(\w+)`", page):  # a range, in Summary's order
        covered |= set(fields[fields.index(first) : fields.index(last) + 1])
    for prefix in re.findall(r"`(\w+_)…`", page):  # every field of a prefix
        covered |= {name for name in fields if name.startswith(prefix)}
    missing = [name for name in fields if name not in covered]
    assert not missing, f"docs/reference/metrics.md does not describe {missing}"
