"""Jupyter notebook pages (issue 37, first slice).

A ``.ipynb`` page that myst-nb renders (its execution off) is a chain: its code
cells run in order in one process, each captured alone, and its stored
outputs are the stated outputs.  The notebooks here are written with nbformat
and executed for real with nbclient and ipykernel, so the stored outputs are
what Jupyter itself stores.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import html, write_project
from snipcheck.sources.notebook import read, shows_last
from faults_support import sphinx_build
from notebook_support import CELLS, CONF, INDEX, executed
from notebook_support import cell as _cell

_executed = executed  # the name this module's tests use

@pytest.fixture(scope="module")
def stored() -> Any:
    """The notebook, executed once for the module."""
    return _executed(CELLS)


def _project(root: Path, nb: Any) -> Path:
    return write_project(root, CONF, {"index.rst": INDEX, "nb.ipynb": nbformat.writes(nb)})


def _statuses(built: Any) -> dict[str, str]:
    """snippet id → status, from the build's report."""
    report = json.loads((built.report_dir / "report.json").read_text())
    return {r["snippet_id"]: r["status"] for r in report["snippets"]}


def test_the_stored_outputs_are_what_jupyter_stored(stored: Any) -> None:
    """The fixture itself: stream, execute_result and error outputs, as the tests below expect."""
    kinds = {c.id: [o.output_type for o in c.outputs] for c in stored.cells if c.cell_type == "code"}
    assert kinds["printed"] == ["stream"] and kinds["shown"] == ["execute_result"]
    assert kinds["raises"] == ["error"]
    assert [c for c in read(nbformat.writes(stored)).cells if c.cell_id == "both"][0].stated == "out\nerr\n20"


def test_a_notebook_page_runs_as_a_chain_and_shows_the_real_outputs(tmp_path: Path, cache_dir: Path, stored: Any) -> None:
    project = _project(tmp_path / "p", stored)
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    report = json.loads((built.report_dir / "report.json").read_text())
    statuses = {r["snippet_id"]: r["status"] for r in report["snippets"]}
    assert statuses == {f"nb/{i}": "ok" for i, _, _ in CELLS if i != "setup"} | {"nb/setup": "ok"}
    page = html(built.outdir / "nb.html")
    assert len(page.select(".snipcheck-snippet")) == len(CELLS)  # one output panel per cell, in myst-nb's cell
    text = page.get_text()
    assert "102" in text and "ZeroDivisionError: division by zero" in text
    assert built.before == built.after  # the notebook is never written


def test_a_one_character_change_to_a_stored_output_fails_naming_notebook_cell_and_id(
    tmp_path: Path, cache_dir: Path, stored: Any
) -> None:
    nb = copy.deepcopy(stored)
    _cell(nb, "printed").outputs[0].text = "7\n"
    built = sphinx_build(_project(tmp_path / "p", nb), tmp_path, cache_dir)
    assert built.statuscode == 1
    (drift,) = built.about("nb/printed")
    assert "nb.ipynb" in drift and "cell 3 (id printed)" in drift and "[snipcheck.drift]" in drift
    assert "-7" in drift and "+6" in drift
    assert [w for w in built.warnings if w not in built.about("nb/printed")] == []


def test_execution_count_and_volatile_metadata_never_drift(tmp_path: Path, cache_dir: Path, stored: Any) -> None:
    nb = copy.deepcopy(stored)
    for number, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = 40 + number
        cell.metadata["execution"] = {"iopub.execute_input": "2031-01-01T00:00:00Z"}
        for out in cell.outputs:
            if "execution_count" in out:
                out.execution_count = 99
    built = sphinx_build(_project(tmp_path / "p", nb), tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    assert _statuses(built) == {f"nb/{i}": "ok" for i, _, _ in CELLS}  # every cell was compared


# --- markers ---------------------------------------------------------------------------------------


def _built_with(tmp_path: Path, cache_dir: Path, cells: list[tuple[str, str, list[str]]], edit: Any) -> Any:
    nb = _executed(cells)
    edit(nb)
    return sphinx_build(_project(tmp_path / "p", nb), tmp_path, cache_dir)


def _restate(cell_id: str, text: str) -> Any:
    def edit(nb: Any) -> None:
        _cell(nb, cell_id).outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]

    return edit


