"""Notebooks for the tests: written with nbformat and executed for real with nbclient.

The stored outputs are what Jupyter itself stores (stream, execute_result,
error with IPython's traceback), so what snipcheck compares and writes back
is tried against the real thing, not against outputs a test made up.
"""

from __future__ import annotations

from typing import Any

import nbformat
from nbclient import NotebookClient

#: A project whose pages are notebooks that myst-nb renders, its execution off.
CONF = 'project = "nb"\nextensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_preload = []\n'
INDEX = "Notebooks\n=========\n\n.. toctree::\n\n   nb\n"

#: (id, source, tags): a cell of each kind of stored output
CELLS = [
    ("setup", "x = 2", []),
    ("printed", "print(x * 3)", []),
    ("shown", "x + 1", []),
    ("both", "import sys\nprint('out')\nprint('err', file=sys.stderr)\nx * 10", []),
    ("raises", "1 / 0", ["raises-exception"]),
    ("after", "print(x + 100)", []),
]


def executed(cells: list[tuple[str, str, list[str]]]) -> Any:
    """A notebook of a markdown cell then ``cells``, executed by a real kernel."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_markdown_cell("# A notebook\n\nWords."))
    for cell_id, source, tags in cells:
        cell = nbformat.v4.new_code_cell(source, id=cell_id)
        cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    return nb


def cell(nb: Any, cell_id: str) -> Any:
    """The cell of ``nb`` whose id is ``cell_id``."""
    return next(c for c in nb.cells if c.get("id") == cell_id)
