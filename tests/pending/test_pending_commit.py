"""record, accept and review decide the same pending changes and write them through one commit.

``snipcheck.pending.change`` is the model of a pending change; the three
commands each decide one per drifted output and hand them to
``snipcheck.pending.commit.commit``, the one write path: read back, all or
nothing.  These tests watch that function: the three commands give it the
same changes for the same drift, and a commit that fails or is interrupted
leaves every file of the project byte-identical, whichever command made it.
"""

from __future__ import annotations

import builtins
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_cache
from snipcheck import files
from snipcheck.app import cli
from snipcheck.pending import change, commit
from snipcheck.pending.change import Change, Decision
from snipcheck.sources.rewrite import Unwritable

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_cache_dir = {cache!r}
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""
PAGES = {
    "index.md": "# Index\n",
    "a.md": "# A\n\n```{snippet} d/a\nold a\n```\n",
    "b.md": "# B\n\nProse.\n\n```{snippet} d/b\nold b\n```\n",
}


@pytest.fixture
def root(tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two pages, each stating an output its snippet no longer prints; a reference pin."""
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    cache = fresh_cache(tmp_path / "cache", probe_cache)  # outside the project: every file in it is compared
    (root / "conf.py").write_text(CONF.format(cache=str(cache)))
    (root / "pyproject.toml").write_text('[tool.snipcheck]\nreference-torch = "2.13.0"\n')
    for name, text in PAGES.items():
        (root / "docs" / name).write_text(text)
    (root / "snippets" / "d").mkdir(parents=True)
    for name in "ab":
        (root / "snippets" / "d" / f"{name}.py").write_text(f'print("new {name}")\n')
    monkeypatch.chdir(root)
    return root


def every_file(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def watch_the_commit(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[Change], bool]]:
    """Every call of the one commit: the changes it was given, and whether it was a dry run."""
    calls: list[tuple[list[Change], bool]] = []
    real = commit.commit

    def watched(changes: list[Change], **options: Any) -> commit.Committed:
        calls.append((list(changes), bool(options.get("dry_run"))))
        return real(changes, **options)

    monkeypatch.setattr(commit, "commit", watched)
    return calls


def answering(monkeypatch: pytest.MonkeyPatch, *answers: str) -> None:
    """``review``'s questions, answered as a reviewer types."""
    given: Iterator[str] = iter(answers)
    monkeypatch.setattr(builtins, "input", lambda prompt: next(given))


def snipcheck(root: Path, command: str, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    if command == "review":
        answering(monkeypatch, "a", "a")
    return cli.main(["--root", str(root), command, *args])


def test_record_accept_and_review_decide_the_same_changes_and_hand_them_to_the_one_commit(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = watch_the_commit(monkeypatch)
    assert snipcheck(root, "record", monkeypatch, "--dry-run") == 0
    assert snipcheck(root, "accept", monkeypatch, "--dry-run") == 0
    assert every_file(root)["docs/a.md"] == PAGES["a.md"].encode()  # the dry runs wrote nothing
    assert snipcheck(root, "review", monkeypatch, "--force") == 0
    assert [dry for _, dry in calls] == [True, True, False]
    recorded, accepted, reviewed = (changes for changes, _ in calls)
    assert recorded == accepted == reviewed
    assert [(c.snippet_id, c.old, c.new, c.decision) for c in recorded] == [
        ("d/a", "old a", "new a", Decision.ACCEPT),
        ("d/b", "old b", "new b", Decision.ACCEPT),
    ]
    assert (root / "docs" / "b.md").read_text() == "# B\n\nProse.\n\n```{snippet} d/b\nnew b\n```\n"


def fail_the_second_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk once the first page is replaced."""
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).parent.name == "docs" and Path(dst).name == "b.md":
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)


def ctrl_c_while_writing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C once the new bytes of the first page are in a temporary file."""
    real = files._temporary

    def temporary(path: Path, data: bytes, durable: bool = True) -> str:
        made = real(path, data, durable)
        if Path(path).parent.name == "docs":
            signal.raise_signal(signal.SIGINT)
        return made

    monkeypatch.setattr(files, "_temporary", temporary)


@pytest.mark.parametrize("fault", [fail_the_second_page, ctrl_c_while_writing], ids=["disk-full", "ctrl-c"])
@pytest.mark.parametrize(
    ("command", "args"), [("record", ()), ("accept", ("--force",)), ("review", ("--force",))], ids=["record", "accept", "review"]
)
def test_a_commit_that_fails_leaves_every_file_as_it_was_whichever_command_made_it(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    command: str, args: tuple[str, ...], fault: Any,
) -> None:  # fmt: skip
    before = every_file(root)
    calls = watch_the_commit(monkeypatch)
    fault(monkeypatch)
    status = snipcheck(root, command, monkeypatch, *args)
    err = capsys.readouterr().err
    assert len(calls) == 1 and [e.placement.snippet_id for e in change.edits(calls[0][0])] == ["d/a", "d/b"]
    if fault is ctrl_c_while_writing:
        assert status == 130 and err.splitlines()[-1].startswith("interrupted; nothing was written")
    else:
        assert status == 1 and "No space left on device" in err
    assert every_file(root) == before


def test_a_refused_commit_has_read_the_pages_back_and_writes_nothing(root: Path) -> None:
    from snipcheck.app.project import Project

    project, _ = Project.load(root)
    placed = {p.snippet_id: p for p in project.placements()}
    changes = [change.accept(placed["d/a"], "new a"), change.refuse("d/b", placed["d/b"], "not recorded: it varies")]
    before = every_file(root)
    read_back: list[list[str]] = []

    def rewrite(edits: Any) -> dict[Path, tuple[bytes, bytes]]:
        read_back.append([e.placement.snippet_id for e in edits])
        return project.rewrite(edits)

    with pytest.raises(commit.Refused, match="uncommitted changes"):
        commit.commit(changes, rewrite=rewrite, srcdir=project.srcdir, guard=lambda paths: "uncommitted changes")
    assert read_back == [["d/a"]]  # only the accepted change, worked out and read back first
    assert every_file(root) == before
    dry = commit.commit(changes, rewrite=project.rewrite, srcdir=project.srcdir, dry_run=True)
    assert [p.name for p in dry.files] == ["a.md"] and dry.replaced == [] and every_file(root) == before
    done = commit.commit(changes, rewrite=project.rewrite, srcdir=project.srcdir, guard=lambda paths: None)
    assert [p.name for p in done.replaced] == ["a.md"]
    assert (root / "docs" / "a.md").read_text() == "# A\n\n```{snippet} d/a\nnew a\n```\n"
    assert every_file(root)["docs/b.md"] == before["docs/b.md"]  # the refused change is not written


def test_a_placement_that_cannot_be_rewritten_stops_the_commit_before_any_file_is_written(root: Path) -> None:
    import dataclasses

    from snipcheck.app.project import Project

    project, _ = Project.load(root)
    placed = {p.snippet_id: p for p in project.placements()}
    # b.md's directive cannot be rewritten: found only when b.md is worked
    # out, after a.md
    unwritable = dataclasses.replace(placed["d/b"], writable="it sits in an include")
    changes = [change.accept(placed["d/a"], "new a"), change.accept(unwritable, "new b")]
    before = every_file(root)
    with pytest.raises(Unwritable):
        commit.commit(changes, rewrite=project.rewrite, srcdir=project.srcdir)
    assert every_file(root) == before


def accept_plan(root: Path, *snippets: Any) -> tuple[Any, Any]:
    """The accept plan of a report on the project at ``root`` holding ``snippets``, and the project."""
    from snipcheck.app import accept
    from snipcheck.app.project import Project
    from snipcheck.model import Stamp
    from snipcheck.report.verify import Report

    project, _ = Project.load(root)
    stamp = Stamp("3.11.7", "2.15.0+cpu", "CPU", "Linux x86_64")
    return accept.plan(Report(stamp, "torch 2.13.0", (1, 1), snippets), project.placements(), root), project


def test_accept_writes_no_figure_of_an_output_it_refuses(root: Path) -> None:
    # Was: the figures of a drifted output went into the plan before its text
    # was found unrecordable, so accept wrote the figures of an output it
    # refused; a refused change writes nothing.
    from snipcheck.app import accept
    from snipcheck.judge import figures as figure_files
    from snipcheck.model import Figure
    from snipcheck.report.verify import SnippetReport

    drawn = (Figure("png", b"a new image", "", 4, 3),)
    output = f"a [..] b\n{drawn[0].placeholder(1)}"
    varying = SnippetReport(
        "d/a", "docs/a.md", 3, "drifted", diff="-old a\n+a [..] b", stated="old a", actual=output, figures=drawn,
        run_actual=output,
    )  # fmt: skip
    plan, project = accept_plan(root, varying)
    assert [(c.snippet_id, c.decision) for c in plan.changes] == [("d/a", Decision.REFUSED)]
    assert plan.figures == []
    plan.pin = None  # as accept keeps it when an output is not accepted
    before = every_file(root)
    assert accept.apply(plan, project) == []
    assert every_file(root) == before
    assert not figure_files.stated_path(project.srcdir, "d/a", 1, "png").exists()


def test_accept_gives_an_output_the_figures_of_its_run_as_record_does(root: Path) -> None:
    # An accepted output's stated figures are its run's, none included: the
    # image files of figures the run no longer draws are removed, by accept
    # as by record (was: only by record).
    from snipcheck.app import accept
    from snipcheck.judge import figures as figure_files
    from snipcheck.report.verify import SnippetReport

    plan, project = accept_plan(
        root, SnippetReport("d/a", "docs/a.md", 3, "drifted", diff="-old a\n+new a", stated="old a", actual="new a")
    )
    assert [(c.snippet_id, c.new, c.figures) for c in plan.changes] == [("d/a", "new a", ())]
    stale = figure_files.stated_path(project.srcdir, "d/a", 1, "png")
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an image the run no longer draws")
    assert accept.apply(plan, project) == [root / "docs" / "a.md", root / "pyproject.toml", stale]
    assert not stale.exists()
    assert (root / "docs" / "a.md").read_text() == "# A\n\n```{snippet} d/a\nnew a\n```\n"
