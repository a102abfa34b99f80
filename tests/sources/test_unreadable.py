"""Inputs that cannot be read get one located line saying what is wrong and
what to do (issue 23 item 9), in the build (a warning; the rest builds) and
in every command: a snippet file that is a loop of symbolic links, a link to
nothing, a folder, a pipe, not UTF-8 or not readable; a page that is not
UTF-8 or not readable.

Was: a symbolic-link loop was "no file snippets/f/a.py"; a page in latin-1
ended the build and ``snipcheck record`` in a ``UnicodeDecodeError`` traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import snipcheck_cli, write_project
from snipcheck.sources.snippets import SnippetError, load, locate
from snipcheck.sphinxext import pages


@pytest.fixture
def snippets_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "snippets"
    (folder / "f").mkdir(parents=True)
    return folder


def located(snippet_id: str, snippets_dir: Path) -> str:
    with pytest.raises(SnippetError) as caught:
        locate(snippet_id, snippets_dir)
    return caught.value.message


def test_a_loop_of_symbolic_links_is_named_as_one(snippets_dir: Path) -> None:
    (snippets_dir / "f" / "a.py").symlink_to("b.py")
    (snippets_dir / "f" / "b.py").symlink_to("a.py")
    assert located("f/a", snippets_dir) == (
        "snippet 'f/a': snippets/f/a.py is a loop of symbolic links (a.py → b.py → a.py); point the link at a file"
    )


def test_a_link_to_nothing_names_its_target(snippets_dir: Path) -> None:
    (snippets_dir / "f" / "a.py").symlink_to("gone.py")
    assert located("f/a", snippets_dir) == (
        "snippet 'f/a': snippets/f/a.py is a symbolic link to gone.py, which does not exist; fix the link or remove it"
    )


def test_a_folder_where_the_file_should_be(snippets_dir: Path) -> None:
    (snippets_dir / "f" / "a.py").mkdir()
    assert located("f/a", snippets_dir) == (
        "snippet 'f/a': snippets/f/a.py is a folder, not a file; a snippet is one file: rename the folder, or fix the id"
    )


def test_a_named_pipe_is_never_opened(snippets_dir: Path) -> None:
    os.mkfifo(snippets_dir / "f" / "a.py")  # reading it would block the build
    assert located("f/a", snippets_dir) == "snippet 'f/a': snippets/f/a.py is a named pipe, not a file; a snippet is a plain file"


def test_a_folder_that_cannot_be_searched(snippets_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root reads every folder, so the refusal is made here as the kernel makes it.
    real = os.lstat

    def lstat(path, *args, **kwargs):
        if str(path).endswith("f/a.py"):
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    assert located("f/a", snippets_dir) == (
        "snippet 'f/a': cannot look up snippets/f/a.py: Permission denied; make its folder searchable (chmod u+x), "
        "or run as a user who may read it"
    )


def test_a_snippet_that_is_not_utf8_names_the_byte_line_and_column(snippets_dir: Path) -> None:
    (snippets_dir / "f" / "a.py").write_bytes(b"print(1)\nprint('caf\xe9')\n")
    with pytest.raises(SnippetError) as caught:
        load("f/a", snippets_dir, snippets_dir.parent)
    assert caught.value.message == (
        "snippets/f/a.py is not valid UTF-8 (byte 0xe9 at line 2, column 11: invalid continuation byte); save it as UTF-8"
    )


def test_a_snippet_that_cannot_be_read_says_how_to_fix_it(snippets_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (snippets_dir / "f" / "a.py").write_text("print(1)\n")
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "a.py":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(SnippetError) as caught:
        load("f/a", snippets_dir, snippets_dir.parent)
    assert caught.value.message == (
        "cannot read snippets/f/a.py: Permission denied; make it readable (chmod u+r), or run as a user who may read it"
    )


def test_a_page_that_cannot_be_read_says_how_to_fix_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "t.md"
    page.write_text("# T\n")
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(PermissionError(13, "Permission denied"))
                        if self == page else real(self))  # fmt: skip
    assert pages.problem(page, "utf-8-sig") == (1, "cannot read this page: Permission denied; make it readable (chmod u+r)")


# --- the build and the commands, on one project --------------------------------------------

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_runner = "subprocess"
snipcheck_preload = []
snipcheck_cache_dir = {cache!r}
"""
INDEX = "# Index\n\n```{toctree}\nlatin\n```\n\n```{snippet} f/ok\nok\n```\n\nafter ok\n\n```{snippet} f/loop\n```\n\nafter loop\n"
LATIN = b"# Latin\n\ncaf\xe9 cr\xe8me\n\n```{snippet} f/hidden\n```\n"
NOT_UTF8 = (
    "this page is not valid UTF-8 (byte 0xe9 at line 3, column 4: invalid continuation byte); save it as UTF-8 "
    "(or set source_encoding in conf.py)"
)
LOOP = "snippet 'f/loop': snippets/f/loop.py is a loop of symbolic links (loop.py → back.py → loop.py); point the link at a file"


