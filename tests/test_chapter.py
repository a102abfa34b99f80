"""The real chapter: it builds with -W, and a one-character change to a stated output fails it.

Written for any chapter content: the snippet to break is found in the
placement index, and the character to change is one that the project's
normalizers do not mask.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from helpers import plain
from snipcheck.placement import Placement
from snipcheck.project import Project
from snipcheck.rewrite import Edit
from snipcheck.files import write_all
from snipcheck.normalize import Normalizer, for_compare
from snipcheck.settings import Settings

pytestmark = pytest.mark.chapter


@pytest.fixture(scope="session")
def chapter_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One result cache for every chapter build of the session (the first build fills it)."""
    return tmp_path_factory.mktemp("chapter-cache")


def sphinx_build(project: Path, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache))
    args = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-c", ".",
        "-d", str(out / "doctrees"), "-D", f"snipcheck_report_dir={out / 'report'}",
        "docs", str(out / "html"),
    ]  # fmt: skip
    return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=1800, check=False)


@pytest.fixture(scope="session")
def chapter_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder (html, doctrees, report) of the session's chapter build."""
    return tmp_path_factory.mktemp("chapter")


@pytest.fixture(scope="session")
def chapter_build(chapter_out: Path, chapter_cache: Path) -> subprocess.CompletedProcess[str]:
    return sphinx_build(REPO, chapter_out, chapter_cache)


def test_chapter_builds_with_warnings_as_errors(chapter_build: subprocess.CompletedProcess[str]) -> None:
    assert "snipcheck." not in chapter_build.stderr, chapter_build.stderr
    assert chapter_build.returncode == 0, chapter_build.stderr
    assert re.search(r"^snipcheck: \d+ snippets", chapter_build.stdout, re.M)


def changed_by_one_character(body: str, normalizers: tuple[Normalizer, ...]) -> tuple[int, str] | None:
    """The first (index, new body) differing from ``body`` in one visible
    character that survives every normalizer, or ``None``."""
    for index, char in enumerate(body):
        if char.isspace():
            continue
        new = body[:index] + ("x" if char != "x" else "y") + body[index + 1 :]
        if for_compare(new, normalizers) != for_compare(body, normalizers):
            return index, new
    return None


def test_one_changed_character_in_a_stated_output_fails_the_build(
    tmp_path: Path, chapter_build: subprocess.CompletedProcess[str], chapter_cache: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("docs", "snippets"):
        shutil.copytree(REPO / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conf.py", "pyproject.toml"):
        shutil.copy2(REPO / name, project / name)
    chapter, _ = Project.load(project)
    settings = chapter.settings
    candidates = [p for p in chapter.placements() if p.stated.strip()]
    assert candidates, "the chapter places no snippet with a stated output"
    target: Placement | None = None
    for placement in candidates:
        change = changed_by_one_character(placement.stated, settings.normalizers)
        if change is not None:
            target = placement
            break
    assert target is not None and change is not None
    index, new_body = change

    # Edit that one character in the page (read back through the build's parser).
    files = chapter.rewrite([Edit(target, new_body)])
    write_all({path: new for path, (_, new) in files.items()})
    row = target.stated[:index].count("\n")

    done = sphinx_build(project, tmp_path / "out", chapter_cache)
    assert done.returncode != 0
    relative = Path(target.source).relative_to(project).as_posix()
    warning = re.compile(
        rf"^(?:\S*/)?{re.escape(relative)}:{target.line}: WARNING: snippet '{re.escape(target.snippet_id)}'"
        r"(?P<message>.*?)\[snipcheck\.(?P<subtype>\w+)\]",
        re.M | re.S,
    )
    found = warning.search(done.stderr)
    assert found, done.stderr
    assert found["subtype"] == "drift"
    # The diff (of normalized texts) shows the edited line as stated ('-') and
    # the real one as actual ('+').
    stated_line = for_compare(new_body, settings.normalizers).split("\n")[row]
    actual_line = for_compare(target.stated, settings.normalizers).split("\n")[row]
    assert f"\n-{shown(stated_line)}\n" in found["message"]
    assert f"\n+{shown(actual_line)}\n" in found["message"]


def shown(line: str) -> str:
    """A diff line as the warning shows it: trailing blanks as middle dots."""
    stripped = line.rstrip(" \t")
    return stripped + "·" * (len(line) - len(stripped))


def test_the_pytest_plugin_checks_every_placement_of_the_chapter(
    chapter_build: subprocess.CompletedProcess[str], chapter_cache: Path, chapter_placements: list[Placement]
) -> None:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(chapter_cache))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "docs/", "-q", "-rs"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    passed = int(re.search(r"(\d+) passed", done.stdout).group(1))  # type: ignore[union-attr]
    skipped = int(m.group(1)) if (m := re.search(r"(\d+) skipped", done.stdout)) else 0
    assert passed + skipped == len(chapter_placements)
    assert passed > 30


#: Lines a build at the default verbosity must not print (adoption.md #12):
#: parser-configuration dumps, myst-nb's jupyter-cache path (no notebook is
#: executed), Sphinx's template chatter, jieba's dictionary chatter.
CHATTER = ["MdParserConfig(", "NbParserConfig(", "Using jupyter-cache", "Writing evaluated template result", "prefix dict"]


def test_the_chapter_build_prints_no_chatter(chapter_build: subprocess.CompletedProcess[str]) -> None:
    output = plain(chapter_build.stdout + chapter_build.stderr)
    assert [line for line in output.splitlines() if any(c in line for c in CHATTER)] == []


def test_a_rebuild_with_nothing_changed_is_quiet_and_writes_no_page(
    chapter_build: subprocess.CompletedProcess[str], chapter_out: Path, chapter_cache: Path
) -> None:
    """adoption.md #12: the second build of an unchanged chapter sees no
    configuration change (Sphinx would say "The configuration has changed"),
    reads and writes no page, and prints no chatter."""
    assert chapter_build.returncode == 0, chapter_build.stderr
    # the documents' pages (Sphinx writes genindex and search on every build)
    documents = [p.relative_to(REPO / "docs").with_suffix(".html") for p in (REPO / "docs").rglob("*.md")]
    pages = {chapter_out / "html" / d: (chapter_out / "html" / d).stat().st_mtime_ns for d in documents}
    assert len(pages) >= 3
    again = sphinx_build(REPO, chapter_out, chapter_cache)
    output = plain(again.stdout + again.stderr)  # Sphinx colours it where FORCE_COLOR is set
    assert again.returncode == 0, output
    assert "configuration has changed" not in output, output
    assert "updating environment: 0 added, 0 changed, 0 removed" in output, output
    assert not re.search(r"^(reading sources|writing output)\.\.\. \[", output, re.M), output
    assert [line for line in output.splitlines() if any(c in line for c in CHATTER)] == []
    assert {p: p.stat().st_mtime_ns for p in pages} == pages
