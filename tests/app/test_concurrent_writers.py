"""Another process writes a page while record or accept runs (issue 23 item 8):
the command says so, naming the file, writes nothing and exits 1; run again,
it works.

Was: the loser of two ``record`` runs said "its stated output would read back
as …" (its edit was laid over the winner's bytes); ``accept`` against a page
changed while the index read it blamed "a source-read or include-read
handler"; and two rewrites that overlapped could both succeed, the second
silently undoing the first.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fresh_cache
from gates import Gate
from helpers import write_project
from snipcheck import files
from snipcheck.app import cli
from snipcheck.app.project import Project
from snipcheck.files import ChangedOnDisk, write_all
from snipcheck.model import Stamp
from snipcheck.report.verify import Report, SnippetReport

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_cache_dir = {cache!r}
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def make(tmp: Path, probe_cache: Path, page: str, snippets: dict[str, str]) -> Path:
    conf = CONF.format(cache=str(fresh_cache(tmp / "cache", probe_cache)))
    return write_project(tmp / "p", conf, {"docs/index.md": page}, snippets)


def changed(command: str) -> str:
    return (
        f"error: docs/index.md changed on disk while snipcheck {command} ran (another record or accept, or an editor, "
        f"wrote it after {command} had read it); nothing was written: run snipcheck {command} again\n"
    )


PAGE = "# T\n\n```{snippet} g/slow\n```\n\nbetween\n\n```{snippet} g/fast\n```\n"


def test_the_loser_of_two_records_on_one_page_says_another_process_wrote_it(tmp_path: Path, probe_cache: Path) -> None:
    # Deterministic: the slow record (B) has read the page and runs its
    # snippet, held at a gate, while the other (A) records and writes.
    gate = Gate(tmp_path / "gate")
    root = make(tmp_path, probe_cache, PAGE, {"g/slow": gate.snippet("slow"), "g/fast": "print('fast')\n"})
    page = root / "docs" / "index.md"
    slow = subprocess.Popen(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", "record", "g/slow"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    gate.wait_for_run(1, slow)
    fast = subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "record", "g/fast"],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert fast.returncode == 0, fast.stderr
    by_fast = page.read_bytes()
    assert b"g/fast\nfast\n```" in by_fast
    gate.open_for_good()  # both of B's runs end
    out, err = slow.communicate(timeout=300)
    assert (slow.returncode, out, err) == (1, "", changed("record"))
    assert page.read_bytes() == by_fast  # A's recording stands
    again = subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", "record", "g/slow"],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert page.read_text() == "# T\n\n```{snippet} g/slow\nslow\n```\n\nbetween\n\n```{snippet} g/fast\nfast\n```\n"


def test_a_write_between_reading_and_replacing_is_caught_under_the_lock(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The other writer comes after record read the page and made its new
    # bytes: while the temporary file is written (its fsync).
    root = make(tmp_path, probe_cache, PAGE, {"g/slow": "print('slow')\n", "g/fast": "print('fast')\n"})
    page = root / "docs" / "index.md"
    theirs = PAGE.replace("between", "edited meanwhile").encode()
    real = files._temporary

    def temporary(path: Path, data: bytes, durable: bool = True) -> str:
        name = real(path, data, durable)
        if path == page:
            page.write_bytes(theirs)
        return name

    monkeypatch.setattr(files, "_temporary", temporary)
    monkeypatch.chdir(root)
    assert cli.main(["--root", str(root), "--no-cache", "record"]) == 1
    assert capsys.readouterr().err == changed("record")
    assert page.read_bytes() == theirs
    assert [p.name for p in root.rglob("*.tmp")] == []


def test_write_all_refuses_a_file_that_no_longer_holds_what_its_new_bytes_were_made_from(tmp_path: Path) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_bytes(b"a now\n")
    b.write_bytes(b"b read\n")
    with pytest.raises(ChangedOnDisk) as caught:
        write_all({a: b"a new\n", b: b"b new\n"}, {a: b"a read\n", b: b"b read\n"})
    assert caught.value.path == a
    assert str(caught.value) == (
        f"{a} changed on disk since it was read (another process wrote it meanwhile: another record or accept, "
        "or an editor); nothing was written: run the command again"
    )
    assert (a.read_bytes(), b.read_bytes()) == (b"a now\n", b"b read\n")


# --- the index itself is read while a page changes ------------------------------------------

ACCEPT_CONF = 'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_source_dir = "docs"\nsnipcheck_cache_dir = {cache!r}\n'
STAMP = Stamp("3.11.7", "2.15.0+cpu", "CPU", "Linux x86_64")


@pytest.fixture
def accept_root(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "conf.py").write_text(ACCEPT_CONF.format(cache=str(tmp_path / "cache")))
    (root / "docs" / "index.md").write_text("# T\n\n```{snippet} demo/a\nold a\n```\n")
    # A snippet that exists: a page with a missing one is read again on every build anyway.
    (root / "snippets" / "demo").mkdir(parents=True)
    (root / "snippets" / "demo" / "a.py").write_text("print('new a')\n")
    report = Report(STAMP, "", (1, 1), (SnippetReport("demo/a", "docs/index.md", 3, "drifted", diff="-old a\n+new a",
                                                      stated="old a", actual="new a"),))  # fmt: skip
    (tmp_path / "report.json").write_text(json.dumps(report.to_json()))
    return root


def test_accept_against_a_page_written_while_the_index_read_it_says_so_and_works_when_run_again(
    accept_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from snipcheck.sphinxext import index

    page = accept_root / "docs" / "index.md"
    real = index._source_text
    writes = []

    def source_text(env, path: Path, markup: str):
        if not writes:  # another process writes after Sphinx read the page, before snipcheck does
            writes.append(path)
            page.write_text(page.read_text() + "\nA line another process added.\n")
        return real(env, path, markup)

    monkeypatch.setattr(index, "_source_text", source_text)
    monkeypatch.chdir(accept_root)
    args = ["--root", str(accept_root), "accept", "--report", str(accept_root.parent / "report.json"), "--force"]
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    # the report's torch is not this interpreter's: accept says once that it does not rerun the outputs
    assert all(line.startswith("warning: not run again to find outputs that vary") for line in err.splitlines()[:-1])
    assert err.splitlines(True)[-1] == (
        f"error: accept wrote nothing: {page}:3: snippet 'demo/a' cannot be rewritten: {page} changed on disk while "
        "it was read (another process wrote it meanwhile: another record or accept, or an editor), so line numbers "
        "do not point into the file; run the command again\n"
    )
    assert "source-read" not in err
    monkeypatch.undo()
    monkeypatch.chdir(accept_root)
    assert cli.main(args) == 0, capsys.readouterr().err
    assert page.read_text() == "# T\n\n```{snippet} demo/a\nnew a\n```\n\nA line another process added.\n"


def test_the_index_reads_again_a_page_written_with_an_earlier_time_than_its_last_read(accept_root: Path) -> None:
    # A write that lands while Sphinx reads the page can bear a time before
    # the one Sphinx stamps the read with, so Sphinx alone would keep the
    # old placements for good.
    page = accept_root / "docs" / "index.md"
    assert [p.stated for p in Project.load(accept_root)[0].placements()] == ["old a"]
    before = os.stat(page)
    page.write_text("# T\n\n```{snippet} demo/a\nnew a, by hand\n```\n")
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns - 10**9))
    placements = Project.load(accept_root)[0].placements()
    assert [p.stated for p in placements] == ["new a, by hand"]
    assert placements[0].digest == hashlib.sha256(page.read_bytes()).hexdigest()
