"""record, accept and review write a notebook cell's new outputs into its ``.ipynb`` (issue 37).

The notebooks are written with nbformat and executed for real with nbclient
(:mod:`notebook_support`), so what Jupyter stored from the run is known: a
stored output changed by one character, then recorded or accepted, must give
back exactly the file Jupyter wrote, byte for byte.  Every write goes through
the one commit (:mod:`snipcheck.pending.commit`): a notebook saved meanwhile,
a notebook that would not validate, a full disk or a Ctrl-C leave the file as
it was.
"""

from __future__ import annotations

import builtins
import copy
import json
import os
import signal
from pathlib import Path
from typing import Any

import nbformat
import pytest
from conftest import fresh_cache
from faults_support import sphinx_build
from notebook_support import CELLS, CONF, INDEX, cell, executed
from snipcheck import files
from snipcheck.app import cli
from snipcheck.pending import commit, notebook_write

COMMANDS = [("record", ()), ("accept", ("--force",)), ("review", ("--force",))]


@pytest.fixture(scope="module")
def stored() -> Any:
    """The notebook as Jupyter executed and stored it (once for the module)."""
    return executed(CELLS)


def _project(tmp_path: Path, probe_cache: Path, text: str | bytes, conf: str = "") -> Path:
    root = tmp_path / "p"
    root.mkdir()
    cache = fresh_cache(tmp_path / "cache", probe_cache)  # outside the project: every file in it is compared
    (root / "conf.py").write_text(CONF + f'snipcheck_cache_dir = {str(cache)!r}\nsnipcheck_runner = "subprocess"\n' + conf)
    (root / "index.rst").write_text(INDEX)
    (root / "nb.ipynb").write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return root


def _run(root: Path, monkeypatch: pytest.MonkeyPatch, command: str, *args: str) -> int:
    monkeypatch.chdir(root)
    if command == "review":
        answers = iter("a" * 20)
        monkeypatch.setattr(builtins, "input", lambda prompt: next(answers))
    return cli.main(["--root", str(root), command, *args])


def _drifted(stored: Any) -> Any:
    """``stored`` with one character changed in three kinds of stored output."""
    nb = copy.deepcopy(stored)
    cell(nb, "printed").outputs[0].text = "7\n"  # a stream: the run prints 6
    cell(nb, "shown").outputs[0].data["text/plain"] = "4"  # an execute_result: the value is 3
    cell(nb, "both").outputs[1].text = "erX\n"  # the stderr stream of a cell that also shows a value
    return nb


