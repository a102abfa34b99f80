"""Notebook cells at the edges of what IPython stores and what record may write (issue 37).

IPython stores an exception as ``ename``/``evalue``: ``type.__name__`` (so
``JSONDecodeError``, where a plain run prints ``json.decoder.JSONDecodeError``)
and ``str(exc)`` (empty for ``KeyError()``, where a plain run prints
``KeyError`` without a colon).  A cell's figures are stored as PNGs that
record cannot redraw in the notebook: a text change is written with the
figure kept byte for byte, and a changed figure is refused, nothing written.
Every notebook here is executed for real by nbclient and ipykernel.
"""

from __future__ import annotations

import builtins
import copy
from pathlib import Path
from typing import Any

import nbformat
import pytest
from conftest import fresh_cache
from faults_support import sphinx_build
from notebook_support import CONF, INDEX, cell, executed
from snipcheck.app import cli

RAISING = [
    ("empty", "raise KeyError()", ["raises-exception"]),
    ("qualified", "import json\njson.loads('not json')", ["raises-exception"]),
    ("own", "class Oops(Exception):\n    pass\nraise Oops('o')", ["raises-exception"]),
    ("after", "print('on')", []),
]
FIGURE = [
    ("plot", "import matplotlib.pyplot as plt\nprint('drawn')\nplt.plot([1, 3, 2]);", []),
]


def _project(tmp_path: Path, probe_cache: Path, nb: Any) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    (root / "conf.py").write_text(CONF + f'snipcheck_cache_dir = {str(cache)!r}\nsnipcheck_runner = "subprocess"\n')
    (root / "index.rst").write_text(INDEX)
    (root / "nb.ipynb").write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return root


