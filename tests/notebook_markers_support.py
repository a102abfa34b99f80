"""Helpers of the notebook marker and metadata tests (test_notebook_markers.py):
notebooks written with nbformat and executed for real with nbclient and
ipykernel, so their stored outputs are what Jupyter itself stores, and a
project that renders them with myst-nb.

It holds no tests; test modules import it as a plain module (tests/ is on
sys.path), like helpers.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat
from faults_support import Build, sphinx_build
from helpers import write_project
from nbclient import NotebookClient

CONF = 'project = "nb"\nextensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_preload = []\n'
INDEX = "Notebooks\n=========\n\n.. toctree::\n\n   nb\n"

#: One code cell: (id, source), or (id, source, cell metadata).
CellSpec = tuple[str, str] | tuple[str, str, Mapping[str, Any]]


def executed(cells: Sequence[CellSpec], metadata: Mapping[str, Any] | None = None) -> Any:
    """A notebook of ``cells`` (after a markdown cell), run by nbclient; its
    notebook metadata has a Python kernelspec and ``metadata``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata.update(metadata or {})
    nb.cells.append(nbformat.v4.new_markdown_cell("# A notebook"))
    for spec in cells:
        cell = nbformat.v4.new_code_cell(spec[1], id=spec[0])
        cell.metadata.update(spec[2] if len(spec) > 2 else {})  # type: ignore[misc]
        nb.cells.append(cell)
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    return nb


def cell(nb: Any, cell_id: str) -> Any:
    """The cell ``cell_id`` of ``nb``."""
    return next(c for c in nb.cells if c.get("id") == cell_id)


def build(
    tmp: Path, cache_dir: Path, nb: Any, conf: str = "", files: Mapping[str, str] | None = None
) -> Build:
    """Build a project holding ``nb`` as ``nb.ipynb``, with ``conf`` added to its ``conf.py``."""
    project = write_project(
        tmp / "p", CONF + conf, {"index.rst": INDEX, "nb.ipynb": nbformat.writes(nb), **(files or {})}
    )
    return sphinx_build(project, tmp, cache_dir)


def statuses(built: Build) -> dict[str, str]:
    """snippet id → status, from the build's report."""
    report = json.loads((built.report_dir / "report.json").read_text())
    return {r["snippet_id"]: r["status"] for r in report["snippets"]}
