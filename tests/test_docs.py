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