def _record(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.chdir(root)
    monkeypatch.setattr(builtins, "input", lambda prompt: "a")
    status = cli.main(["--root", str(root), "record"])
    return status, capsys.readouterr().err


def test_exceptions_as_ipython_stores_them_hold_against_a_plain_run(tmp_path: Path, probe_cache: Path) -> None:
    stored = executed(RAISING)
    assert [(o.ename, o.evalue) for c in stored.cells[1:4] for o in c.outputs] == [
        ("KeyError", ""), ("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)"), ("Oops", "o"),
    ]  # fmt: skip
    root = _project(tmp_path, probe_cache, stored)
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_a_changed_exception_of_a_module_is_written_under_the_name_ipython_stores(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = executed(RAISING)
    cell(nb, "qualified").outputs[0].evalue = "Expecting value: line 9"
    root = _project(tmp_path, probe_cache, nb)
    assert _record(root, monkeypatch, capsys)[0] == 0
    (error,) = cell(nbformat.read(root / "nb.ipynb", as_version=4), "qualified").outputs
    assert (error.ename, error.evalue) == ("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)")
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_record_writes_a_figure_cell_s_text_and_keeps_its_stored_figure_byte_for_byte(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = executed(FIGURE)
    kinds = [o.output_type for o in cell(stored, "plot").outputs]
    assert kinds == ["stream", "display_data"], kinds
    nb = copy.deepcopy(stored)
    cell(nb, "plot").outputs[0].text = "drawX\n"
    root = _project(tmp_path, probe_cache, nb)
    status, err = _record(root, monkeypatch, capsys)
    assert status == 0, err
    assert (root / "nb.ipynb").read_text(encoding="utf-8") == nbformat.writes(stored) + "\n"
    assert not [p for p in root.rglob("*.png")]  # no figure file beside the pages: the notebook holds its figures


def test_record_refuses_a_notebook_cell_whose_figure_changed_and_writes_nothing(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = executed(FIGURE)
    other = executed([("plot", FIGURE[0][1].replace("[1, 3, 2]", "[3, 1, 2]"), [])])
    cell(nb, "plot").outputs[1] = copy.deepcopy(cell(other, "plot").outputs[1])  # another line drawn
    cell(nb, "plot").outputs[0].text = "drawX\n"
    root = _project(tmp_path, probe_cache, nb)
    before = (root / "nb.ipynb").read_bytes()
    status, err = _record(root, monkeypatch, capsys)
    assert status != 0 and "does not write figures into a notebook" in err and "nb/plot" in err, err
    assert (root / "nb.ipynb").read_bytes() == before
    assert not [p for p in root.rglob("*.png")]


def test_the_build_says_how_to_take_a_notebook_cells_new_figure_not_to_record_it(tmp_path: Path, probe_cache: Path) -> None:
    """Found by a fresh user's try: the build advised ``snipcheck record``,
    which refuses to draw a figure into a notebook."""
    nb = executed(FIGURE)
    other = executed([("plot", FIGURE[0][1].replace("[1, 3, 2]", "[3, 1, 2]"), [])])
    cell(nb, "plot").outputs[1] = copy.deepcopy(cell(other, "plot").outputs[1])
    root = _project(tmp_path, probe_cache, nb)
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    (said,) = [w for w in built.warnings if "figure" in w and "nb/plot" in w]
    assert "run the cell in Jupyter and save the notebook" in said and "snipcheck record" not in said, said


def test_verify_names_a_notebook_cells_stated_image_as_its_stored_figure(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a fresh user's try: verify named ``_snipcheck_figures/nb/…png``,
    a path that is nowhere in the project (the index's copy of the stored figure)."""
    nb = executed(FIGURE)
    other = executed([("plot", FIGURE[0][1].replace("[1, 3, 2]", "[3, 1, 2]"), [])])
    cell(nb, "plot").outputs[1] = copy.deepcopy(cell(other, "plot").outputs[1])
    root = _project(tmp_path, probe_cache, nb)
    monkeypatch.chdir(root)
    status = cli.main(["--root", str(root), "verify"])
    said = capsys.readouterr().out
    assert status == 1 and "differs from its stated image (the notebook's stored figure 1)" in said, said
    assert "_snipcheck_figures" not in said


WARNS = [("warns", "import warnings\nwarnings.warn('careful')", [])]


def test_a_warning_s_location_as_ipython_names_it_holds_and_record_writes_the_run_s(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # IPython names a cell's file /tmp/ipykernel_<pid>/<hash>.py; a plain run, the cell's script
    stored = executed(WARNS)
    (stderr,) = cell(stored, "warns").outputs
    assert "ipykernel_" in stderr.text and ": UserWarning: careful" in stderr.text, stderr.text
    root = _project(tmp_path, probe_cache, stored)
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    # a changed message: record writes the run's own text, no wildcard into the notebook
    nb = copy.deepcopy(stored)
    cell(nb, "warns").outputs[0].text = stderr.text.replace("careful", "careless")
    (root / "nb.ipynb").write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    status, err = _record(root, monkeypatch, capsys)
    assert status == 0, err
    (written,) = cell(nbformat.read(root / "nb.ipynb", as_version=4), "warns").outputs
    assert written.text.startswith("nb/warns.py:2: UserWarning: careful\n"), written.text
    assert "[..]" not in written.text and "ipykernel_" not in written.text


def test_record_leaves_a_cell_whose_output_is_not_compared_and_succeeds(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a fresh user's try: on a notebook that ``verify`` passes,
    ``record`` ran an ``NBVAL_IGNORE_OUTPUT`` cell twice, found its output
    varies (a time) and exited 1; such a cell states nothing to record."""
    nb = executed([("t", "# NBVAL_IGNORE_OUTPUT\nimport time\nprint(time.time())", []), ("after", "print('after')", [])])
    root = _project(tmp_path, probe_cache, nb)
    before = (root / "nb.ipynb").read_bytes()
    status, said = _record(root, monkeypatch, capsys)
    assert status == 0, said
    assert "differs between two runs" not in said
    assert (root / "nb.ipynb").read_bytes() == before


def test_record_tells_a_notebook_cell_that_varies_how_a_notebook_is_seeded(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a fresh user's try: the advice named a tag block, which a notebook cell has not."""
    nb = executed([("r", "import random\nprint(random.random())", [])])
    cell(nb, "r").outputs[0].text = "0.5\n"
    root = _project(tmp_path, probe_cache, nb)
    status, said = _record(root, monkeypatch, capsys)
    assert status == 1 and "differs between two runs" in said, said
    assert "\"seed\": 0 in the notebook's metadata" in said and "NBVAL_IGNORE_OUTPUT" in said
    assert "tag block" not in said


def test_record_refuses_a_cell_whose_text_moved_to_the_other_stream(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a second try: the writer keeps each output's stream, so
    record "recorded" the same text on the stored stream, and the next build
    failed the same way, and advised record again."""
    nb = executed([("s", "import sys\nprint('note', file=sys.stderr)", [])])
    cell(nb, "s").source = "print('note')"
    root = _project(tmp_path, probe_cache, nb)
    before = (root / "nb.ipynb").read_bytes()
    status, said = _record(root, monkeypatch, capsys)
    assert status == 1 and "record cannot move text between a notebook's streams" in said, said
    assert (root / "nb.ipynb").read_bytes() == before
