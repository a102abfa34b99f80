"""Fault tolerance of accept mode (issue 6): a rewrite of the chapter sources
that fails or is interrupted half-way.

Two pages each state one drifted output; accepting rewrites both and moves the
reference pin in pyproject.toml.  Whatever stops it after it started writing
(a full disk, Ctrl-C), every file is byte-identical to its old or its new
content, never a mix, and no temporary file is left.  The whole-flow tests of
accept are in test_verify.py.
"""

from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path

import pytest
from snipcheck.app import accept, cli
from snipcheck.app.project import Project
from snipcheck.files import WriteError
from snipcheck.model import Stamp
from snipcheck.report.verify import Report, SnippetReport
from snipcheck.sources.rewrite import Unwritable

STAMP = Stamp("3.11.7", "2.15.0+cpu", "CPU", "Linux x86_64")
PAGES = {
    "index.md": "# Index\n",
    "a.md": "# A\n\nProse.\n\n```{snippet} demo/a\nold a\n```\n\nMore prose.\n",
    "b.md": "# B\n\n```{snippet} demo/b\nold b 1\nold b 2\n```\n",
}
PYPROJECT = '[project]\nname = "x"\n\n[tool.snipcheck]\nreference-torch = "2.13.0"\n'


def make_root(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    for name, text in PAGES.items():
        (root / "docs" / name).write_text(text)
    (root / "pyproject.toml").write_text(PYPROJECT)
    cache = root.parent / f"{root.name}-cache"  # outside the project: the tests compare every file in it
    (root / "conf.py").write_text(
        f'extensions = ["myst_parser", "sphinx_design", "snipcheck"]\nsnipcheck_source_dir = "docs"\nsnipcheck_cache_dir = {str(cache)!r}\n'
    )
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path / "project")


def run_accept(rep: Report, root: Path) -> list[Path]:
    """``accept`` of ``rep`` on the project at ``root``, through the placement index."""
    project, _ = Project.load(root)
    return accept.apply(accept.plan(rep, project.placements(), root), project)


def report() -> Report:
    return Report(
        STAMP,
        "torch 2.13.0",
        (1, 1),
        (
            SnippetReport("demo/a", "docs/a.md", 5, "drifted", diff="-old a\n+new a", stated="old a", actual="new a"),
            SnippetReport(
                "demo/b", "docs/b.md", 3, "drifted", diff="-old b 1\n+new b", stated="old b 1\nold b 2", actual="new b"
            ),
        ),
    )


def contents(root: Path) -> dict[str, bytes]:
    """Every file of the project (temporary files included, if any were left)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def old_and_new(root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The project's files before, and after an accept that nothing stopped."""
    old = contents(root)
    clean = make_root(tmp_path_factory.mktemp("clean") / "project")
    assert contents(clean) == {k: v for k, v in old.items() if k != "conf.py"} | {"conf.py": contents(clean)["conf.py"]}
    run_accept(report(), clean)
    new = contents(clean)
    assert new["docs/a.md"] != old["docs/a.md"] and new["docs/b.md"] != old["docs/b.md"]
    assert b'reference-torch = "2.15.0"' in new["pyproject.toml"]
    return old, new


def assert_old_or_new(root: Path, old: dict[str, bytes], new: dict[str, bytes]) -> dict[str, str]:
    """Each file is exactly its old or its new self, and there is no other file."""
    now = contents(root)
    assert sorted(now) == sorted(old), "a temporary or partial file was left"
    which = {}
    for rel, data in now.items():
        assert data in (old[rel], new[rel]), f"{rel} is neither its old nor its new content"
        which[rel] = "old" if data == old[rel] else "new"
    return which


class _Interrupted(Exception):
    pass


