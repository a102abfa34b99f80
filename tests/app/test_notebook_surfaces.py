"""Every surface knows notebooks (issue 37): ``pytest --snipcheck``, ``verify``,
``run`` and the shards of ``execute`` read a notebook page's cells from the
placement index the build reads, and judge them through the one check step.

The notebook is written with nbformat and executed for real (nbclient,
ipykernel), so its stored outputs are what Jupyter stores; every command runs
in a subprocess, as a user runs it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import snipcheck_cli, write_project
from notebook_support import executed

CONF = (
    'project = "nb"\nextensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\n'
    'snipcheck_preload = []\nsnipcheck_runner = "subprocess"\nexclude_patterns = ["_build"]\n'
)
INDEX = "Notebooks\n=========\n\n.. toctree::\n\n   nb\n   other\n"
OTHER = "Other\n=====\n\n.. snippet-code:: other/a\n\n   print('a')\n\n.. snippet:: other/a\n\n   a\n"
# (id, source, tags); a markdown cell comes first, so code cell k is the notebook's cell k + 1
CELLS = [
    ("setup", "x = 2", []),
    ("printed", "print(x * 3)", []),
    ("shown", "x + 1", []),
    ("drawn", "# NBVAL_IGNORE_OUTPUT\nimport random\nprint(random.random())", []),
    ("raises", "1 / 0", ["raises-exception"]),
    ("skipped", "undefined_name", ["skip-execution"]),
    ("after", "print(x + 100)", []),
]
RUN = [i for i, _, tags in CELLS if "skip-execution" not in tags]


@pytest.fixture(scope="module")
def stored() -> Any:
    """The notebook, executed once for the module; the random draw's stored
    output is one no run prints again (a cell that must not be compared)."""
    nb = executed(CELLS)
    _cell(nb, "drawn").outputs = [nbformat.v4.new_output("stream", name="stdout", text="0.123456789\n")]
    _cell(nb, "skipped").outputs = [nbformat.v4.new_output("stream", name="stdout", text="never run\n")]
    return nb


def _cell(nb: Any, cell_id: str) -> Any:
    return next(c for c in nb.cells if c.get("id") == cell_id)


def _project(root: Path, nb: Any) -> Path:
    return write_project(root, CONF, {"index.rst": INDEX, "nb.ipynb": nbformat.writes(nb), "other.rst": OTHER})


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pytest --snipcheck ARGS`` in ``project``, nbval installed beside it (the test extra has it), as
    a team that moves from nbval has it: nbval collects nothing without ``--nbval``."""
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(project.parent / "cache"), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


# --- pytest --snipcheck -----------------------------------------------------------------------------


def test_pytest_collects_one_item_per_code_cell_and_passes_on_an_executed_notebook(tmp_path: Path, stored: Any) -> None:
    project = _project(tmp_path / "p", stored)
    done = _pytest(project, "nb.ipynb", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    passed = re.findall(r"^nb\.ipynb::(\S+) PASSED", done.stdout, re.MULTILINE)
    # one item per cell that runs, in the notebook's order; NBVAL_IGNORE_OUTPUT's cell runs and passes
    assert passed == [f"nb/{i}" for i in RUN]


def test_pytest_fails_naming_the_cell_on_a_one_character_change(tmp_path: Path, stored: Any) -> None:
    nb = copy.deepcopy(stored)
    _cell(nb, "printed").outputs[0].text = "7\n"
    project = _project(tmp_path / "p", nb)
    done = _pytest(project, "nb.ipynb")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.findall(r"^FAILED (\S+)", done.stdout, re.MULTILINE) == ["nb.ipynb::nb/printed"]
    assert "--- stated (nb.ipynb, cell 3 (id printed))" in done.stdout
    assert "\n-7\n+6\n" in done.stdout
    assert "snipcheck record nb/printed" in done.stdout  # record writes the cell's outputs into the notebook


def test_pytest_k_runs_the_cells_before_the_one_selected(tmp_path: Path, stored: Any) -> None:
    done = _pytest(_project(tmp_path / "p", stored), "nb.ipynb", "-k", "after", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.findall(r"^nb\.ipynb::(\S+) PASSED", done.stdout, re.MULTILINE) == ["nb/after"]  # x = 2 ran first


# --- verify, run -------------------------------------------------------------------------------------


def _verify(project: Path, cache: Path, *args: str) -> dict[str, Any]:
    done = snipcheck_cli(project, "verify", "--json", "v.json", *args, cache=cache)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads((project / "v.json").read_text())


def test_verify_reports_the_cells_in_notebook_order_by_cell_number(tmp_path: Path, stored: Any) -> None:
    nb = copy.deepcopy(stored)
    _cell(nb, "printed").outputs[0].text = "7\n"
    project = _project(tmp_path / "p", nb)
    report = _verify(project, tmp_path / "cache")
    rows = [(s["id"], s["doc"], s["line"], s["status"]) for s in report["snippets"] if s["doc"] == "nb.ipynb"]
    numbers = {i: k + 2 for k, (i, _, _) in enumerate(CELLS)}
    statuses = {i: "unchanged" for i in RUN} | {"printed": "drifted"}  # the random draw is not compared
    assert rows == [(f"nb/{i}", "nb.ipynb", numbers[i], statuses[i]) for i in RUN]
    drift = next(s for s in report["snippets"] if s["id"] == "nb/printed")
    assert "--- stated (nb.ipynb, cell 3 (id printed))" in drift["diff"]


def test_run_prints_a_cell_after_running_the_cells_before_it(tmp_path: Path, stored: Any) -> None:
    done = snipcheck_cli(_project(tmp_path / "p", stored), "run", "nb/after", cache=tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\n102\n" in done.stdout


# --- shards ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [2, 3])
def test_a_shard_plan_keeps_a_notebook_whole(tmp_path: Path, stored: Any, count: int) -> None:
    project = _project(tmp_path / "p", stored)
    units: dict[str, int] = {}
    for k in range(1, count + 1):
        out = tmp_path / f"shard{k}"
        done = snipcheck_cli(project, "execute", "--shard", f"{k}/{count}", "--out", str(out), cache=tmp_path / f"c{k}")
        assert done.returncode == 0, done.stdout + done.stderr
        for unit in json.loads((out / "manifest.json").read_text())["units"]:
            for snippet in unit["snippets"]:
                units[snippet["id"]] = k
    cells = {units[f"nb/{i}"] for i in RUN}
    assert len(cells) == 1  # every cell of the notebook in one shard
    assert set(units) == {f"nb/{i}" for i in RUN} | {"other/a"}
