"""Sources are sacred: record and accept write the bodies they mean to, all or nothing, and no other byte.

Each test is a case of ``cases/sources.md`` (numbered), run through the real
command line on a small project: pages under ``docs/``, snippets that print a
known line, the result cache outside the project.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest
from helpers import placements_in, snipcheck_cli, write_project
from snipcheck import files
from snipcheck.model import Stamp
from snipcheck.report.verify import Report, SnippetReport

CONF = """\
extensions = ["myst_parser", "snipcheck"]
myst_enable_extensions = ["colon_fence"]
snipcheck_source_dir = "docs"
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def make(root: Path, pages: dict[str, str | bytes], snippets: dict[str, str], conf: str = CONF) -> Path:
    """A project at ``root``: ``pages`` under docs/, ``snippets`` (id → code) under snippets/."""
    pages = {"index.md": "# Index\n", **pages}
    return write_project(root, conf, {f"docs/{name}": text for name, text in pages.items()}, snippets)


def prints(text: str) -> str:
    return f"print({text!r})\n"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return snipcheck_cli(root, *args, cache=root.parent / "cache")


def every_file(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_1_a_lone_carriage_return_does_not_shift_the_rewrite(tmp_path: Path) -> None:
    page = b"# T\n\nan old Mac line\rand the next\n\n```{snippet} f/a\n```\n\nbetween\n\n```{snippet} f/b\n```\n"
    root = make(tmp_path / "p", {"t.md": page}, {"f/a": prints("from a"), "f/b": prints("from b")})
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    assert (root / "docs" / "t.md").read_bytes() == page.replace(
        b"f/a\n```", b"f/a\nfrom a\n```"
    ).replace(b"f/b\n```", b"f/b\nfrom b\n```")
    assert [p.stated for p in placements_in(root / "docs" / "t.md")] == ["from a", "from b"]


def test_2_mixed_line_ends_stay_mixed_and_only_the_body_changes(tmp_path: Path) -> None:
    page = b"# T\r\n\nprose with LF\nprose with CRLF\r\n\n```{snippet} f/a\n```\n\nafter\r\n"
    root = make(tmp_path / "p", {"t.md": page}, {"f/a": prints("one line")})
    assert cli(root, "record").returncode == 0
    assert (root / "docs" / "t.md").read_bytes() == page.replace(b"f/a\n```", b"f/a\none line\n```")


def test_a_crlf_page_with_a_bom_keeps_both_and_its_permissions(tmp_path: Path) -> None:
    page = "\ufeff# T\r\n\r\n```{snippet} f/a\r\n```\r\n".encode()
    root = make(tmp_path / "p", {"t.md": page}, {"f/a": prints("first") + prints("second")})
    (root / "docs" / "t.md").chmod(0o640)
    assert cli(root, "record").returncode == 0
    assert (root / "docs" / "t.md").read_bytes() == page.replace(b"f/a\r\n```", b"f/a\r\nfirst\r\nsecond\r\n```")
    assert stat.S_IMODE((root / "docs" / "t.md").stat().st_mode) == 0o640


def test_3_a_read_only_page_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = make(
        tmp_path / "p",
        {"a.md": "# A\n\n```{snippet} f/a\n```\n", "b.md": "# B\n\n```{snippet} f/b\n```\n"},
        {"f/a": prints("a"), "f/b": prints("b")},
    )
    (root / "docs" / "b.md").chmod(0o444)
    before = every_file(root)
    out = cli(root, "record")
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"error: nothing was written: {root / 'docs' / 'b.md'} is read-only (mode -r--r--r--); "
        "make it writable first (chmod u+w)"
    )
    assert "recorded" not in out.stdout.replace("stated output(s)", "")
    assert every_file(root) == before


def test_4_a_read_only_folder_is_refused_before_any_file_is_written(tmp_path: Path) -> None:
    root = make(
        tmp_path / "p",
        {"one/a.md": "# A\n\n```{snippet} f/a\n```\n", "two/b.md": "# B\n\n```{snippet} f/b\n```\n"},
        {"f/a": prints("a"), "f/b": prints("b")},
    )
    (root / "docs" / "two").chmod(0o555)
    try:
        before = every_file(root)
        out = cli(root, "record")
        assert out.returncode == 1
        assert out.stderr.strip() == (
            f"error: nothing was written: its folder {root / 'docs' / 'two'} is read-only; "
            "a file there cannot be replaced safely"
        )
        assert every_file(root) == before
        assert not list(root.rglob("*.tmp"))
    finally:
        (root / "docs" / "two").chmod(0o755)