@pytest.fixture
def bad(tmp_path: Path, probe_cache: Path) -> Path:
    conf = CONF.format(cache=str(fresh_cache(tmp_path / "cache", probe_cache)))
    snippets = {"f/ok": "print('ok')\n", "f/hidden": "print('hidden')\n"}
    root = write_project(tmp_path / "p", conf, {"docs/index.md": INDEX, "docs/latin.md": LATIN}, snippets)
    (root / "snippets" / "f" / "loop.py").symlink_to("back.py")
    (root / "snippets" / "f" / "back.py").symlink_to("loop.py")
    return root


def test_the_build_warns_at_each_place_builds_the_rest_and_fails(bad: Path) -> None:
    out = bad / "_build"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(bad), str(bad / "docs"), str(out)],
        cwd=bad, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    docs = bad / "docs"
    warnings = [line for line in done.stderr.splitlines() if "[snipcheck." in line]
    assert warnings == [
        (
            f"{docs / 'latin.md'}:3: WARNING: {NOT_UTF8}; it is left out of this build, and its snippets are not "
            "checked [snipcheck.missing]"
        ),
        f"{docs / 'index.md'}:13: WARNING: {LOOP} [snipcheck.missing]",
    ]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "after loop" in page and "after ok" in page
    assert "ERROR: snipcheck: 1 page could not be read, so the snippets there were not checked; the build fails " in done.stderr
    assert "  latin.md:3: cannot be read" in done.stderr
    assert done.returncode == 1


def test_record_says_so_at_each_place_records_the_rest_and_fails(bad: Path) -> None:
    (bad / "docs" / "index.md").write_text(INDEX.replace("f/ok\nok\n", "f/ok\n"))
    done = snipcheck_cli(bad, "record")
    assert done.returncode == 1
    assert done.stderr == (
        f"error: docs/latin.md:3: {NOT_UTF8}; its snippets were not recorded\n"
        f"docs/index.md:12: {LOOP}\n"
    )
    assert "```{snippet} f/ok\nok\n```" in (bad / "docs" / "index.md").read_text()
    assert (bad / "docs" / "latin.md").read_bytes() == LATIN


@pytest.mark.parametrize("command", [["verify"], ["accept", "--force"], ["review", "--force"]])
def test_commands_that_read_every_page_refuse_and_do_nothing(bad: Path, command: list[str]) -> None:
    before = {p: p.read_bytes() for p in (bad / "docs").iterdir()}
    done = snipcheck_cli(bad, *command)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: docs/latin.md:3: {NOT_UTF8}; {command[0]} reads every page, so it did nothing\n"
    assert {p: p.read_bytes() for p in (bad / "docs").iterdir()} == before


