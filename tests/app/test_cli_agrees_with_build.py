"""The command line fails where the build fails on a page's snippet markup.

Found by a fresh user's try: ``record`` and ``verify`` exited 0 on pages
that ``sphinx-build -W`` failed on: a snippet placed on two pages, a
``snippet-code`` block written after its ``snippet``, the code of one
snippet written twice in a page.  The command line reads the pages as the
build does; now it takes the build's own word on them (the placement it
could not load, the duplicates it warns about, the code written twice) and
fails with the build's message, at the page's line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import snipcheck_cli

CONF = 'project = "x"\nextensions = ["snipcheck"]\nexclude_patterns = ["_build"]\nsnipcheck_runner = "subprocess"\n'

#: name → (pages, snippet files, what the build and the command line both say)
LAYOUTS = {
    "placed-on-two-pages": (
        {
            "index.rst": "X\n=\n\n.. toctree::\n   :glob:\n\n   p/*\n",
            "p/a.rst": "A\n=\n\n.. snippet:: h\n",
            "p/b.rst": "B\n=\n\n.. snippet:: h\n",
        },
        {"h": 'print("hello")\n'},
        "snippet 'h' is placed more than once",
    ),
    "code-after-its-snippet": (
        {"index.rst": 'X\n=\n\n.. snippet:: later\n\n.. snippet-code:: later\n\n   print("code after")\n'},
        {},
        "no snippet-code block with this id earlier in the page",
    ),
    "code-written-twice": (
        {"index.rst": 'X\n=\n\n.. snippet-code:: dup\n\n   print("v1")\n\n.. snippet:: dup\n\n.. snippet-code:: dup\n\n   print("v2")\n'},
        {},
        "snippet 'dup' has its code written twice in this page",
    ),
}


def project(root: Path, pages: dict[str, str], snippets: dict[str, str]) -> Path:
    (root / "snippets").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for sid, code in snippets.items():
        (root / "snippets" / f"{sid}.py").write_text(code)
    return root


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_record_and_verify_fail_where_the_build_fails(tmp_path: Path, layout: str) -> None:
    pages, snippets, said = LAYOUTS[layout]
    root = project(tmp_path / "p", pages, snippets)
    cache = tmp_path / "cache"
    recorded = snipcheck_cli(root, "record", cache=cache)
    assert recorded.returncode == 1, recorded.stdout + recorded.stderr
    assert said in recorded.stdout + recorded.stderr
    for _ in range(2):  # the second from the index kept since, which reads no page again
        verified = snipcheck_cli(root, "verify", cache=cache)
        assert verified.returncode != 0, verified.stdout + verified.stderr
        assert said in verified.stdout + verified.stderr
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", "-d", str(tmp_path / "doctrees"), str(root), str(tmp_path / "html")],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
        env={"SNIPCHECK_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert built.returncode != 0
    assert said in built.stderr


def _diff(text: str, end: str, indent: int = 0) -> list[str]:
    """The diff lines of a report, from its ``--- stated`` line up to the line
    that starts with ``end``, ``indent`` characters dropped from each."""
    lines = [line[indent:] for line in text.splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith("--- stated"))
    last = next(i for i, line in enumerate(lines) if i > first and text.splitlines()[i].startswith(end))
    return lines[first:last]


def test_verify_shows_a_drift_with_the_hunks_the_build_shows(tmp_path: Path) -> None:
    """Found by a fresh user's try: with ``...`` over a traceback, verify's
    terminal showed the committed report's steady diff (matched lines folded
    into one ``...``, other line numbers) where the build showed the run's."""
    page = (
        "X\n=\n\n.. snippet:: tb\n\n   start\n   Traceback (most recent call last):\n"
        "   ...\n   ZeroDivisionError: integer division by zero\n"
    )
    root = project(tmp_path / "p", {"index.rst": page}, {"tb": 'print("start")\nx = 1 / 0\n\n# /// snipcheck\n# expect = "ZeroDivisionError"\n# ///\n'})
    cache = tmp_path / "cache"
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"), str(root), str(tmp_path / "html")],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
        env={"SNIPCHECK_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    verified = snipcheck_cli(root, "verify", cache=cache)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    shown = _diff(built.stderr, "full diff:")
    assert "+ZeroDivisionError: division by zero" in shown and any("matched by stated line" in s for s in shown), built.stderr
    assert _diff(verified.stdout, "DRIFT in", indent=6) == shown, (verified.stdout, built.stderr)