@pytest.mark.parametrize(
    ("char", "escaped"),
    [("\f", "\\x0c"), ("\u2028", "\\u2028"), ("\x85", "\\x85")],
)
def test_7_a_character_the_parser_reads_as_a_line_break_is_recorded_escaped(
    tmp_path: Path, char: str, escaped: str
) -> None:
    """Issue 36 §5: what the plain form cannot hold is stated in the escaped
    form (``escapes`` option), and reads back as the very output."""
    root = make(tmp_path / "p", {"t.md": "# T\n\n```{snippet} f/a\n```\n"}, {"f/a": prints(f"left{char}right")})
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    page = (root / "docs" / "t.md").read_text(encoding="utf-8")
    assert f"```{{snippet}} f/a\n:escapes:\n\nleft{escaped}right\n```" in page
    verified = cli(root, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.parametrize(
    ("printed", "stated"),
    [
        ("spaces after   ", "spaces after   \\&"),
        ("a\tb", "a\\tb"),
        ("\nblank first", "\\&\nblank first"),
        ("\tindented by a tab  ", "\\tindented by a tab  \\&"),
        ("    all\n    indented", "\\&    all\n    indented"),
        ("back\\slash, then a space ", "back\\\\slash, then a space \\&"),
    ],
)
def test_rst_states_what_it_could_not_hold_escaped(tmp_path: Path, printed: str, stated: str) -> None:
    """Issue 36 §5: trailing spaces, a tab, blank lines at the ends, a first
    line that reads as an option, indentation the body's would swallow:
    recorded in an rST page in the escaped form, and verified identical."""
    root = make(
        tmp_path / "p",
        {"index.rst": "Index\n=====\n\n.. snippet:: f/a\n\nafter\n"},
        {"f/a": f"print({printed!r}, end='')\n"},
        conf=CONF.replace('"myst_parser", ', ""),
    )
    (root / "docs" / "index.md").unlink()
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    page = (root / "docs" / "index.rst").read_text()
    body = "\n".join("   " + line for line in stated.split("\n"))
    assert f".. snippet:: f/a\n   :escapes:\n\n{body}\n\nafter\n" in page, page
    verified = cli(root, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    again = cli(root, "record")
    assert again.returncode == 0 and (root / "docs" / "index.rst").read_text() == page  # nothing left to record


def test_rst_body_is_written_indented_and_read_back(tmp_path: Path) -> None:
    root = make(
        tmp_path / "p",
        {"index.rst": "Index\n=====\n\n.. snippet:: f/a\n   :stated-env: somewhere\nafter\n"},
        {"f/a": prints("one") + prints("  two")},
        conf=CONF.replace('"myst_parser", ', ""),
    )
    (root / "docs" / "index.md").unlink()
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    assert (root / "docs" / "index.rst").read_text() == (
        "Index\n=====\n\n.. snippet:: f/a\n   :stated-env: somewhere\n\n   one\n     two\n\nafter\n"
    )


def test_6_a_page_outside_the_source_directory_is_never_written(tmp_path: Path) -> None:
    # a page includes a file from outside docs/: the build reads it, nothing writes it
    root = make(tmp_path / "p", {"t.md": "# T\n\n```{include} ../shared.md\n```\n"}, {"f/a": prints("a")})
    (root / "shared.md").write_text("```{snippet} f/a\n```\n")
    before = every_file(root)
    out = cli(root, "record")
    assert out.returncode == 1
    assert f"f/a: not recorded: its file {root / 'shared.md'} lies outside the source directory" in out.stderr
    assert every_file(root) == before


def test_14_accept_outside_a_git_checkout_refuses_without_force(tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"t.md": "# T\n\n```{snippet} f/a\nold\n```\n"}, {"f/a": prints("new")})
    stamp = Stamp("3.11.7", "2.15.0", "CPU", "Linux x86_64")
    drifted = SnippetReport("f/a", "docs/t.md", 3, "drifted", diff="-old\n+new", stated="old", actual="new")
    (tmp_path / "r.json").write_text(json.dumps(Report(stamp, "", (1, 1), (drifted,)).to_json()))
    before = every_file(root)
    out = cli(root, "accept", "--report", str(tmp_path / "r.json"))
    assert out.returncode == 1
    assert out.stderr.strip() == "error: not a git checkout, so uncommitted changes cannot be protected; use --force"
    assert every_file(root) == before
    forced = cli(root, "accept", "--report", str(tmp_path / "r.json"), "--force")
    assert forced.returncode == 0, forced.stderr
    assert [p.stated for p in placements_in(root / "docs" / "t.md")] == ["new"]


@pytest.mark.parametrize("command", [["accept"], ["review"]])
def test_14_accept_and_review_outside_a_git_checkout_refuse_before_running_anything(
    tmp_path: Path, command: list[str]
) -> None:
    root = make(tmp_path / "p", {"t.md": "# T\n\n```{snippet} f/a\nold\n```\n"}, {"f/a": prints("new")})
    before = every_file(root)
    out = cli(root, *command)
    assert (out.returncode, out.stdout) == (1, ""), out.stdout  # no verify run, no report
    assert out.stderr == "error: not a git checkout, so uncommitted changes cannot be protected; use --force\n"
    assert every_file(root) == before
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("results/*"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", ": not a snipcheck verify report: it holds a JSON list, where a report holds an object"),
        ("not json", ": not JSON (Expecting value: line 1 column 1 (char 0))"),
        ('{"schema": "snipcheck-verify/3"}', ": not a complete snipcheck verify report: key 'stamp' is missing"),
    ],
)
def test_13_a_bad_report_file_gets_a_clear_error_and_no_traceback(tmp_path: Path, content: str, message: str) -> None:
    root = make(tmp_path / "p", {"t.md": "# T\n\n```{snippet} f/a\nold\n```\n"}, {"f/a": prints("new")})
    bad = tmp_path / "list.json"
    bad.write_text(content)
    for args in (["merge", str(bad)], ["accept", "--report", str(bad)]):
        out = cli(root, *args)
        assert out.returncode == 2
        assert "Traceback" not in out.stderr
        assert message in out.stderr and str(bad) in out.stderr


