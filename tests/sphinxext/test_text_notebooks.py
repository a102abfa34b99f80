"""MyST-NB text notebooks (issue 37): a ``.md`` page of ``{code-cell}`` directives.

The page below is written in myst-nb's own documented syntax (front matter
``file_format: mystnb`` with a kernelspec, ``{code-cell} ipython3`` cells,
both forms of cell metadata, ``+++`` breaks) and parsed by myst-nb itself.
Its stated outputs are the ```` ```output ```` blocks right after the cells;
a cell with none states that it prints nothing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from faults_support import sphinx_build
from helpers import html, write_project

CONF = 'project = "tn"\nextensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_preload = []\n'
INDEX = "Text notebooks\n==============\n\n.. toctree::\n\n   tn\n"
PAGE = """\
---
file_format: mystnb
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# My simple notebook

Some **intro markdown**!

```{code-cell} ipython3
:tags: [mytag]

words = ["A", "python", "cell"]
```

```{code-cell} ipython3
print(" ".join(words))
```

```output
A python cell
```

+++

Separate markdown cells with `+++` lines.

```{code-cell}
---
tags: [hide-output]
---
for i in range(3):
    print("Millhouse did not test cootie positive", i)
```

```output
Millhouse did not test cootie positive 0
Millhouse did not test cootie positive 1
Millhouse did not test cootie positive 2
```

```{code-cell} ipython3
len(words)
```

```output
3
```

```{code-cell} ipython3
:tags: [raises-exception]

raise ValueError("oopsie!")
```

```output
Traceback (most recent call last):
...
ValueError: oopsie!
```

## A section

