"""Circles in the import graph of ``snipcheck`` and ``snipcheck_chapter``.

``python tests/import_circles.py EXT`` reads the packages under the folder
``EXT`` (put first on ``sys.path``: grimp finds a package as ``import``
would, so the packages this interpreter has already imported cannot be read
from another folder in the same process) and prints every circle, one block
each, its imports as ``importer:line -> imported (statement)``; exit status
1 when there is one.

A circle is a set of modules that import one another round (a strongly
connected component of more than one module), whatever the kind of import:
grimp reads every import statement, those inside functions and under
``if TYPE_CHECKING:`` too.  import-linter's ``acyclic_siblings`` contract
compares sibling modules only; this also sees a package that imports one of
its own modules which imports the package back.
"""

from __future__ import annotations

import sys

import grimp

PACKAGES = ("snipcheck", "snipcheck_chapter")


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every circle of ``graph``, each a sorted list of modules (Tarjan's
    algorithm, iterative: no recursion limit to mind)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def enter(module: str) -> tuple[str, object]:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        return module, iter(sorted(graph.find_modules_directly_imported_by(module)))

    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [enter(start)]
        while work:
            module, todo = work[-1]
            for imported in todo:  # type: ignore[attr-defined]
                if imported not in index:
                    work.append(enter(imported))
                    break
                if imported in on_stack:
                    low[module] = min(low[module], index[imported])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def describe(graph: grimp.ImportGraph, circle: list[str]) -> str:
    """The imports within ``circle``, one a line."""
    members = set(circle)
    lines = [f"circle: {', '.join(circle)}"]
    for importer in circle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"  {importer}:{detail['line_number']} -> {imported} ({detail['line_contents']})")
    return "\n".join(lines)


def main(ext: str) -> int:
    sys.path.insert(0, ext)
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    found = circles(graph)
    for circle in found:
        print(describe(graph, circle))
    print(f"{len(graph.modules)} modules, {len(found)} circles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