@pytest.mark.parametrize("receiver", ["process", "another thread"])
def test_10_ctrl_c_right_after_the_temporary_file_is_made_leaves_none_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: str
) -> None:
    # Deterministic: a real SIGINT arrives between mkstemp and anything else.
    # A Ctrl-C goes to the process and the kernel may hand it to any thread
    # (CI failure: a build's executor threads); "another thread" makes that
    # happen every time, where a signal mask on the main thread is no help.
    target = tmp_path / "page.md"
    target.write_bytes(b"old\n")
    real_mkstemp = files.tempfile.mkstemp
    idle = threading.Event()
    bystander = threading.Thread(target=idle.wait, daemon=True)
    bystander.start()

    def mkstemp_then_interrupt(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        if receiver == "process":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            signal.pthread_kill(bystander.ident, signal.SIGINT)
            time.sleep(0.05)  # the main thread runs the handler at its next bytecode
        return made

    monkeypatch.setattr(files.tempfile, "mkstemp", mkstemp_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        files.write_atomic(target, b"new\n")
    monkeypatch.undo()
    idle.set()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]
    assert target.read_bytes() in (b"old\n", b"new\n")


def test_a_page_that_is_a_link_inside_the_project_is_written_through_the_link(tmp_path: Path) -> None:
    # Found by a fresh user's try: record replaced the link with a file of
    # its own, holding the output, and left the file it led to as it was.
    conf = CONF + 'exclude_patterns = ["shared"]\n'
    root = make(tmp_path / "p", {"shared/e.md": "# E\n\n```{snippet} f/a\n```\n"}, {"f/a": prints("through")}, conf)
    (root / "docs" / "e.md").symlink_to(Path("shared") / "e.md")
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    assert (root / "docs" / "e.md").is_symlink()
    assert os.readlink(root / "docs" / "e.md") == os.path.join("shared", "e.md")
    assert (root / "docs" / "shared" / "e.md").read_text() == "# E\n\n```{snippet} f/a\nthrough\n```\n"
    assert cli(root, "verify").returncode == 0


def test_a_page_read_twice_through_a_link_is_refused_and_record_ends(tmp_path: Path) -> None:
    # Found by a fresh user's try: record locked the one file twice, by its
    # two paths, and waited for itself for ever (Ctrl-C did not stop it).
    page = "# E\n\n```{snippet} f/a\n```\n"
    root = make(tmp_path / "p", {"shared/e.md": page}, {"f/a": prints("twice")})
    (root / "docs" / "e.md").symlink_to(Path("shared") / "e.md")
    before = every_file(root)
    out = cli(root, "record")  # it never returned (the helper times out after 300 s)
    assert out.returncode == 1
    assert "are one file" in out.stderr and "exclude_patterns" in out.stderr, out.stderr
    assert every_file(root) == before
    assert (root / "docs" / "e.md").is_symlink()


def test_5_a_page_symlinked_out_of_the_project_is_never_written(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_bytes(b"# Elsewhere\r\n\r\n```{snippet} f/a\r\n```\r\n")
    root = make(tmp_path / "p", {}, {"f/a": prints("a")})
    (root / "docs" / "linked.md").symlink_to(outside)
    stat_before = outside.stat()
    out = cli(root, "record")
    assert out.returncode == 1
    assert f"f/a: not recorded: its file {outside} lies outside the source directory" in out.stderr
    assert outside.read_bytes() == b"# Elsewhere\r\n\r\n```{snippet} f/a\r\n```\r\n"
    assert outside.stat().st_mtime_ns == stat_before.st_mtime_ns