@pytest.mark.parametrize("marked", [True, False])
@pytest.mark.parametrize("how", ["comment", "tag"])
def test_nbval_ignore_output_runs_the_cell_but_does_not_compare_its_output(
    tmp_path: Path, cache_dir: Path, marked: bool, how: str
) -> None:
    source = "import random\nprint(random.random())"
    tags: list[str] = []
    if marked and how == "comment":
        source = "# NBVAL_IGNORE_OUTPUT\n" + source
    elif marked:
        tags = ["NBVAL_IGNORE_OUTPUT"]
    built = _built_with(tmp_path, cache_dir, [("r", source, tags), ("n", "print(1)", [])], _restate("r", "stored-draw\n"))
    if marked:
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text
        assert _statuses(built) == {"nb/r": "ok", "nb/n": "ok"}
        shown = html(built.outdir / "nb.html").get_text()
        assert "stored-draw" not in shown and "0." in shown  # the real run is shown
    else:
        assert "[snipcheck.drift]" in built.about("nb/r")[0]


@pytest.mark.parametrize("marker", ["", "# NBVAL_SKIP", "skip-execution"])
def test_a_skipped_cell_is_neither_run_nor_compared(tmp_path: Path, cache_dir: Path, marker: str) -> None:
    source = "print('stored')\nundefined_name"
    tags = [marker] if marker and not marker.startswith("#") else []
    if marker.startswith("#"):
        source = marker + "\n" + source
    built = _built_with(tmp_path, cache_dir, [("s", source, tags), ("n", "print(1)", [])], _restate("s", "stored\n"))
    report = json.loads((built.report_dir / "report.json").read_text())
    ids = {r["snippet_id"] for r in report["snippets"]}
    if marker:
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text
        assert ids == {"nb/n"}
    else:
        assert built.statuscode == 1 and built.about("nb/s"), built.warnings_text


@pytest.mark.parametrize("marker", ["", "raises-exception", "NBVAL_RAISES_EXCEPTION", "# NBVAL_RAISES_EXCEPTION"])
def test_a_stored_error_is_expected_only_with_a_raises_marker(tmp_path: Path, cache_dir: Path, marker: str) -> None:
    source = "print('before')\nraise ValueError('bad value')"
    tags = [marker] if marker and not marker.startswith("#") else []
    if marker.startswith("#"):
        source = marker + "\n" + source
    built = _built_with(tmp_path, cache_dir, [("e", source, tags), ("n", "print(1)", [])], lambda nb: None)
    if marker:
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text
        assert _statuses(built) == {"nb/e": "ok", "nb/n": "ok"}
    else:
        (problem,) = built.about("nb/e")
        assert "ValueError" in problem and "[snipcheck.exec]" in problem
        # an unexpected error ends the chain: the next cell is not run, and fails naming it
        (stopped,) = built.about("nb/n")
        assert "a cell before it, raised ValueError" in stopped and "[snipcheck.exec]" in stopped
        return
    assert built.about("nb/n") == []  # with the marker, the chain goes on after the cell


def test_a_wrong_exception_drifts_even_with_the_marker(tmp_path: Path, cache_dir: Path) -> None:
    def edit(nb: Any) -> None:
        _cell(nb, "e").outputs[0].ename = "KeyError"

    built = _built_with(tmp_path, cache_dir, [("e", "raise ValueError('v')", ["raises-exception"])], edit)
    assert built.statuscode == 1 and "KeyError" in built.about("nb/e")[0]


@pytest.mark.parametrize("tag", ["remove-input", "remove-output"])
def test_removed_input_or_output_is_still_compared(tmp_path: Path, cache_dir: Path, tag: str) -> None:
    built = _built_with(tmp_path, cache_dir, [("c", "print('re' + 'al')", [tag])], _restate("c", "stated\n"))
    assert built.statuscode == 1 and "[snipcheck.drift]" in built.about("nb/c")[0]
    shown = html(built.outdir / "nb.html").get_text()
    assert ("real" in shown) == (tag == "remove-input")  # removed output stays removed


@pytest.mark.parametrize("check", [False, True], ids=["ignore", "ignore+check"])
@pytest.mark.parametrize("how", ["comment", "tag"])
def test_nbval_check_output_compares_a_cell_that_also_says_ignore_output(
    tmp_path: Path, cache_dir: Path, check: bool, how: str
) -> None:
    markers = ["NBVAL_IGNORE_OUTPUT"] + (["NBVAL_CHECK_OUTPUT"] if check else [])
    source = "print('re' + 'al')"
    tags: list[str] = []
    if how == "comment":
        source = "".join(f"# {m}\n" for m in markers) + source
    else:
        tags = markers
    built = _built_with(tmp_path, cache_dir, [("c", source, tags)], _restate("c", "stated\n"))
    if check:
        assert built.statuscode == 1 and "[snipcheck.drift]" in built.about("nb/c")[0], built.warnings_text
    else:
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text


