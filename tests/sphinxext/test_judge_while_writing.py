"""A serial HTML build judges each page's snippets as it writes the page (issue 14).

The runs go on beside the writing of the pages instead of all before the
first page is written; the environment is saved again with the judged
records; a build that stops while writing leaves no record unjudged behind a
green rebuild.
"""

from __future__ import annotations

import pickle
from io import StringIO
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import plain
from sphinx.errors import SphinxWarning
from sphinx.testing.util import SphinxTestApp
from faults_support import sphinx_build

#: Seconds the later page's snippet waits for the earlier page to be written.
WAIT = 30


def _project(root: Path, cache: Path, pages: dict[str, tuple[str, str]]) -> Path:
    """``pages``: page name -> (the snippet's code, its stated output); one snippet a page."""
    (root / "snippets" / "w").mkdir(parents=True)
    (root / "conf.py").write_text(
        f'extensions = ["snipcheck"]\nsnipcheck_runner = "subprocess"\nsnipcheck_cache_dir = {str(cache)!r}\n'
        "snipcheck_fork_min_runs = 0\n"
    )
    for name, (code, stated) in pages.items():
        (root / "snippets" / "w" / f"{name}.py").write_text(code)
        (root / f"{name}.rst").write_text(f"{name}\n{'=' * len(name)}\n\n.. snippet:: w/{name}\n\n   {stated}\n")
    toctree = "".join(f"   {name}\n" for name in pages)
    (root / "index.rst").write_text(f"Index\n=====\n\n.. toctree::\n\n{toctree}")
    return root


def test_a_page_is_written_while_a_later_pages_snippet_still_runs(tmp_path: Path, probe_cache: Path) -> None:
    # Page b's snippet prints what it saw of page a's HTML while it ran.
    # Judging every snippet before writing any page, page a could never be
    # there: b's run ended first (after WAIT seconds, with the other line).
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    written = tmp_path / "build" / "_build" / "html" / "a.html"
    waiter = (
        "import pathlib, time\n"
        f"page = pathlib.Path({str(written)!r})\n"
        f"deadline = time.monotonic() + {WAIT}\n"
        "while not page.exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "print('page a was written while this ran' if page.exists() else 'page a was not written yet')\n"
    )
    root = _project(
        tmp_path / "p", cache, {"a": ("print('a')\n", "a"), "b": (waiter, "page a was written while this ran")}
    )
    built = sphinx_build(root, tmp_path / "build", cache)
    assert built.statuscode == 0, built.warnings_text
    assert "2 snippets on 2 pages: 2 match their stated output" in built.status, built.status
    assert "page a was written while this ran" in plain((built.outdir / "b.html").read_text())


def test_the_saved_environment_holds_the_judged_records(tmp_path: Path, probe_cache: Path) -> None:
    # Sphinx pickles the environment before it writes a page; the records
    # judged while writing must reach the saved one, or every rebuild would
    # judge every snippet again (and see nothing to re-read).
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    root = _project(tmp_path / "p", cache, {"a": ("print('a')\n", "a"), "b": ("print('b')\n", "b")})
    built = sphinx_build(root, tmp_path / "build", cache)
    assert built.statuscode == 0, built.warnings_text
    saved = pickle.loads((tmp_path / "build" / "_build" / "doctrees" / "environment.pickle").read_bytes())
    statuses = {rec.snippet_id: (rec.status, rec.origin) for recs in saved.snipcheck_records.values() for rec in recs}
    assert statuses == {"w/a": ("ok", "run"), "w/b": ("ok", "run")}
    again = sphinx_build(root, tmp_path / "build", cache)
    assert "2 snippets on 2 pages: 2 match their stated output; this build re-read no page" in again.status


def test_a_build_after_one_stopped_by_a_drift_warning_judges_every_snippet(tmp_path: Path, probe_cache: Path) -> None:
    # With --exception-on-warning the first warning stops the build while it
    # writes page b, after page a was judged and written.  Sphinx removes the
    # environment it saved before writing (where both records are unjudged);
    # saving it again at build-finished would let the next build take page
    # a's record as it was.  The next build judges both, and fails on b's.
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    root = _project(tmp_path / "p", cache, {"a": ("print('a')\n", "a"), "b": ("print('actual')\n", "stated")})
    # the overrides of sphinx_build's, or the next build would see a new configuration
    overrides = {"snipcheck_cache_dir": str(cache), "snipcheck_report_dir": str(tmp_path / "build" / "report")}
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SNIPCHECK_CACHE_DIR", raising=False)
        strict = SphinxTestApp(
            "html", srcdir=root, builddir=tmp_path / "build" / "_build", confoverrides=overrides,
            status=StringIO(), warning=StringIO(), exception_on_warning=True,
        )  # fmt: skip
        try:
            with pytest.raises(SphinxWarning, match="w/b"):
                strict.build()
        finally:
            strict.cleanup()
    assert (tmp_path / "build" / "_build" / "html" / "a.html").exists()
    again = sphinx_build(root, tmp_path / "build", cache)
    assert again.statuscode == 1, again.status
    assert "snippet 'w/b'" in again.warnings_text, again.warnings_text
    assert "2 snippets on 2 pages: 1 match their stated output, 1 drift;" in again.status, again.status


@pytest.mark.parametrize("builder", ["html", "dirhtml", "epub", "singlehtml", "text"])
def test_every_builder_judges_every_snippet_and_fails_on_drift(tmp_path: Path, probe_cache: Path, builder: str) -> None:
    # The kind of false-green.md #5, on each path: builders that judge as
    # they write (the HTML family) and builders that judge before writing.
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    root = _project(tmp_path / "p", cache, {"a": ("print('a')\n", "a"), "b": ("print('actual')\n", "stated")})
    built = sphinx_build(root, tmp_path / "build", cache, builder=builder)
    assert built.statuscode == 1, built.status
    assert "2 snippets on 2 pages: 1 match their stated output, 1 drift;" in built.status, built.status
    assert "snippet 'w/b'" in built.warnings_text, built.warnings_text
    saved = pickle.loads((tmp_path / "build" / "_build" / "doctrees" / "environment.pickle").read_bytes())
    assert sorted(rec.status for recs in saved.snipcheck_records.values() for rec in recs) == ["drift", "ok"]