@pytest.mark.parametrize(("command", "args"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_a_recorded_or_accepted_notebook_is_the_file_jupyter_wrote_byte_for_byte(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, stored: Any, command: str,
    args: tuple[str, ...],
) -> None:  # fmt: skip
    jupyter = nbformat.writes(stored) + "\n"  # as nbformat.write saves it, and Jupyter with it
    root = _project(tmp_path, probe_cache, nbformat.writes(_drifted(stored)) + "\n")
    assert _run(root, monkeypatch, command, *args) == 0
    written = (root / "nb.ipynb").read_text(encoding="utf-8")
    assert written == jupyter  # only the outputs changed, back to what the run stored: every other byte kept
    nbformat.validate(nbformat.reads(written, as_version=4))
    new, old = nbformat.reads(written, as_version=4), stored
    assert [dict(c) for c in new.cells] == [dict(c) for c in old.cells]  # ids, metadata, execution counts


def test_only_the_cells_outputs_change_in_a_notebook_not_written_as_jupyter_writes(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, stored: Any
) -> None:
    # Another writer's style: indent 2, keys in insertion order, \u escapes,
    # CRLF line ends.  The new outputs are written in it, the rest untouched.
    nb = copy.deepcopy(stored)
    cell(nb, "printed").outputs[0].text = ["7\n"]
    nb.cells[0].source = "# Ünïcode — kept as the file escapes it"
    raw = json.dumps(nb, indent=2, ensure_ascii=True).replace("\n", "\r\n").encode("utf-8")
    root = _project(tmp_path, probe_cache, raw)
    assert _run(root, monkeypatch, "record", "nb/printed") == 0
    written = (root / "nb.ipynb").read_bytes()
    assert raw.count(b'"7\\n"') == 1 and written == raw.replace(b'"7\\n"', b'"6\\n"')
    nbformat.validate(nbformat.reads(written.decode("utf-8"), as_version=4))


def test_a_changed_exception_message_is_written_as_an_error_output(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, stored: Any
) -> None:
    nb = copy.deepcopy(stored)
    cell(nb, "raises").outputs[0].evalue = "division by zer0"
    root = _project(tmp_path, probe_cache, nbformat.writes(nb))
    assert _run(root, monkeypatch, "record") == 0
    written = nbformat.read(root / "nb.ipynb", as_version=4)
    nbformat.validate(written)
    (error,) = cell(written, "raises").outputs
    assert (error.output_type, error.ename, error.evalue) == ("error", "ZeroDivisionError", "division by zero")
    assert error.traceback[-1] == "ZeroDivisionError: division by zero"
    others = [c for c in written.cells if c.get("id") != "raises"]
    assert others == [c for c in nb.cells if c.get("id") != "raises"]
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_the_drift_hint_names_a_record_command_that_writes_the_notebook(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, stored: Any
) -> None:
    root = _project(tmp_path, probe_cache, nbformat.writes(_drifted(stored)) + "\n")
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    (drift,) = built.about("nb/printed")
    assert "nb.ipynb" in drift and "cell 3 (id printed)" in drift and "-7" in drift and "+6" in drift
    command = drift.split("record it: ", 1)[1].splitlines()[0].removesuffix(" [snipcheck.drift]").split()
    assert command == ["snipcheck", "record", "nb/printed"]
    assert _run(root, monkeypatch, *command[1:]) == 0
    assert cell(nbformat.read(root / "nb.ipynb", as_version=4), "printed").outputs[0].text == "6\n"
    again = sphinx_build(root, tmp_path / "again", tmp_path / "cache")
    assert again.about("nb/printed") == [], again.warnings_text


def test_the_drift_hint_of_a_notebook_record_cannot_write_says_why(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, stored: Any
) -> None:
    old = nbformat.convert(copy.deepcopy(stored), 3)  # nbformat 3: read upgraded, never written back
    printed = next(c for c in old.worksheets[0].cells if c.get("input") == "print(x * 3)")
    printed.outputs[0].text = "7\n"
    text = nbformat.writes(old, version=3)
    root = _project(tmp_path, probe_cache, text)
    built = sphinx_build(root, tmp_path, tmp_path / "cache")
    drift = next(w for w in built.warnings if "[snipcheck.drift]" in w and "-7" in w)
    assert "record it" not in drift
    assert "snipcheck record cannot write its output: an nbformat 3 notebook" in drift and "current Jupyter" in drift
    assert _run(root, monkeypatch, "record") == 1
    assert (root / "nb.ipynb").read_text() == text


def _saved_meanwhile(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[bytes]:
    """Save ``path`` in "Jupyter" (a markdown cell edited) after the command
    has read it, right before the one commit; return what was saved."""
    real = commit.commit
    saved: list[bytes] = []

    def commit_after_a_save(changes: Any, **options: Any) -> Any:
        nb = nbformat.read(path, as_version=4)
        nb.cells[0].source += "\n\nA sentence added in Jupyter."
        nbformat.write(nb, path)
        saved.append(path.read_bytes())
        return real(changes, **options)

    monkeypatch.setattr(commit, "commit", commit_after_a_save)
    return saved


@pytest.mark.parametrize(("command", "args"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_a_notebook_saved_meanwhile_is_refused_naming_the_cell_and_not_written(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    stored: Any, command: str, args: tuple[str, ...],
) -> None:  # fmt: skip
    root = _project(tmp_path, probe_cache, nbformat.writes(_drifted(stored)))
    saved = _saved_meanwhile(monkeypatch, root / "nb.ipynb")
    assert _run(root, monkeypatch, command, *args) == 1
    err = capsys.readouterr().err
    assert "nb.ipynb: cell 3 (id printed)" in err and "changed on disk" in err, err
    assert f"run snipcheck {command} again" in err
    assert (root / "nb.ipynb").read_bytes() == saved[0]  # what Jupyter saved, nothing of ours


def test_a_notebook_that_would_not_validate_is_not_written(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    stored: Any,
) -> None:  # fmt: skip
    text = nbformat.writes(_drifted(stored))
    root = _project(tmp_path, probe_cache, text)
    real = notebook_write.new_outputs

    def nameless(old: Any, body: str, raises: bool) -> Any:
        return [{k: v for k, v in out.items() if k != "name"} for out in real(old, body, raises)]  # a stream needs one

    monkeypatch.setattr(notebook_write, "new_outputs", nameless)
    assert _run(root, monkeypatch, "record", "nb/printed") == 1
    err = capsys.readouterr().err
    assert "nb.ipynb: cell 3" in err and "would not validate against nbformat's schema" in err, err
    assert (root / "nb.ipynb").read_text() == text


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == "nb.ipynb":
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)


def _ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    real = files._temporary

    def temporary(path: Path, data: bytes, durable: bool = True) -> str:
        made = real(path, data, durable)
        if Path(path).name == "nb.ipynb":
            signal.raise_signal(signal.SIGINT)
        return made

    monkeypatch.setattr(files, "_temporary", temporary)


@pytest.mark.parametrize("fault", [_disk_full, _ctrl_c], ids=["disk-full", "ctrl-c"])
@pytest.mark.parametrize(("command", "args"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_a_notebook_write_that_fails_leaves_it_byte_identical(
    tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    stored: Any, command: str, args: tuple[str, ...], fault: Any,
) -> None:  # fmt: skip
    text = nbformat.writes(_drifted(stored))
    root = _project(tmp_path, probe_cache, text)
    fault(monkeypatch)
    status = _run(root, monkeypatch, command, *args)
    err = capsys.readouterr().err
    if fault is _ctrl_c:
        assert status == 130 and "interrupted; nothing was written" in err, err
    else:
        assert status == 1 and "No space left on device" in err, err
    assert (root / "nb.ipynb").read_text() == text
    assert sorted(p.name for p in root.iterdir()) == ["conf.py", "index.rst", "nb.ipynb"]  # no temporary file left
