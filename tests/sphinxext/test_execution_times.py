"""What a build tells a docs team about its runs (issue 24, "feedback").

Where each result came from, told apart in ``report.json`` (``output``) and
the summary: taken from the cache, run with the stated output, run with a new
one; and the execution-time table per page and per chain (sphinx-gallery's
``sg_execution_times``), slowest first, whose total is the wall time of the
execution, not the sum of the runs (two slots run the two slow snippets at
once here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_cache
from helpers import write_project
from faults_support import sphinx_build

PAGE = """\
Page
====

.. snippet:: t/slow-a

   a

.. snippet:: t/slow-b

   b

.. snippet:: t/drifts

   stated words

.. snippet-chain:: steps

.. snippet:: t/one

   1

.. snippet:: t/two

   2
"""
SOURCES = {
    "t/slow-a": "import time\ntime.sleep(0.5)\nprint('a')\n",
    "t/slow-b": "import time\ntime.sleep(0.5)\nprint('b')\n",
    "t/drifts": "print('actual words')\n",
    "t/one": "x = 1\nprint(x)\n",
    "t/two": "print(x + 1)\n",
}


@pytest.fixture
def project(tmp_path: Path, probe_cache: Path) -> Path:
    fresh_cache(tmp_path / "cache", probe_cache)
    conf = 'extensions = ["snipcheck"]\nsnipcheck_runner = "subprocess"\nsnipcheck_jobs = 2\n'
    return write_project(tmp_path / "p", conf, {"index.rst": PAGE}, SOURCES)


def report(built: Any) -> dict[str, Any]:
    return json.loads((built.report_dir / "report.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_report_and_the_summary_tell_the_cache_a_same_output_and_a_new_one_apart(project: Path, tmp_path: Path) -> None:
    cold = sphinx_build(project, tmp_path / "one", tmp_path / "cache")
    assert cold.statuscode == 1  # t/drifts drifted
    found = {s["snippet_id"]: (s["origin"], s["output"]) for s in report(cold)["snippets"]}
    assert found == {
        "t/slow-a": ("run", "same"), "t/slow-b": ("run", "same"), "t/drifts": ("run", "new"),
        "t/one": ("run", "same"), "t/two": ("run", "same"),
    }  # fmt: skip
    assert "; this build ran 5, took 0 from the cache; of its runs 4 gave the stated output, 1 a new one" in cold.status
    # a fresh environment: every result is the cache's, the drifted one still new against its page
    warm = sphinx_build(project, tmp_path / "two", tmp_path / "cache", freshenv=True)
    found = {s["snippet_id"]: (s["origin"], s["output"]) for s in report(warm)["snippets"]}
    assert set(found.values()) == {("cache", "same"), ("cache", "new")} and found["t/drifts"] == ("cache", "new")
    assert "; this build ran 0, took 5 from the cache\n" in warm.status
    assert "of its runs" not in warm.status and "execution took" not in warm.status
    rows = report(warm)["execution"]["rows"]
    assert [row["origin"] for row in rows] == [
        {"cache": 3, "ci-cache": 0, "same": 0, "new": 0, "kept": 0, "none": 0},
        {"cache": 2, "ci-cache": 0, "same": 0, "new": 0, "kept": 0, "none": 0},
    ]


def test_the_execution_table_has_a_row_per_page_and_chain_slowest_first_and_wall_time(project: Path, tmp_path: Path) -> None:
    built = sphinx_build(project, tmp_path / "one", tmp_path / "cache")
    execution = report(built)["execution"]
    durations = {s["snippet_id"]: s["duration"] for s in report(built)["snippets"]}
    page, chain = execution["rows"]
    assert (page["page"], page["chain"], page["snippets"]) == ("index", None, 3)
    assert (chain["page"], chain["chain"], chain["snippets"]) == ("index", "steps", 2)
    assert page["origin"] == {"cache": 0, "ci-cache": 0, "same": 2, "new": 1, "kept": 0, "none": 0}
    assert page["seconds"] == pytest.approx(durations["t/slow-a"] + durations["t/slow-b"] + durations["t/drifts"], abs=2e-3)
    assert chain["seconds"] == pytest.approx(durations["t/one"] + durations["t/two"], abs=2e-3)
    assert page["seconds"] >= 1.0 > chain["seconds"]  # two 0.5 s sleeps: slowest first
    # the two slow snippets ran side by side: the wall time is less than the runs' sum
    assert execution["runs"] == pytest.approx(sum(durations.values()), abs=2e-3)
    assert max(durations.values()) <= execution["wall"] < execution["runs"]
    (line,) = [x for x in built.status.splitlines() if x.startswith("snipcheck: execution took")]
    assert line == (
        f"snipcheck: execution took {execution['wall']:.2f} s of wall time, its runs {execution['runs']:.2f} s in all; "
        f"slowest: index {page['seconds']:.2f} s (3 snippets: 2 same, 1 new); "
        f"index, chain steps {chain['seconds']:.2f} s (2 snippets: 2 same)"
    )
