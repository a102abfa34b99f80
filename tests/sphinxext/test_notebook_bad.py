"""Bad notebooks get clear errors (issue 37): a cell with outputs but no code,
a notebook larger than ``snipcheck_notebook_limit``.  Each warns naming the
file (and the cell), the build goes on with the other pages, and nothing is
written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from faults_support import sphinx_build
from helpers import write_project
from notebook_support import CELLS, CONF, INDEX, cell, executed


@pytest.fixture(scope="module")
def stored() -> Any:
    return executed(CELLS)


def _statuses(built: Any) -> dict[str, str]:
    report = json.loads((built.report_dir / "report.json").read_text())
    return {r["snippet_id"]: r["status"] for r in report["snippets"]}


def test_a_cell_with_outputs_but_no_code_fails_naming_the_notebook_and_cell(
    tmp_path: Path, cache_dir: Path, stored: Any
) -> None:
    nb = copy.deepcopy(stored)
    cell(nb, "printed").source = ""  # its stored "6" is left with nothing to print it
    project = write_project(tmp_path / "p", CONF, {"index.rst": INDEX, "nb.ipynb": nbformat.writes(nb)})
    built = sphinx_build(project, tmp_path, cache_dir)
    (said,) = built.warnings
    assert "notebook nb.ipynb, cell 3 (id printed)" in said and "stores outputs but has no code" in said
    assert "clear its outputs" in said
    assert built.statuscode == 1  # its outputs are unchecked: no green
    statuses = _statuses(built)
    assert statuses.pop("nb/printed") == "error"
    assert statuses == {f"nb/{i}": "ok" for i, _, _ in CELLS if i != "printed"}  # the other cells ran and held
    assert built.before == built.after  # nothing written


def test_an_empty_cell_without_outputs_is_no_fault(tmp_path: Path, cache_dir: Path, stored: Any) -> None:
    nb = copy.deepcopy(stored)
    nb.cells.append(nbformat.v4.new_code_cell("", id="empty"))
    project = write_project(tmp_path / "p", CONF, {"index.rst": INDEX, "nb.ipynb": nbformat.writes(nb)})
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_a_notebook_over_the_size_limit_warns_naming_it_and_the_build_goes_on(
    tmp_path: Path, cache_dir: Path, stored: Any
) -> None:
    big = copy.deepcopy(stored)
    cell(big, "printed").outputs[0].text = "6\n" + "x" * 4000  # a large stored output
    files = {"index.rst": INDEX + "   big\n", "nb.ipynb": nbformat.writes(stored), "big.ipynb": nbformat.writes(big)}
    project = write_project(tmp_path / "p", CONF, files)
    limit = len(nbformat.writes(stored).encode()) + 100
    built = sphinx_build(project, tmp_path, cache_dir, {"snipcheck_notebook_limit": limit})
    (said,) = [w for w in built.warnings if "big.ipynb" in w]
    assert "notebook big.ipynb" in said and f"more than snipcheck_notebook_limit ({limit:,} bytes)" in said, said
    assert "its cells are not run" in said
    assert _statuses(built)["nb/printed"] == "ok"  # the notebook under the limit was checked
    assert built.statuscode == 1 and built.before == built.after
