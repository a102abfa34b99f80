"""Notebook pages (issue 37): nbval's sanitizer files, notebook metadata as
tags, and what is compared of figures and rich outputs.

Every notebook here is written with nbformat and executed for real with
nbclient and ipykernel (:mod:`notebook_markers_support`), so its stored
outputs are what Jupyter stores.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import html
from notebook_markers_support import build, cell, executed, statuses

# --- nbval's sanitizer files --------------------------------------------------------------------

UUID_CELL = (
    "run",
    "import uuid, datetime\nprint('run', uuid.uuid4(), 'at', datetime.datetime.now().isoformat())",
)
SANITIZE = """\
[Run ids]
regex: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}
replace: UUID

[Dates and times]
regex: \\d\\d\\d\\d-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d+
replace: TIMESTAMP
"""


@pytest.fixture(scope="module")
def varying() -> Any:
    """A notebook whose cell prints what changes on every run (a UUID, the time), executed once."""
    return executed([UUID_CELL, ("n", "print(1)")])


@pytest.mark.parametrize("sanitized", [True, False])
def test_an_nbval_sanitizer_file_makes_a_varying_output_compare_equal(
    tmp_path: Path, cache_dir: Path, varying: Any, sanitized: bool
) -> None:
    conf = 'snipcheck_nbval_sanitize = ["sanitize.cfg"]\n' if sanitized else ""
    built = build(tmp_path, cache_dir, varying, conf, {"sanitize.cfg": SANITIZE})
    if sanitized:
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text
        assert statuses(built) == {"nb/run": "ok", "nb/n": "ok"}
        shown = (built.outdir / "nb.html").read_text()
        assert "UUID" not in shown and "TIMESTAMP" not in shown  # compare-only: the page shows the real run
    else:
        (drift,) = built.about("nb/run")
        assert built.statuscode == 1 and "[snipcheck.drift]" in drift


def test_a_bad_sanitizer_file_warns_naming_file_line_and_section_and_the_rest_applies(
    tmp_path: Path, cache_dir: Path, varying: Any
) -> None:
    bad = SANITIZE + "\n[Broken]\nregex: (unclosed\nreplace: X\nregex = [a-z]+\n"
    conf = 'snipcheck_nbval_sanitize = ["sanitize.cfg", "missing.cfg"]\n'
    built = build(tmp_path, cache_dir, varying, conf, {"sanitize.cfg": bad})
    said = [w for w in built.warnings if "nbval sanitizer file" in w]
    assert len(said) == 3, built.warnings_text
    assert "sanitize.cfg, line 10, section [Broken]: bad regex '(unclosed'" in said[0]
    assert "sanitize.cfg, line 12, section [Broken]: 'regex = [a-z]+' is not read" in said[1]
    assert "missing.cfg: cannot be read (no such file)" in said[2]
    assert all("[snipcheck.config]" in w for w in said)
    assert statuses(built) == {"nb/run": "ok", "nb/n": "ok"}  # the file's good sections apply
    assert built.statuscode == 0, built.warnings_text


# --- notebook metadata as tags ------------------------------------------------------------------


def test_a_notebooks_requires_keeps_the_whole_chain_from_running(tmp_path: Path, cache_dir: Path) -> None:
    cells = [("a", "print('a')"), ("b", "print('b')")]
    conf = 'snipcheck_requirements = ["gpu-farm"]\n'
    plain = build(tmp_path / "plain", cache_dir, executed(cells), conf)
    assert statuses(plain) == {"nb/a": "ok", "nb/b": "ok"}, plain.warnings_text
    needs = build(
        tmp_path / "needs", cache_dir, executed(cells, {"snipcheck": {"requires": ["gpu-farm"]}}), conf
    )
    assert statuses(needs) == {"nb/a": "not-run", "nb/b": "not-run"}, needs.warnings_text
    assert "needs gpu-farm" in needs.status


def test_a_notebooks_seed_seeds_its_chain(tmp_path: Path, cache_dir: Path) -> None:
    # The stored draw is a real seeded run's: the cell that seeded the kernel is then taken out.
    nb = executed(
        [("seeding", "import random\nrandom.seed(7)"), ("draw", "import random\nprint(random.random())")]
    )
    nb.cells = [c for c in nb.cells if c.get("id") != "seeding"]
    unseeded = build(tmp_path / "unseeded", cache_dir, nb)
    assert statuses(unseeded) == {"nb/draw": "drift"}
    nb.metadata["snipcheck"] = {"seed": 7}
    seeded = build(tmp_path / "seeded", cache_dir, nb)
    assert seeded.statuscode == 0 and seeded.warnings == [], seeded.warnings_text
    assert statuses(seeded) == {"nb/draw": "ok"}


def test_a_cells_timeout_in_its_metadata_limits_its_run(tmp_path: Path, cache_dir: Path) -> None:
    burn = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 3:\n    pass\nprint('done')"
    nb = executed([("burn", burn, {"snipcheck": {"timeout": 0.5}}), ("n", "print(1)")])
    limited = build(tmp_path / "limited", cache_dir, nb)
    assert statuses(limited)["nb/burn"] == "timeout", limited.warnings_text
    assert "[snipcheck.timeout]" in limited.about("nb/burn")[0]
    del cell(nb, "burn").metadata["snipcheck"]
    free = build(tmp_path / "free", cache_dir, nb)
    assert statuses(free) == {"nb/burn": "ok", "nb/n": "ok"}, free.warnings_text


def test_a_cells_metadata_expect_makes_its_exception_expected(tmp_path: Path, cache_dir: Path) -> None:
    nb = executed([("e", "{}['k']", {"snipcheck": {"expect": "KeyError"}}), ("n", "print(1)")])
    built = build(tmp_path, cache_dir, nb)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    assert statuses(built) == {"nb/e": "ok", "nb/n": "ok"}


def test_unknown_metadata_keys_warn_naming_notebook_cell_and_the_known_keys(
    tmp_path: Path, cache_dir: Path
) -> None:
    meta = {"snipcheck": {"timout": 30, "expect": "KeyError"}}
    nb = executed([("c", "print(2)", {"snipcheck": {"sede": 1}})], meta)
    built = build(tmp_path, cache_dir, nb)
    mine = sorted(w for w in built.warnings if "[snipcheck.tag]" in w)
    assert len(mine) == 3, built.warnings_text
    assert (
        "notebook nb.ipynb, cell 2 (id c): unknown tag 'sede'" in mine[0]
        and "known tags are: depends, env" in mine[0]
    )
    assert "notebook nb.ipynb: tag 'expect' says what one cell does" in mine[1]
    assert (
        "notebook nb.ipynb: unknown tag 'timout'" in mine[2]
        and "timeout" in mine[2].split("known tags are:")[1]
    )
    assert statuses(built) == {"nb/c": "ok"}  # the rest applies: the cell ran and was compared


def test_a_bad_notebook_metadata_value_fails_naming_the_notebook_and_runs_nothing(
    tmp_path: Path, cache_dir: Path
) -> None:
    nb = executed([("c", "print(2)")], {"snipcheck": {"timeout": "soon"}})
    built = build(tmp_path, cache_dir, nb)
    (said,) = [w for w in built.warnings if "nb.ipynb" in w]
    assert "notebook nb.ipynb: its metadata 'snipcheck': bad value for 'timeout': 'soon'" in said
    assert "nb/c" not in statuses(built) and built.statuscode == 1


# --- figures and rich outputs -------------------------------------------------------------------

PLOT = ("plot", "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]);")
SHOWN = ("shown", "plt.figure()\nplt.bar([1, 2], [3, 4])\nplt.show()\nprint('after')")


@pytest.fixture(scope="module")
def drawn() -> Any:
    """A notebook of figures: one left open at the end of its cell, one shown by plt.show()."""
    return executed([PLOT, SHOWN, ("n", "print(1)")])


def test_a_cells_figures_are_compared_with_its_stored_pngs(
    tmp_path: Path, cache_dir: Path, drawn: Any
) -> None:
    for cell_id in ("plot", "shown"):
        kinds = [(o.output_type, sorted(o.get("data", {}))) for o in cell(drawn, cell_id).outputs]
        assert ("display_data", ["image/png", "text/plain"]) in kinds
    built = build(tmp_path, cache_dir, drawn)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    assert statuses(built) == {"nb/plot": "ok", "nb/shown": "ok", "nb/n": "ok"}
    shown = [img["alt"] for img in html(built.outdir / "nb.html").select("img")]
    assert shown == [
        "Figure 1 of snippet nb/plot",
        "Figure 1 of snippet nb/shown",
    ]  # the run's figures, as drawn


def test_a_changed_stored_figure_fails_naming_cell_and_figure(
    tmp_path: Path, cache_dir: Path, drawn: Any
) -> None:
    nb = copy.deepcopy(drawn)
    other = executed([("other", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);")])
    # a figure of the same size (the same axes, another line): only its pixels tell them apart
    figure = next(o for o in cell(nb, "plot").outputs if o.output_type == "display_data")
    figure.data["image/png"] = cell(other, "other").outputs[0].data["image/png"]
    built = build(tmp_path, cache_dir, nb)
    (drift,) = built.about("nb/plot")
    assert (
        built.statuscode == 1
        and "[snipcheck.drift]" in drift
        and "figure 1 differs from its stated image" in drift
    )
    assert "stated image (the notebook's stored figure 1 of nb.ipynb, cell 2 (id plot))" in drift  # not the build's copy
    assert statuses(built)["nb/shown"] == "ok"


@pytest.mark.parametrize("ignored", [True, False])
def test_nbval_ignore_output_leaves_a_cells_figure_uncompared(
    tmp_path: Path, cache_dir: Path, ignored: bool
) -> None:
    marker = "# NBVAL_IGNORE_OUTPUT\n" if ignored else ""
    draw = (
        marker
        + "import random\nimport matplotlib.pyplot as plt\nplt.plot([random.random() for _ in range(9)]);"
    )
    built = build(tmp_path, cache_dir, executed([("r", draw), ("n", "print(1)")]))
    if ignored:
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text
        assert statuses(built) == {"nb/r": "ok", "nb/n": "ok"}
    else:
        (drift,) = built.about("nb/r")
        assert "figure 1 differs from its stated image" in drift


def test_an_image_in_an_execute_result_is_said_to_be_not_compared(
    tmp_path: Path, cache_dir: Path, drawn: Any
) -> None:
    nb = copy.deepcopy(drawn)
    stored = next(o for o in cell(nb, "plot").outputs if o.output_type == "display_data")
    # what a PIL image left as a cell's last expression stores: its repr, and its PNG
    cell(nb, "n").outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "1", "image/png": stored.data["image/png"]},
                                                    execution_count=3)]  # fmt: skip
    cell(nb, "n").source = "1"
    built = build(tmp_path, cache_dir, nb)
    (said,) = built.warnings
    assert (
        "[snipcheck.unchecked]" in said
        and "cell 4 (id n)" in said
        and "stored image/png output is not compared" in said
    )
    assert statuses(built) == {"nb/plot": "ok", "nb/shown": "ok", "nb/n": "ok"}  # its text/plain was compared


def test_a_rich_output_is_compared_by_its_text_plain(tmp_path: Path, cache_dir: Path) -> None:
    nb = executed([("h", "from IPython.display import HTML\nHTML('<b>bold</b>')")])
    (result,) = cell(nb, "h").outputs
    assert {"text/html", "text/plain"} <= set(result.data)
    result.data["text/html"] = "<i>other</i>"  # a rendering of what text/plain states: not compared
    built = build(tmp_path, cache_dir, nb)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    result.data["text/plain"] = "<IPython.core.display.HTML objects>"
    drifted = build(tmp_path / "drifted", cache_dir, nb)
    assert statuses(drifted) == {"nb/h": "drift"}


def test_a_rich_output_without_text_plain_is_said_to_be_not_compared(tmp_path: Path, cache_dir: Path) -> None:
    nb = executed([("r", "x = 1"), ("n", "print(1)")])
    # what a front end stores for a bundle with no text/plain (a widget view, an HTML-only display)
    cell(nb, "r").outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": "<b>x</b>", "application/json": {"a": 1}})
    ]
    built = build(tmp_path, cache_dir, nb)
    (said,) = built.warnings
    assert "[snipcheck.unchecked]" in said and "cell 2 (id r)" in said
    assert "stored application/json, text/html output is not compared" in said  # nbformat writes keys sorted
    assert statuses(built) == {"nb/r": "ok", "nb/n": "ok"}
