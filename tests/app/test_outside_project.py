"""An outside Sphinx project adopts snipcheck from the wheel (issue 12, Tests; adoption.md).

A fresh virtualenv holds the built wheel (never an editable install) with its
``myst`` extra, and pytest; no torch.  ``sphinx-quickstart`` of that
environment makes the project (``language = "en"``, alabaster, a Makefile),
with ``extensions = ["myst_parser", "snipcheck"]``; ``index.rst`` places a
file snippet (``.. snippet::``) and ``page.md`` a snippet whose code is
written in the page (``snippet-code``).  Everything runs through the
environment's own executables, ``snipcheck``, ``sphinx-build`` and
``pytest``, as its user would run them, with nothing of this test run in
their environment.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import placements_in
from wheel_fixtures import venv_environ, venv_with

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
FILE_CODE = 'words = ["file", "snippet"]\nprint("hello from a", " ".join(words))\n'
INLINE_CODE = 'total = sum(range(5))\nprint("inline total:", total)\n'
PAGE = f"# Written in the page\n\n```{{snippet-code}} tutorial/inline\n{INLINE_CODE}```\n\n```{{snippet}} tutorial/inline\n```\n"


@pytest.fixture(scope="module")
def venv(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The virtualenv's python: the wheel with its ``myst`` extra, and pytest."""
    python = venv_with(tmp_path_factory.mktemp("outside-env") / "venv", dists["wheel"], "myst", "pytest")
    found = subprocess.run(
        [str(python), "-c", "import snipcheck, torch"], capture_output=True, text=True, env=venv_environ(python)
    )
    assert "No module named 'torch'" in found.stderr  # snipcheck imports, torch is not there
    return python