def _writes_half_then_fails(target: str, exc: BaseException, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every file opened for writing whose real path names ``target``
    write the first half of what it is given, then raise ``exc``.

    Patches ``open`` itself (``io.open``, ``builtins.open``; ``os.fdopen`` and
    ``Path.write_bytes`` go through ``io.open``), so it catches any way of
    writing the file, atomic or not."""
    real_open = io.open
    hit: list[str] = []

    class HalfWriter:
        def __init__(self, f):
            self._f = f

        def write(self, data):
            self._f.write(data[: len(data) // 2])
            self._f.flush()
            hit.append(name)
            raise exc

        def __getattr__(self, attr: str):
            return getattr(self._f, attr)

        def __enter__(self):
            return self

        def __exit__(self, *args):
            return self._f.__exit__(*args)

    def fake_open(file, mode="r", *args, **kwargs):
        nonlocal name
        f = real_open(file, mode, *args, **kwargs)
        if any(c in mode for c in "wax+"):
            name = os.readlink(f"/proc/self/fd/{f.fileno()}") if isinstance(file, int) else os.fspath(file)
            if target in os.path.basename(name):
                return HalfWriter(f)
        return f

    name = ""
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(builtins, "open", fake_open)
    return hit


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), OSError(28, "No space left on device")], ids=["ctrl-c", "disk-full"])
def test_interrupted_mid_write_of_the_second_file_leaves_every_file_old_or_new(
    root: Path, old_and_new, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    old, new = old_and_new
    hit = _writes_half_then_fails("b.md", exc, monkeypatch)
    with pytest.raises(type(exc)):
        run_accept(report(), root)
    monkeypatch.undo()
    assert hit, "the injected failure never fired"
    # All or nothing: a.md was written first, and is put back.
    assert assert_old_or_new(root, old, new) == {"docs/a.md": "old", "docs/b.md": "old", "docs/index.md": "old", "pyproject.toml": "old", "conf.py": "old"}


def test_failing_rename_of_the_second_file_leaves_every_file_old_or_new(
    root: Path, old_and_new, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = old_and_new
    real_replace = os.replace
    calls: list[str] = []

    def replace(src, dst):
        calls.append(os.fspath(dst))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space left on device"):
        run_accept(report(), root)
    monkeypatch.undo()
    assert calls[1].endswith("b.md")
    assert assert_old_or_new(root, old, new) == {"docs/a.md": "old", "docs/b.md": "old", "docs/index.md": "old", "pyproject.toml": "old", "conf.py": "old"}


def test_a_file_that_cannot_be_put_back_is_named(root: Path, old_and_new, monkeypatch: pytest.MonkeyPatch) -> None:
    # The disk stays full: b.md fails, and so does putting a.md back.
    old, new = old_and_new
    real_replace = os.replace
    calls: list[str] = []

    def replace(src, dst):
        calls.append(os.fspath(dst))
        if len(calls) >= 2:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError) as info:
        run_accept(report(), root)
    monkeypatch.undo()
    assert isinstance(info.value, WriteError)
    assert info.value.strerror == (
        f"cannot write {root / 'docs' / 'b.md'}: No space left on device; "
        f"and could not put back {root / 'docs' / 'a.md'}"
    )
    assert assert_old_or_new(root, old, new)["docs/a.md"] == "new"


def test_an_edit_that_cannot_be_made_stops_accept_before_any_file_is_written(
    root: Path, old_and_new
) -> None:
    # b.md's body would hold a line of four backticks, closing the tab-item
    # around it: found only when b.md's new text is worked out, after a.md's.
    old, new = old_and_new
    (root / "docs" / "b.md").write_text("# B\n\n````{tab-item} x\n```{snippet} demo/b\nold b 1\nold b 2\n```\n````\n")
    old = contents(root)
    bad = Report(
        STAMP, "torch 2.13.0", (1, 1),
        (report().snippets[0], SnippetReport("demo/b", "docs/b.md", 4, "drifted", diff="-x\n+y", stated="old b 1\nold b 2", actual="````\nnew b")),
    )  # fmt: skip
    with pytest.raises(Unwritable, match="demo/b"):
        run_accept(bad, root)
    assert contents(root) == old


def test_accept_command_reports_a_failed_write_as_an_error(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "report.json").write_text(json.dumps(report().to_json()))
    real_replace = os.replace

    def replace(src, dst):
        if os.fspath(dst).endswith("b.md"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    status = cli.main(["--root", str(root), "accept", "--report", str(root / "report.json"), "--force"])
    assert status == 1
    err = capsys.readouterr().err
    assert "error:" in err and "b.md" in err and "No space left on device" in err
