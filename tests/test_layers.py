"""The layers of sitesim/ (docs/development.md): no import cycle between its modules (imports
inside functions count; those only type checkers see do not), and the contracts of
``[tool.importlinter]`` in pyproject.toml, which CI checks with ``lint-imports``."""

from __future__ import annotations

import sys

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the dev extra)")


def cycles(graph: object, prefix: str = "sitesim") -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    modules = sorted(m for m in graph.modules if m.startswith(prefix))  # type: ignore[attr-defined]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):  # type: ignore[attr-defined]
            if not w.startswith(prefix):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in modules:
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_module_of_sitesim_imports_itself_through_others():
    graph = grimp.build_graph("sitesim", exclude_type_checking_imports=True)
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    edges = {"sitesim.a": {"sitesim.b"}, "sitesim.b": {"sitesim.a"}, "sitesim.c": set()}

    class Graph:
        modules = frozenset(edges)

        def find_modules_directly_imported_by(self, module: str) -> set[str]:
            return edges[module]

    assert cycles(Graph()) == [["sitesim.a", "sitesim.b"]]
