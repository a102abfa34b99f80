"""Progress while snippets run (adoption.md #8, issue 12 §8).

A build that judges every snippet before it writes a page logs one progress
line per snippet through Sphinx's ``status_iterator`` ("running snippets...
[ 50%] p/a"), so a long run is not silence after "reading sources"; a serial
HTML build, whose runs go on while it writes the pages, says so, and logs the
same line per snippet as it waits for it, after Sphinx's own line of the page
written ("writing output... [ 50%] a", issue 24); ``snipcheck verify`` keeps one progress
line on stderr, rewritten in place on a terminal, and prints a line now and
then (and the last one) into a log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import plain
from faults_support import sphinx_build

IDS = ["p/a", "p/b", "p/c"]


@pytest.fixture
def project(tmp_path: Path, probe_cache: Path) -> Path:
    """An ``.rst`` project placing three snippets whose stated outputs hold."""
    root = tmp_path / "p"
    (root / "snippets" / "p").mkdir(parents=True)
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    (root / "conf.py").write_text(
        f'extensions = ["snipcheck"]\nsnipcheck_runner = "subprocess"\nsnipcheck_cache_dir = {str(cache)!r}\n'
    )
    page = "Progress\n========\n"
    for snippet_id in IDS:
        name = snippet_id.split("/")[1]
        (root / "snippets" / f"{snippet_id}.py").write_text(f"print({name!r})\n")
        page += f"\n.. snippet:: {snippet_id}\n\n   {name}\n"
    (root / "index.rst").write_text(page)
    return root


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
def test_a_build_that_judges_before_writing_logs_a_progress_line_per_snippet(
    project: Path, tmp_path: Path, colour: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sphinx writes each progress line over the last one (an erase-line
    # code before it, a carriage return after it) once it believes it writes
    # to a terminal: CI=true (as on a CI runner), FORCE_COLOR or a tty.
    for name in ("CI", "FORCE_COLOR", "FORCE_COLOUR", "NO_COLOR", "NO_COLOUR"):
        monkeypatch.delenv(name, raising=False)
    if colour:
        monkeypatch.setenv("CI", "true")
    built = sphinx_build(project, tmp_path / "build", tmp_path / "cache", builder="singlehtml")
    assert built.statuscode == 0, built.warnings_text
    lines = [line.rstrip() for line in plain(built.status).splitlines() if line.startswith("running snippets")]
    assert lines == [
        "running snippets... [ 33%] p/a",
        "running snippets... [ 67%] p/b",
        "running snippets... [100%] p/c",
    ], built.status
    assert "snipcheck: 3 snippets on 1 page: 3 match their stated output" in built.status


def test_a_serial_html_build_names_each_snippet_it_waits_for_while_it_writes_pages(project: Path, tmp_path: Path) -> None:
    """issue 24: the default build (serial HTML) judges the snippets as it
    writes their pages; a progress line per snippet, between Sphinx's own
    "writing output" lines, names the one the build waits for."""
    built = sphinx_build(project, tmp_path / "build", tmp_path / "cache")
    assert built.statuscode == 0, built.warnings_text
    lines = [line.rstrip() for line in plain(built.status).splitlines()]
    assert "snipcheck: the runs go on while the pages are written" in lines, built.status
    shown = [line for line in lines if line.startswith(("running snippets... [", "writing output... ["))]
    assert shown == [
        "writing output... [100%] index",
        "running snippets... [ 33%] p/a",
        "running snippets... [ 67%] p/b",
        "running snippets... [100%] p/c",
    ], built.status
    assert "snipcheck: 3 snippets on 1 page: 3 match their stated output" in built.status


def verify(project: Path, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "verify", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False, **kwargs,  # type: ignore[call-overload]
    )  # fmt: skip


def test_verify_prints_a_progress_line_into_a_log_and_none_with_q(project: Path) -> None:
    done = verify(project)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "[3/3] p/c\n"  # into a log: every 25th snippet and the last
    assert "[3/3]" not in done.stdout
    quiet = verify(project, "-q")
    assert (quiet.returncode, quiet.stderr) == (0, "")
    assert quiet.stdout == done.stdout


def test_verify_rewrites_its_progress_line_in_place_on_a_terminal(project: Path) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        done = subprocess.run(
            [sys.executable, "-m", "snipcheck", "verify"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=follower, timeout=300, check=False,
        )  # fmt: skip
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    # the terminal turns "\n" into "\r\n"
    assert seen.decode() == "".join(f"\r\x1b[K[{n}/3] {i}" for n, i in enumerate(IDS, start=1)) + "\r\n"


@pytest.mark.parametrize("builder", ["singlehtml", "html"], ids=["judged-before-writing", "judged-while-writing"])
def test_a_quiet_build_keeps_no_progress_line(project: Path, tmp_path: Path, builder: str) -> None:
    # sphinx-build -q: Sphinx still formats each status line into a buffer
    # that nobody reads (~80 us a snippet on the build's critical path); the
    # snippets' progress line is not made at all then.
    from io import StringIO

    from sphinx.application import Sphinx

    app = Sphinx(
        str(project), str(project), str(tmp_path / "out"), str(tmp_path / "doctrees"), builder,
        confoverrides={"snipcheck_cache_dir": str(tmp_path / "cache"), "snipcheck_report_dir": str(tmp_path / "report")},
        status=None, warning=StringIO(),
    )  # fmt: skip
    app.build()
    assert app.statuscode == 0, app._warning.getvalue()
    assert app.quiet
    assert "snippet" in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "running snippets" not in plain(app._status.getvalue())