def test_run_names_the_loop_and_an_unreadable_page_that_may_hold_the_code(bad: Path) -> None:
    done = snipcheck_cli(bad, "run", "f/loop", "f/elsewhere")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == f"error: {LOOP}"
    assert lines[1].startswith("error: snippet 'f/elsewhere' not found: ")
    assert lines[1].endswith(f"; a page that cannot be read may hold its code: docs/latin.md:3: {NOT_UTF8}")
    assert len(lines) == 2


def test_the_pytest_plugin_fails_the_page_with_the_reason(bad: Path) -> None:
    env = dict(os.environ, NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "docs/"],
        cwd=bad, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert f"docs/latin.md:3: {NOT_UTF8}; its snippets were not checked" in done.stdout
    assert "ERROR docs/latin.md" in done.stdout
    assert "UnicodeDecodeError" not in done.stdout


# --- pages Sphinx drops on its own, or whose read would block ------------------------------

LINKED_PAGES = {
    "gone.md": "this page is a symbolic link to missing.md, which does not exist; fix the link or remove it",
    "loop.md": "this page is a loop of symbolic links (loop.md → loop2.md → loop.md); point the link at a file",
    "loop2.md": "this page is a loop of symbolic links (loop2.md → loop.md → loop2.md); point the link at a file",
    "pipe.md": "this page is a named pipe, not a file; a page is a plain file",
}


@pytest.fixture
def linked(tmp_path: Path, probe_cache: Path) -> Path:
    # Was: Sphinx's own "Ignored unreadable document" warning for the links,
    # and record exited 0 without a word; the named pipe hung the build.
    conf = CONF.format(cache=str(fresh_cache(tmp_path / "cache", probe_cache)))
    page = "# Index\n\n```{snippet} f/ok\nok\n```\n"
    root = write_project(tmp_path / "p", conf, {"docs/index.md": page}, {"f/ok": "print('ok')\n"})
    (root / "docs" / "gone.md").symlink_to("missing.md")
    (root / "docs" / "loop.md").symlink_to("loop2.md")
    (root / "docs" / "loop2.md").symlink_to("loop.md")
    os.mkfifo(root / "docs" / "pipe.md")
    return root


def test_a_page_that_is_a_broken_link_a_loop_or_a_pipe_is_a_located_warning_and_fails_the_build(linked: Path) -> None:
    docs = linked / "docs"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(linked), str(docs), str(linked / "_build")],
        cwd=linked, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    warnings = {line for line in done.stderr.splitlines() if "[snipcheck." in line}
    assert warnings == {
        f"{docs / name}:1: WARNING: {why}; it is left out of this build, and its snippets are not checked "
        "[snipcheck.missing]"
        for name, why in LINKED_PAGES.items()
    }
    assert "ERROR: snipcheck: 4 pages could not be read, so the snippets there were not checked" in done.stderr
    assert "  gone.md:1: cannot be read" in done.stderr
    assert (linked / "_build" / "index.html").is_file()
    assert done.returncode == 1


def test_record_names_each_such_page_records_the_rest_and_fails(linked: Path) -> None:
    (linked / "docs" / "index.md").write_text("# Index\n\n```{snippet} f/ok\n```\n")
    done = snipcheck_cli(linked, "record")
    assert done.returncode == 1
    assert sorted(done.stderr.splitlines()) == sorted(
        f"error: docs/{name}:1: {why}; its snippets were not recorded" for name, why in LINKED_PAGES.items()
    )
    assert (linked / "docs" / "index.md").read_text() == "# Index\n\n```{snippet} f/ok\nok\n```\n"


def test_the_pytest_plugin_fails_each_such_page_it_does_not_visit(linked: Path) -> None:
    # pytest visits regular files only: without an item of their own these
    # pages would leave the run green.
    env = dict(os.environ, NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "docs/", "-rf"],
        cwd=linked, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    for name, why in LINKED_PAGES.items():
        assert f"docs/{name}:1: {why}; its snippets were not checked" in done.stdout
    assert "1 passed" in done.stdout and "4 failed" in done.stdout