@pytest.mark.parametrize("tag", ["hide-input", "hide-output", "hide-cell"])
def test_hidden_input_or_output_is_compared_and_shown_behind_myst_nb_s_toggle(
    tmp_path: Path, cache_dir: Path, tag: str
) -> None:
    built = _built_with(tmp_path, cache_dir, [("c", "print('re' + 'al')", [tag])], _restate("c", "stated\n"))
    assert built.statuscode == 1 and "[snipcheck.drift]" in built.about("nb/c")[0], built.warnings_text
    page = html(built.outdir / "nb.html")
    (cell,) = [c for c in page.select("div.cell") if "real" in c.get_text()]  # the real run's output is on the page
    assert f"tag_{tag}" in cell.get("class", [])
    # behind myst-nb's toggle as myst-nb hides a stored output: a <details> that holds the panel (and the code)
    toggles = cell.select("details.hide")
    hidden = [t for t in toggles if t.select_one(".snipcheck-output")]
    assert bool(hidden) == (tag != "hide-input"), cell
    assert bool([t for t in toggles if t.select_one(".cell_input")]) == (tag != "hide-output"), cell


# --- what is not run ------------------------------------------------------------------------------


def test_a_notebook_whose_kernel_is_not_python_says_so_and_is_not_run(tmp_path: Path, cache_dir: Path, stored: Any) -> None:
    nb = copy.deepcopy(stored)
    nb.metadata["kernelspec"] = {"name": "julia-1.10", "display_name": "Julia", "language": "julia"}
    nb.metadata.pop("language_info", None)
    built = sphinx_build(_project(tmp_path / "p", nb), tmp_path, cache_dir)
    (said,) = built.warnings
    assert "nb.ipynb" in said and "'julia', not Python" in said
    assert html(built.outdir / "nb.html").select(".snipcheck-snippet") == []  # myst-nb shows the stored outputs


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"cells": [', "not valid JSON (line 1, column 12"),
        ('{"cells": [], "metadata": {}, "nbformat": 2, "nbformat_minor": 0}', "nbformat version 2.0 cannot be read"),
    ],
)
def test_a_bad_notebook_gets_a_located_error_and_the_build_goes_on(
    tmp_path: Path, cache_dir: Path, stored: Any, text: str, said: str
) -> None:
    files = {"index.rst": INDEX + "   bad\n", "nb.ipynb": nbformat.writes(stored), "bad.ipynb": text}
    project = write_project(tmp_path / "p", CONF, files)
    built = sphinx_build(project, tmp_path, cache_dir)
    mine = [w for w in built.warnings if "notebook bad.ipynb" in w]
    assert len(mine) == 1 and said in mine[0], built.warnings_text
    assert (built.outdir / "nb.html").is_file()  # the other page was built, and checked
    report = json.loads((built.report_dir / "report.json").read_text())
    assert {r["snippet_id"]: r["status"] for r in report["snippets"]}["nb/printed"] == "ok"
    assert built.statuscode == 1


# --- the run text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "shown"),
    [("x + 1", True), ("x = 1\nf(\n  x)", True), ("x + 1;", False), ("x = 1", False), ("print(1", False)],
)
def test_a_last_expression_is_shown_as_ipython_shows_it(source: str, shown: bool) -> None:
    assert shows_last(source) == shown


def test_a_cell_runs_as_written_so_warnings_and_tracebacks_show_its_own_lines(tmp_path: Path, cache_dir: Path) -> None:
    cells = [("w", "import warnings\nwarnings.warn('careful')", []), ("v", "x = 2\nx * 21", [])]
    built = _built_with(tmp_path, cache_dir, cells, lambda nb: None)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    shown = html(built.outdir / "nb.html").get_text()
    assert "warnings.warn('careful')" in shown and "displayhook" not in shown and "42" in shown


ORDERED = [
    ("warned", "import warnings\nwarnings.warn('careful')\nprint('done')", []),
    ("valued", "import sys\nprint('out')\nprint('err', file=sys.stderr)\nwarnings.warn('late')\n6 * 7", []),
    ("drawn", "import matplotlib.pyplot as plt\nprint('a')\nprint('b', file=sys.stderr)\nplt.plot([1, 2])\nplt.show()\n"
              "print('c')\nprint('d', file=sys.stderr)", []),
]  # fmt: skip