def tool(venv: Path, name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run executable ``name`` of the virtualenv, as its user would."""
    return subprocess.run(
        [str(venv.parent / name), *args],
        cwd=cwd, env=venv_environ(venv), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def line_of(page: Path, text: str) -> int:
    """1-based number of the first line of ``page`` that is ``text``."""
    return page.read_text(encoding="utf-8").splitlines().index(text) + 1


@pytest.fixture(scope="module")
def recorded(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The project as sphinx-quickstart makes it, with both snippets placed, after ``snipcheck record``."""
    root = tmp_path_factory.mktemp("outside") / "project"
    made = tool(
        venv, "sphinx-quickstart", "-q", "-p", "Outside", "-a", "Tester", "-v", "0.1", "-l", "en",
        "--extensions", "myst_parser,snipcheck", "--no-batchfile", str(root), cwd=root.parent,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    conf = (root / "conf.py").read_text(encoding="utf-8")
    for line in ("extensions = [\n    'myst_parser',\n    'snipcheck',\n]", "language = 'en'", "html_theme = 'alabaster'"):
        assert line in conf
    (root / "snippets" / "tutorial").mkdir(parents=True)
    (root / "snippets" / "tutorial" / "hello.py").write_text(FILE_CODE, encoding="utf-8")
    index = root / "index.rst"
    text = index.read_text(encoding="utf-8").replace(":caption: Contents:\n", ":caption: Contents:\n\n   page\n")
    index.write_text(text + "\nA snippet from a file:\n\n.. snippet:: tutorial/hello\n", encoding="utf-8")
    (root / "page.md").write_text(PAGE, encoding="utf-8")
    return root, tool(venv, "snipcheck", "record", cwd=root)


def printed(venv: Path, root: Path, *args: str) -> str:
    """What the virtualenv's python prints for ``args``, as a stated output (no final newline)."""
    done = subprocess.run([str(venv), *args], cwd=root, capture_output=True, text=True, check=True, env=venv_environ(venv))
    return done.stdout.removesuffix("\n")


def copy(recorded: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> Path:
    """This test's own copy of the recorded project (its cache under _build included)."""
    return Path(shutil.copytree(recorded[0], tmp_path / "project", symlinks=True))


def drift(root: Path, venv: Path) -> int:
    """Change the stated output of tutorial/hello in index.rst; its directive's line."""
    index = root / "index.rst"
    actual = printed(venv, root, "snippets/tutorial/hello.py")
    text = index.read_text(encoding="utf-8")
    assert text.count(f"\n   {actual}\n") == 1
    index.write_text(text.replace(f"\n   {actual}\n", "\n   hello from an edited page\n"), encoding="utf-8")
    return line_of(index, ".. snippet:: tutorial/hello")


def test_record_fills_both_kinds_of_placement(venv: Path, recorded: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, done = recorded
    assert done.returncode == 0, done.stdout + done.stderr
    hello = line_of(root / "index.rst", ".. snippet:: tutorial/hello")
    inline = line_of(root / "page.md", "```{snippet} tutorial/inline")
    assert done.stdout.splitlines() == [
        f"index.rst:{hello}: tutorial/hello: recorded",
        f"page.md:{inline}: tutorial/inline: recorded",
        "2 stated output(s) recorded; 0 unchanged or skipped",
    ]
    assert done.stderr == ""  # no word about torch, nor anything else
    assert [p.stated for p in placements_in(root / "index.rst")] == [printed(venv, root, "snippets/tutorial/hello.py")]
    assert [p.stated for p in placements_in(root / "page.md")] == [printed(venv, root, "-c", INLINE_CODE)]
    assert (root / "page.md").read_text(encoding="utf-8").endswith(
        f"```{{snippet}} tutorial/inline\n{printed(venv, root, '-c', INLINE_CODE)}\n```\n"
    )


def test_the_build_passes_and_no_page_holds_chinese(
    venv: Path, recorded: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    root = copy(recorded, tmp_path)
    built = tool(venv, "sphinx-build", "-M", "html", ".", "_build", cwd=root)  # what `make html` runs
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    assert "snipcheck: 2 snippets on 2 pages: 2 match their stated output" in built.stdout
    pages = sorted((root / "_build" / "html").glob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "page.html"}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not CJK.search(text), f"{page.name}: {CJK.findall(text)[:10]}"
    assert printed(venv, root, "snippets/tutorial/hello.py") in (root / "_build" / "html" / "index.html").read_text()
    latex = tool(venv, "sphinx-build", "-M", "latex", ".", "_build", cwd=root)
    assert latex.returncode == 0, latex.stdout + latex.stderr
    (tex,) = (root / "_build" / "latex").glob("*.tex")
    assert not CJK.search(tex.read_text(encoding="utf-8")), CJK.findall(tex.read_text(encoding="utf-8"))[:10]


def test_the_build_fails_on_drift_without_W_and_names_the_snippet(
    venv: Path, recorded: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    root = copy(recorded, tmp_path)
    line = drift(root, venv)
    built = tool(venv, "sphinx-build", "-M", "html", ".", "_build", cwd=root)
    assert built.returncode != 0, built.stdout + built.stderr
    assert f"index.rst:{line}: WARNING: snippet 'tutorial/hello': the stated output differs" in built.stderr
    assert "-hello from an edited page\n+hello from a file snippet" in built.stderr
    assert "if the new output is right, record it: snipcheck record tutorial/hello" in built.stderr
    assert "tutorial/inline" not in built.stderr


def test_pytest_snipcheck_collects_each_placement_passes_then_fails_with_the_diff(
    venv: Path, recorded: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    root = copy(recorded, tmp_path)
    passed = tool(venv, "pytest", "--snipcheck", "-p", "no:cacheprovider", "-v", cwd=root)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert re.findall(r"^(\S+) PASSED", passed.stdout, re.MULTILINE) == ["index.rst::tutorial/hello", "page.md::tutorial/inline"]
    assert "collected 2 items" in passed.stdout and "2 passed" in passed.stdout
    assert "plugins: snipcheck-" in passed.stdout  # the plugin of the installed wheel, through its entry point
    line = drift(root, venv)
    failed = tool(venv, "pytest", "--snipcheck", "-p", "no:cacheprovider", "-q", cwd=root)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"snippet 'tutorial/hello' (index.rst:{line}): the stated output differs" in failed.stdout
    assert "-hello from an edited page\n+hello from a file snippet" in failed.stdout
    assert "1 failed, 1 passed" in failed.stdout