```{code-cell} ipython3
words.append("more")
```
"""
# the line of each code cell's fence (myst-nb's cell numbers count the markdown cells too)
LINES = [13, 19, 31, 45, 53, 67]
CELLS = {k: line for k, line in enumerate(LINES, start=1)}  # code cell k -> its line


def _project(root: Path, page: str = PAGE) -> Path:
    return write_project(root, CONF, {"index.rst": INDEX, "tn.md": page})


def _statuses(built: object) -> dict[str, str]:
    report = json.loads((built.report_dir / "report.json").read_text())  # type: ignore[attr-defined]
    return {r["snippet_id"]: r["status"] for r in report["snippets"]}


def test_the_fixture_is_what_myst_nb_reads_as_a_notebook() -> None:
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook

    assert is_myst_markdown_notebook(PAGE)
    nb = read_myst_markdown_notebook(PAGE, add_source_map=True)
    starts = [line for c, line in zip(nb.cells, nb.metadata["source_map"], strict=True) if c.cell_type == "code"]
    assert starts == LINES


def test_every_code_cell_runs_as_one_chain_and_its_output_block_is_checked(tmp_path: Path, cache_dir: Path) -> None:
    built = sphinx_build(_project(tmp_path / "p"), tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    assert _statuses(built) == {f"tn/cell-{n}": "ok" for n in CELLS}
    page = html(built.outdir / "tn.html")
    assert len(page.select(".snipcheck-snippet")) == len(CELLS)  # one panel of the real run per cell
    text = page.get_text()
    assert "A python cell" in text and "ValueError: oopsie!" in text
    # the output blocks left the page: the panel shows the real run in their place
    assert text.count("Millhouse did not test cootie positive 2") == 1
    assert page.select("div.highlight-output") == []
    assert built.before == built.after  # the page is never written


def test_a_one_character_change_to_an_output_block_fails_naming_the_page_line_and_cell(
    tmp_path: Path, cache_dir: Path
) -> None:
    built = sphinx_build(_project(tmp_path / "p", PAGE.replace("A python cell\n", "A python cel1\n")), tmp_path, cache_dir)
    assert built.statuscode == 1
    (drift,) = built.about("tn/cell-2")
    assert "--- stated (tn.md:19, cell 2 (id cell-2))" in drift and "[snipcheck.drift]" in drift
    assert "-A python cel1" in drift and "+A python cell" in drift
    assert [w for w in built.warnings if w not in built.about("tn/cell-2")] == []


def test_a_cell_whose_output_is_stated_nowhere_is_reported(tmp_path: Path, cache_dir: Path) -> None:
    page = PAGE.replace("```output\n3\n```\n\n", "")
    built = sphinx_build(_project(tmp_path / "p", page), tmp_path, cache_dir)
    assert built.statuscode == 1
    (said,) = built.about("tn/cell-4")
    assert "no stated output yet" in said and "+3" in said
    # a cell that prints nothing states that, without an output block
    assert _statuses(built)["tn/cell-1"] == "ok" and _statuses(built)["tn/cell-6"] == "ok"


@pytest.mark.parametrize(("last", "ok"), [("ValueError: oopsie!", True), ("KeyError: 'oopsie!'", False)])
def test_a_raises_exception_cell_must_raise_what_its_output_block_names(
    tmp_path: Path, cache_dir: Path, last: str, ok: bool
) -> None:
    built = sphinx_build(_project(tmp_path / "p", PAGE.replace("ValueError: oopsie!\n", last + "\n")), tmp_path, cache_dir)
    assert (built.statuscode == 0) == ok, built.warnings_text
    if not ok:
        (said,) = built.about("tn/cell-5")
        assert "KeyError" in said


def test_a_skipped_cell_keeps_its_output_block_and_is_not_run(tmp_path: Path, cache_dir: Path) -> None:
    page = PAGE.replace("```{code-cell} ipython3\nlen(words)\n```\n", "```{code-cell} ipython3\n:tags: [skip-execution]\nundefined_name\n```\n")
    built = sphinx_build(_project(tmp_path / "p", page), tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    assert "tn/cell-4" not in _statuses(built)
    assert [b.get_text() for b in html(built.outdir / "tn.html").select("div.highlight-output pre")] == ["3\n"]


def _pytest(project: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(project.parent / "cache"), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:nbval", "--snipcheck", "tn.md", "-v"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_pytest_snipcheck_passes_and_fails_the_same_way(tmp_path: Path) -> None:
    done = _pytest(_project(tmp_path / "ok"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.findall(r"^tn\.md::(\S+) PASSED", done.stdout, re.MULTILINE) == [f"tn/cell-{n}" for n in CELLS]
    done = _pytest(_project(tmp_path / "drift", PAGE.replace("A python cell\n", "A python cel1\n")))
    assert done.returncode == 1
    assert re.findall(r"^tn\.md::(\S+) FAILED", done.stdout, re.MULTILINE) == ["tn/cell-2"]
    assert "--- stated (tn.md:19, cell 2 (id cell-2))" in done.stdout


def test_the_execution_time_table_names_the_notebook(tmp_path: Path, cache_dir: Path) -> None:
    page = PAGE.replace('words = ["A", "python", "cell"]\n', 'import time\ntime.sleep(0.3)\nwords = ["A", "python", "cell"]\n')
    built = sphinx_build(_project(tmp_path / "p", page), tmp_path, cache_dir)
    assert built.statuscode == 0, built.warnings_text
    (line,) = [x for x in built.status.splitlines() if x.startswith("snipcheck: execution took")]
    assert re.search(r"slowest: tn\.md \(notebook\) \d+\.\d\d s \(6 cells: 6 same\)", line), line
    report = json.loads((built.report_dir / "report.json").read_text())
    (row,) = report["execution"]["rows"]
    assert (row["page"], row["chain"], row["snippets"]) == ("tn", "notebook", 6)


def test_record_names_a_text_notebook_cell_by_its_page_line_and_number_and_the_command_to_run(tmp_path: Path) -> None:
    """Found by a fresh user's try: record named such a cell ``tn.md, cell 19``
    (the page's line as a cell number) and advised ``snipcheck run ID``."""
    project = _project(tmp_path / "p", PAGE.replace("A python cell\n", "A python cel1\n"))
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    env["SNIPCHECK_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-m", "snipcheck", "record"], cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "tn.md:19, cell 2 (id cell-2)" in said and "snipcheck run tn/cell-2" in said, said
    assert "cell 19" not in said and "run ID" not in said