def test_a_cell_s_streams_are_compared_in_the_order_jupyter_stores_them(tmp_path: Path, cache_dir: Path) -> None:
    # a kernel sends a cell's stdout, then its stderr, before each display and at its end
    nb = _executed(ORDERED)
    kinds = {c.id: [o.get("name", o.output_type) for o in c.outputs] for c in nb.cells if c.cell_type == "code"}
    assert kinds == {
        "warned": ["stdout", "stderr"], "valued": ["stdout", "stderr", "execute_result"],
        "drawn": ["stdout", "stderr", "display_data", "stdout", "stderr"],
    }  # fmt: skip
    built = sphinx_build(_project(tmp_path / "p", nb), tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text



@pytest.mark.parametrize("layout", ["make-mode", "one-folder"])
def test_a_build_folder_inside_the_sources_is_never_read_as_pages(
    tmp_path: Path, cache_dir: Path, stored: Any, layout: str
) -> None:
    """A hand-written ``conf.py`` without ``exclude_patterns``, its build
    folder inside the sources: myst-nb's copy of the notebook (``jupyter_execute``)
    and the HTML builder's downloads are not read as pages by the next build,
    and a build into another output folder re-reads nothing (the environment
    keeps the project's own configuration)."""
    project = _project(tmp_path / "p", stored)
    out = project / "_build"
    # sphinx-build -M html: the doctrees beside the output folder; -b html: inside it
    doctrees = out / "doctrees" if layout == "make-mode" else out / "html" / ".doctrees"
    env = {**os.environ, "SNIPCHECK_CACHE_DIR": str(cache_dir)}

    def build(target: Path, reads: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", target.name, "-d", str(doctrees),
             "-D", f"snipcheck_report_dir={tmp_path / 'report'}", str(project), str(target)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        assert done.returncode == 0 and "WARNING" not in done.stderr and "ERROR" not in done.stderr, done.stderr
        assert f"{reads}, 0 removed" in done.stdout, done.stdout
        assert "config changed" not in done.stdout, done.stdout

    build(out / "html", "2 added, 0 changed")
    # The command line reads the pages beside that build, with its cache in
    # the project (BUILDDIR/doctrees/snipcheck-cache, the default).
    verified = subprocess.run(
        [sys.executable, "-m", "snipcheck", "verify"], cwd=project, capture_output=True, text=True,
        env={k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}, timeout=300,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "6 unchanged, 0 drifted, 0 failing, 0 not run, 0 error" in verified.stdout, verified.stdout
    build(out / "html", "0 added, 0 changed")
    build(out / "dirhtml", "0 added, 0 changed")
    assert (out / "jupyter_execute" / "nb.ipynb").exists()  # the copy the build keeps out of its pages


def _recode(cell_id: str, source: str) -> Any:
    def edit(nb: Any) -> None:
        _cell(nb, cell_id).source = source

    return edit


@pytest.mark.parametrize(
    ("printed", "now"),
    [
        ("print('first')\nprint('...')\nprint('last')", "print('first')\nprint('SOMETHING ELSE')\nprint('more')\nprint('last')"),
        ("print('x = [..]')", "print('x = [1, 2, 3]')"),
    ],
    ids=["a-line-of-dots", "brackets"],
)
def test_what_a_stored_output_printed_is_never_read_as_a_wildcard(
    tmp_path: Path, cache_dir: Path, printed: str, now: str
) -> None:
    """Found by a fresh user's try (a green that lied): a run that printed
    ``...`` or ``[..]`` stored them, and the stated output read them as
    wildcards, so the cell's code could print anything there after an edit."""
    built = _built_with(tmp_path, cache_dir, [("c", printed, [])], _recode("c", now))
    assert built.statuscode == 1
    (drift,) = built.about("nb/c")
    assert "[snipcheck.drift]" in drift


def test_a_stored_stream_is_compared_to_its_last_newline(tmp_path: Path, cache_dir: Path) -> None:
    """Found by a fresh user's try (a green that lied): a stored stream with a
    blank line more than the run prints matched, as a page's body may end
    with one line break more; a stored output is what a run printed."""
    def edit(nb: Any) -> None:
        _cell(nb, "c").outputs[0].text += "\n"

    built = _built_with(tmp_path, cache_dir, [("c", "print(6)", [])], edit)
    assert built.statuscode == 1 and len(built.about("nb/c")) == 1, built.warnings_text
    same = _built_with(tmp_path / "same", cache_dir, [("c", "print(6)", [])], lambda nb: None)
    assert same.statuscode == 0, same.warnings_text


@pytest.mark.parametrize(
    "source",
    [
        "print('\\x1b[31mred\\x1b[0m and plain')",
        "import sys\nfor i in range(3):\n    sys.stdout.write(f'\\rprogress {i}')\nprint()\nprint('done')",
    ],
    ids=["colours", "carriage-returns"],
)
def test_a_stored_output_is_read_as_a_terminal_shows_it_as_the_run_is(tmp_path: Path, cache_dir: Path, source: str) -> None:
    """Found by a fresh user's try: Jupyter stores colours and carriage
    returns as the run wrote them, and the run's output is compared as a
    terminal shows it, so such a cell always drifted (and ``record`` wrote
    the colours out of the notebook)."""
    built = _built_with(tmp_path, cache_dir, [("c", source, [])], lambda nb: None)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_matplotlib_inline_runs_and_another_magic_is_named_with_what_to_do(tmp_path: Path, cache_dir: Path) -> None:
    """Found by a fresh user's try: ``%matplotlib inline`` (most notebooks'
    first line) failed as a SyntaxError whose advice was to expect one, and
    stopped every later cell; now it is taken as the inline backend the run
    already is, and any other magic or shell escape is named, with what to do."""
    cells = [("plot", "%matplotlib inline\nx = 2\nprint(x)", []), ("timed", "%time y = 3", []), ("after", "print('after')", [])]
    built = sphinx_build(_project(tmp_path / "p", _executed(cells)), tmp_path, cache_dir)
    statuses = _statuses(built)
    assert statuses["nb/plot"] == "ok", built.warnings_text
    (said,) = [w for w in built.warnings if "cell 3 (id timed)" in w]
    assert "line 1 ('%time y = 3') is IPython syntax" in said and "skip-execution" in said
    assert "expect" not in said


@pytest.mark.parametrize(("stored", "now"), [("stderr", "stdout"), ("stdout", "stderr")])
def test_the_same_text_on_the_other_stream_is_a_drift(tmp_path: Path, cache_dir: Path, stored: str, now: str) -> None:
    """Found by a fresh user's try (a green that lied, if a small one): the
    stream a notebook stores its text under (myst-nb shows stderr in red)
    was not compared, only the text."""
    source = "import sys\nprint('note', file=sys.stderr)" if stored == "stderr" else "print('note')"
    edited = "import sys\nprint('note', file=sys.stderr)" if now == "stderr" else "import sys\nprint('note')"
    built = _built_with(tmp_path, cache_dir, [("c", source, [])], _recode("c", edited))
    assert built.statuscode == 1, built.warnings_text
    (said,) = built.about("nb/c")
    assert "not what the notebook stores as its stderr" in said and "run the cell in Jupyter" in said
    same = _built_with(tmp_path / "same", cache_dir, [("c", source, [])], lambda nb: None)
    assert same.statuscode == 0, same.warnings_text


def test_a_progress_bar_on_stderr_holds_as_a_terminal_shows_it(tmp_path: Path, cache_dir: Path) -> None:
    """Found by a second try: the stored stderr was compared with its carriage
    returns as stored (a tqdm bar), the run's as a terminal shows them."""
    source = "import sys\nfor i in range(3):\n    sys.stderr.write(f'\\r{i * 50}%|' + '#' * i)\nsys.stderr.write('\\n')\nprint('done')"
    built = _built_with(tmp_path, cache_dir, [("c", source, [])], lambda nb: None)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_text_moved_to_the_other_stream_is_told_to_be_saved_from_jupyter_not_recorded(tmp_path: Path, cache_dir: Path) -> None:
    built = _built_with(tmp_path, cache_dir, [("c", "import sys\nprint('note', file=sys.stderr)", [])], _recode("c", "print('note')"))
    (said,) = built.about("nb/c")
    assert "run the cell in Jupyter and save the notebook" in said and "record it:" not in said, said


def test_a_cell_that_writes_to_both_streams_with_pauses_holds_as_jupyter_stored_it(tmp_path: Path, cache_dir: Path) -> None:
    """Found by a second try (a false red on a freshly executed notebook):
    Jupyter stores stdout and stderr in time order when a cell pauses
    between writes (a training loop that prints and logs), where the run
    gives stdout before stderr; each stream is then compared on its own."""
    source = (
        "import sys, time\nprint('o1', flush=True)\ntime.sleep(0.4)\nprint('e1', file=sys.stderr, flush=True)\n"
        "time.sleep(0.4)\nprint('o2')\n3 * 7"
    )
    built = _built_with(tmp_path, cache_dir, [("c", source, [])], lambda nb: None)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text

    def moved(nb: Any) -> None:  # a line on the other stream is still a drift
        outputs = _cell(nb, "c").outputs
        for out in outputs:
            if out.get("output_type") == "stream" and out.name == "stderr":
                out.text = "o2\n"
            elif out.get("output_type") == "stream" and "o2" in out.text:
                out.text = out.text.replace("o2", "e1")

    drifted = _built_with(tmp_path / "moved", cache_dir, [("c", source, [])], moved)
    assert drifted.statuscode == 1, drifted.warnings_text
