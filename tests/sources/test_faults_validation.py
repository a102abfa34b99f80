"""Validation (issue 10 §8; sources.md #8, #9, #11, #12).

Tags that can never hold are located tag errors; ``-D`` overrides of numeric
config values work; an id longer than the file system allows is a located
warning (and a clear CLI error); a cache folder that cannot be written is one
``snipcheck.cache`` warning and the snippets run uncached.

The read-only and full cache folders are real mounts (a read-only tmpfs, a
tiny full tmpfs): permission bits mean nothing to root, who runs these tests
in CI.  Where mounting is not allowed those tests are skipped, saying why; a
file in place of the folder is tested everywhere.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import directive_line, html, snipcheck_cli
from snipcheck.settings import VALUES, problem
from snipcheck.sources import tags
from snipcheck.sources.snippets import MAX_ID_LENGTH, SnippetError, check_id
from faults_support import copy_root, sphinx_build

# --- tags that can never hold (sources.md #11) -------------------------------------------------


def tag_error(line: str) -> tags.TagError:
    """The error of a tag block whose line 3 is ``line`` (after a valid line 2)."""
    first = "# timeout = 5" if line.startswith("expect") else '# expect = "ok"'
    with pytest.raises(tags.TagError) as info:
        tags.parse(f"# /// snipcheck\n{first}\n# {line}\n# ///\nx = 1\n")
    return info.value


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308", "86401", "-1", "0", "0.0"])
def test_a_timeout_without_a_real_limit_is_a_located_tag_error(value: str) -> None:
    err = tag_error(f"timeout = {value}")
    assert err.line == 3
    assert err.message.startswith("bad value for 'timeout': ")
    assert "a finite number greater than 0 and at most 86400" in err.message


def test_the_longest_timeout_is_24_hours() -> None:
    assert tags.parse("# /// snipcheck\n# timeout = 86400\n# ///\n").tags.timeout == 86400.0
    assert tags.MAX_TIMEOUT == 24 * 3600


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e308, -5.0, 0])
def test_snipcheck_timeout_rejects_the_same_values(value: float) -> None:
    assert problem("snipcheck_timeout", value) is not None
    assert problem("snipcheck_timeout", 30) is None


def test_an_unknown_signal_is_a_located_tag_error_listing_the_known_ones() -> None:
    err = tag_error('expect = "signal SIGFOO"')
    assert err.line == 3
    assert err.message.startswith("bad value for 'expect': 'signal SIGFOO': unknown signal 'SIGFOO'; known signals are: ")
    assert "SIGSEGV" in err.message and "SIGKILL" in err.message
    assert tags.parse('# /// snipcheck\n# expect = "signal SIGSEGV"\n# ///\n').tags.expect == "signal SIGSEGV"


def test_an_impossible_exit_status_is_a_tag_error() -> None:
    assert "0 to 255" in tag_error('expect = "exit 256"').message
    assert tags.parse('# /// snipcheck\n# expect = "exit 255"\n# ///\n').tags.expect == "exit 255"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('env = ["HOME"]', "set by the runner"),
        ('env = ["PYTHONPATH"]', "set by the runner"),
        ('env = ["MY-VAR"]', "not an environment variable name"),
        ('depends = ["/etc/passwd"]', "must be a relative path"),
        ('depends = ["../secrets.txt"]', "must stay inside the project"),
        ('depends = "data\\\\table.csv"', "must be a relative path"),
        ("depends = [1]", "bad value for 'depends'"),
    ],
)
def test_declared_inputs_are_checked_where_they_are_written(line: str, shown: str) -> None:
    err = tag_error(line)
    assert err.line == 3 and shown in err.message


def test_declared_inputs_are_for_python_snippets_only() -> None:
    with pytest.raises(tags.TagError, match="Python snippets only"):
        tags.parse('// /// snipcheck\n// env = ["X"]\n// ///\nfn main() {}\n', "rust")


# --- -D overrides (sources.md #12) -------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="basic")
@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("snipcheck_timeout", "2", 2.0),
        ("snipcheck_timeout", "2.5", 2.5),
        ("snipcheck_output_limit", "4096", 4096),
        ("snipcheck_jobs", "2", 2),
        ("snipcheck_provides", "", []),
        ("snipcheck_provides", "burn, cuda", ["burn", "cuda"]),
    ],
)
def test_a_command_line_override_is_converted_by_the_declared_type(
    make_app, app_params, name: str, text: str, value: object
) -> None:
    # sphinx-build -D passes strings; Sphinx itself refuses a float default:
    # "cannot override config setting 'snipcheck_timeout' with unsupported type, ignoring".
    args, kwargs = app_params
    app = make_app(*args, **{**kwargs, "confoverrides": {**kwargs["confoverrides"], name: text}})
    assert getattr(app.config, name) == value
    assert type(getattr(app.config, name)) is type(value)
    assert "WARNING" not in app.warning.getvalue()


@pytest.mark.sphinx("html", testroot="basic")
def test_an_override_that_is_not_a_number_is_a_config_warning(make_app, app_params) -> None:
    args, kwargs = app_params
    app = make_app(*args, **{**kwargs, "confoverrides": {**kwargs["confoverrides"], "snipcheck_timeout": "soon"}})
    assert app.config.snipcheck_timeout == VALUES["snipcheck_timeout"].default
    assert "-D snipcheck_timeout=soon: not a valid value" in app.warning.getvalue()
    assert "[snipcheck.config]" in app.warning.getvalue()


def test_sphinx_build_D_snipcheck_timeout_limits_the_runs(tmp_path: Path, probe_cache: Path) -> None:
    src = copy_root("timeout", tmp_path / "src")
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    (src / "snippets" / "slow" / "sleep.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(30)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "--no-color", "-b", "html", "-D", "snipcheck_timeout=1",
         "-D", f"snipcheck_cache_dir={cache}", "-D", f"snipcheck_report_dir={tmp_path / 'report'}",
         str(src), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "unsupported type" not in proc.stderr
    assert "snippet 'slow/sleep': timed out after 10.0 s of wall-clock time, the cap of a run that waits (10 times its timeout" in proc.stderr, proc.stderr


# --- an id longer than the file system allows (sources.md #8) ----------------------------------

LONG_ID = "a/" + "x" * 300


def test_a_long_id_is_rejected_before_any_file_is_looked_up() -> None:
    with pytest.raises(SnippetError, match=f"at most {MAX_ID_LENGTH}"):
        check_id(LONG_ID)
    check_id("a/" + "x" * (MAX_ID_LENGTH - 2))


def long_id_project(tmp_path: Path, probe_cache: Path) -> Path:
    root = tmp_path / "p"
    (root / "snippets" / "a").mkdir(parents=True)
    (root / "snippets" / "a" / "ok.py").write_text('print("hi")\n')
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    (root / "conf.py").write_text(
        'extensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_preload = []\n'
        f'snipcheck_runner = "subprocess"\nsnipcheck_cache_dir = {str(cache)!r}\n'
    )
    (root / "index.md").write_text(f"# T\n\n```{{snippet}} a/ok\nhi\n```\n\n```{{snippet}} {LONG_ID}\n```\n")
    return root


def test_a_long_id_in_a_page_is_a_located_warning_and_the_build_goes_on(tmp_path: Path, probe_cache: Path) -> None:
    root = long_id_project(tmp_path, probe_cache)
    build = sphinx_build(root, tmp_path, tmp_path / "cache")
    page = root / "index.md"
    (warning,) = build.warnings
    assert warning.startswith(f"{page}:{directive_line(page, LONG_ID)}: WARNING: ")
    assert f"is 302 characters long; an id names files, so it may have at most {MAX_ID_LENGTH}" in warning
    output = html(build.outdir / "index.html").find(id="snippet-a-ok").find(class_="snipcheck-output")
    assert output.find("pre").get_text() == "hi\n"


@pytest.mark.parametrize("command", [["run", LONG_ID], ["record"], ["record", LONG_ID]])
def test_run_and_record_with_a_long_id_give_a_clear_error(tmp_path: Path, probe_cache: Path, command: list[str]) -> None:
    root = long_id_project(tmp_path, probe_cache)
    proc = snipcheck_cli(root, "--docs", str(root), *command)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert f"may have at most {MAX_ID_LENGTH}" in proc.stderr


# --- a cache folder that cannot be written (sources.md #9) -------------------------------------


@contextlib.contextmanager
def mounted(path: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at ``path`` with ``options``; skips the test where mounting is not allowed."""
    path.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN): {proc.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def cache_build(tmp_path: Path, cache_dir: Path) -> tuple[list[str], Path]:
    src = copy_root("basic", tmp_path / "src")
    build = sphinx_build(src, tmp_path, cache_dir)
    page = html(build.outdir / "index.html")
    for sid, text in (("basic-hello", "hello\n"), ("basic-other", "other\n")):
        assert page.find(id=f"snippet-{sid}").find(class_="snipcheck-output").find("pre").get_text() == text
    return build.warnings, build.outdir


def test_a_read_only_cache_folder_is_one_cache_warning_and_runs_go_on(tmp_path: Path) -> None:
    with mounted(tmp_path / "ro-cache", "ro,size=1m") as cache_dir:
        warnings, _ = cache_build(tmp_path, cache_dir)
    assert warnings == [
        (
            f"WARNING: cannot write to the cache directory {cache_dir} (Read-only file system); "
            "snippets run without the cache in this build [snipcheck.cache]"
        )
    ]


def test_a_full_cache_folder_is_one_cache_warning_and_runs_go_on(tmp_path: Path) -> None:
    with mounted(tmp_path / "full-cache", "size=64k") as cache_dir:
        (cache_dir / "results").mkdir()
        with contextlib.suppress(OSError), open(cache_dir / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        warnings, _ = cache_build(tmp_path, cache_dir)
    assert warnings == [
        (
            f"WARNING: cannot write to the cache directory {cache_dir} (No space left on device); "
            "snippets run without the cache in this build [snipcheck.cache]"
        )
    ]


def test_a_file_in_place_of_the_cache_folder_is_one_cache_warning_and_runs_go_on(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder\n")
    warnings, _ = cache_build(tmp_path, blocker)
    (warning,) = warnings
    assert warning.startswith(f"WARNING: cannot write to the cache directory {blocker} (")
    assert warning.endswith("snippets run without the cache in this build [snipcheck.cache]")
    assert blocker.read_text() == "not a folder\n"


def test_the_probe_itself_survives_a_cache_folder_it_cannot_write(tmp_path: Path) -> None:
    # environment.probe stored its answers unconditionally and raised OSError.
    from snipcheck.run.environment import probe_environment

    blocker = tmp_path / "cache"
    blocker.write_text("")
    found = probe_environment(sys.executable, blocker)
    assert found.stamp.python
    assert found.notes and "cannot write to the cache directory" in found.notes[0]


@pytest.fixture(autouse=True)
def _no_leftover_mounts(tmp_path: Path) -> Iterator[None]:
    yield
    for name in ("ro-cache", "full-cache"):
        if os.path.ismount(tmp_path / name):  # a failed test must not leave a mount behind
            subprocess.run(["umount", str(tmp_path / name)], check=False)
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
