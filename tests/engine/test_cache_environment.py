"""The cache is keyed on the whole environment (issue 10 §3; false-green.md #3, #4).

A cached result may be reused only when everything that can change it is the
same: the interpreter and every installed distribution (here a fake numpy on
the interpreter's path, upgraded in place as pip would), the variables passed
to snippets (``PATH``), the runner kind, and the data files and variables a
snippet declares (``depends``, ``env`` tags; ``snipcheck_depends``,
``snipcheck_env``).  Any change re-runs what it affects; an unrelated change
re-runs nothing.  The executor tests run in-process (one "build" per call of
:func:`check`); the Sphinx tests build in a subprocess, as ``nox -s docs`` does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from environment_support import fake_site, interpreter_with, upgrade_in_place
from helpers import html
from snipcheck.engine.execute import executor_for
from snipcheck.run import fingerprint
from snipcheck.run.environment import probe, probe_environment
from snipcheck.settings import Settings
from snipcheck.sources.snippets import load

NUMPY_SNIPPET = "import numpy\nprint(numpy.__version__)\n"


def project(root: Path, snippets: dict[str, str], *, python: Path | None = None, conf: str = "") -> Path:
    """A project with ``snippets`` (id → source), its cache in ``root/cache``."""
    (root / "snippets").mkdir(parents=True)
    for sid, source in snippets.items():
        path = root / "snippets" / f"{sid}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    lines = [
        'extensions = ["myst_nb", "snipcheck"]',
        'nb_execution_mode = "off"',
        "snipcheck_preload = []",
        f"snipcheck_cache_dir = {str(root / 'cache')!r}",
        "snipcheck_fork_min_runs = 0",
    ]
    if python is not None:
        lines.append(f"snipcheck_python = {str(python)!r}")
    (root / "conf.py").write_text("\n".join(lines) + "\n" + conf)
    return root


def check(root: Path, *ids: str, runner: str | None = None) -> dict[str, tuple[str, str, str | None]]:
    """One "build" of ``ids`` through the core: ``id → (origin, stdout, stamp env id)``."""
    settings, messages = Settings.from_conf(root)
    assert messages == []
    if runner is not None:
        settings = dataclasses.replace(settings, runner=runner)
    stamp = probe(settings.python, settings.cache_dir)
    executor = executor_for(settings, stamp)
    found = {}
    try:
        for sid in ids:
            outcome = executor.outcome(load(sid, settings.snippets_dir, settings.root))
            assert outcome.result is not None, outcome
            stdout = "".join(e.text for e in outcome.result.events if e.stream == "stdout")
            found[sid] = (outcome.origin, stdout, outcome.result.stamp.env)
    finally:
        executor.close()
    return found


# --- distributions ---------------------------------------------------------------------------


def test_a_new_numpy_installed_in_place_reruns_the_snippet_and_shows_its_output(tmp_path: Path) -> None:
    site = fake_site(tmp_path, "numpy", "2.4.6")
    root = project(tmp_path / "p", {"np/version": NUMPY_SNIPPET}, python=interpreter_with(tmp_path, site))
    first = check(root, "np/version")["np/version"]
    assert first[:2] == ("run", "2.4.6\n")
    assert check(root, "np/version")["np/version"] == ("cache", "2.4.6\n", first[2])
    upgrade_in_place(site, "numpy", "2.4.6", "2.3.5")
    origin, stdout, env_id = check(root, "np/version")["np/version"]
    assert (origin, stdout) == ("run", "2.3.5\n")
    assert env_id != first[2]  # the result carries the stamp of its own environment


def test_cli_run_after_a_numpy_change_agrees_with_run_no_cache(tmp_path: Path) -> None:
    # false-green.md #3 as the user met it: `run` served 2.4.6 from the cache
    # while `run --no-cache` printed 2.3.5.
    site = fake_site(tmp_path, "numpy", "2.4.6")
    root = project(tmp_path / "p", {"np/version": NUMPY_SNIPPET}, python=interpreter_with(tmp_path, site))

    def run(*args: str) -> str:
        env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
        proc = subprocess.run(
            [sys.executable, "-m", "snipcheck", "--root", str(root), *args, "run", "np/version"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "2.4.6\n" in run()
    upgrade_in_place(site, "numpy", "2.4.6", "2.3.5")
    cached, fresh = run(), run("--no-cache")
    assert "2.3.5\n" in fresh
    assert "2.3.5\n" in cached and "2.4.6" not in cached
    assert re.search(r"· run$", cached.strip())


# --- source folders on the path (a library installed in editable mode) ---------------------


ANSWER_SNIPPET = "import answerlib\nprint('answer:', answerlib.answer())\n"


def _library(directory: Path, answer: int) -> Path:
    """A folder of source code, as ``pip install -e`` puts a project's ``src`` on ``sys.path``."""
    (directory / "answerlib").mkdir(parents=True, exist_ok=True)
    (directory / "answerlib" / "__init__.py").write_text(f"def answer():\n    return {answer}\n")
    return directory


def test_an_edited_library_on_the_path_reruns_the_snippet(tmp_path: Path) -> None:
    # Found by a fresh user's try, documenting their own library installed
    # with pip install -e: after an edit to it, verify and the -W build
    # served the old output from the cache, whose key named each
    # distribution by its version only.
    src = _library(tmp_path / "src", 41)
    root = project(tmp_path / "p", {"lib/answer": ANSWER_SNIPPET}, python=interpreter_with(tmp_path, src))
    first = check(root, "lib/answer")["lib/answer"]
    assert first[:2] == ("run", "answer: 41\n")
    assert check(root, "lib/answer")["lib/answer"] == ("cache", "answer: 41\n", first[2])
    # The same size and, put back, the same modification time: only the bytes say it changed.
    module = src / "answerlib" / "__init__.py"
    before = module.stat()
    _library(src, 42)
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    origin, stdout, env_id = check(root, "lib/answer")["lib/answer"]
    assert (origin, stdout) == ("run", "answer: 42\n")
    assert env_id != first[2]


def test_the_source_signature_reads_module_files_only(tmp_path: Path) -> None:
    src = _library(tmp_path / "src", 41)
    signed = fingerprint.scan_path(str(src), sources=True).sources
    assert signed and fingerprint.scan_path(str(src)).sources == ""
    # Bytecode, hidden folders, data files and a virtual environment inside are not the library's code.
    (src / "answerlib" / "__pycache__").mkdir()
    (src / "answerlib" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"x")
    (src / ".git").mkdir()
    (src / ".git" / "hook.py").write_text("x = 1\n")
    (src / "answerlib" / "notes.txt").write_text("not code\n")
    (src / "venv" / "lib").mkdir(parents=True)
    (src / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (src / "venv" / "lib" / "big.py").write_text("x = 1\n")
    assert fingerprint.scan_path(str(src), sources=True).sources == signed
    (src / "answerlib" / "more.py").write_text("y = 2\n")
    assert fingerprint.scan_path(str(src), sources=True).sources != signed
    # A project's own metadata beside its code (setuptools' *.egg-info) does not hide the code.
    (src / "answerlib.egg-info").mkdir()
    (src / "answerlib.egg-info" / "PKG-INFO").write_text("Name: answerlib\nVersion: 0.1\n")
    assert fingerprint.scan_path(str(src), sources=True).sources not in ("", signed)
    # The site folders are known by their distributions' metadata, the standard library by the interpreter.
    site = fake_site(tmp_path / "installed", "numpy", "2.4.6")
    scans = fingerprint.scan([str(src), str(site)], installed=[str(site)])
    assert scans[0].sources != "" and scans[1].sources == ""


def test_differences_name_a_source_folder_whose_code_changed(tmp_path: Path) -> None:
    src = _library(tmp_path / "src", 41)
    before = fingerprint.describe(fingerprint.compute("/py", "3.11", fingerprint.scan([str(src)]), {}))
    _library(src, 42)
    after = fingerprint.describe(fingerprint.compute("/py", "3.11", fingerprint.scan([str(src)]), {}))
    assert fingerprint.differences(before, after) == [f"the code in {src}"]


# --- variables passed to snippets ------------------------------------------------------------


def test_a_changed_path_reruns_a_snippet_that_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p", {"env/path": "import os\nprint(os.environ['PATH'].split(os.pathsep)[0])\n"})
    monkeypatch.setenv("PATH", f"/opt/first{os.pathsep}{os.environ['PATH']}")
    assert check(root, "env/path")["env/path"][:2] == ("run", "/opt/first\n")
    assert check(root, "env/path")["env/path"][:2] == ("cache", "/opt/first\n")
    monkeypatch.setenv("PATH", f"/opt/second{os.pathsep}{os.environ['PATH']}")
    assert check(root, "env/path")["env/path"][:2] == ("run", "/opt/second\n")


DECLARED_VARIABLE = """\
# /// snipcheck
# env = ["DEMO_COLOUR"]
# ///
import os
print(os.environ.get("DEMO_COLOUR"))
"""


def test_a_declared_variable_is_passed_through_and_a_change_reruns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p", {"env/colour": DECLARED_VARIABLE})
    monkeypatch.setenv("DEMO_COLOUR", "red")
    assert check(root, "env/colour")["env/colour"][:2] == ("run", "red\n")
    assert check(root, "env/colour")["env/colour"][:2] == ("cache", "red\n")
    monkeypatch.setenv("DEMO_COLOUR", "blue")
    assert check(root, "env/colour")["env/colour"][:2] == ("run", "blue\n")
    monkeypatch.delenv("DEMO_COLOUR")
    assert check(root, "env/colour")["env/colour"][:2] == ("run", "None\n")


# --- declared data files ---------------------------------------------------------------------

READS_TABLE = """\
# /// snipcheck
# depends = ["data/table.csv"]
# ///
print(open("data/table.csv").read(), end="")
with open("data/table.csv", "a") as f:  # writes land in the run directory only
    f.write("written by the snippet\\n")
"""


def test_a_declared_file_is_copied_into_the_run_and_a_change_reruns(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"data/reader": READS_TABLE})
    table = root / "data" / "table.csv"
    table.parent.mkdir()
    table.write_text("a,b\n1,2\n")
    assert check(root, "data/reader")["data/reader"][:2] == ("run", "a,b\n1,2\n")
    assert table.read_text() == "a,b\n1,2\n"  # the snippet's append reached only its copy
    assert check(root, "data/reader")["data/reader"][:2] == ("cache", "a,b\n1,2\n")
    table.write_text("a,b\n1,3\n")
    assert check(root, "data/reader")["data/reader"][:2] == ("run", "a,b\n1,3\n")


def test_a_declared_glob_reruns_when_a_matching_file_appears(tmp_path: Path) -> None:
    source = '# /// snipcheck\n# depends = ["data/*.csv"]\n# ///\nimport glob\nprint(sorted(glob.glob("data/*.csv")))\n'
    root = project(tmp_path / "p", {"data/lister": source})
    (root / "data").mkdir()
    (root / "data" / "a.csv").write_text("1\n")
    assert check(root, "data/lister")["data/lister"][:2] == ("run", "['data/a.csv']\n")
    (root / "data" / "b.csv").write_text("2\n")
    assert check(root, "data/lister")["data/lister"][:2] == ("run", "['data/a.csv', 'data/b.csv']\n")


def test_project_wide_declarations_in_conf_py_are_passed_and_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = 'import os\nprint(os.environ.get("PROJECT_MODE"), open("data/shared.txt").read().strip())\n'
    conf = 'snipcheck_env = ["PROJECT_MODE"]\nsnipcheck_depends = ["data/shared.txt"]\n'
    root = project(tmp_path / "p", {"conf/both": source}, conf=conf)
    (root / "data").mkdir()
    (root / "data" / "shared.txt").write_text("v1\n")
    monkeypatch.setenv("PROJECT_MODE", "fast")
    assert check(root, "conf/both")["conf/both"][:2] == ("run", "fast v1\n")
    assert check(root, "conf/both")["conf/both"][:2] == ("cache", "fast v1\n")
    (root / "data" / "shared.txt").write_text("v2\n")
    assert check(root, "conf/both")["conf/both"][:2] == ("run", "fast v2\n")
    monkeypatch.setenv("PROJECT_MODE", "slow")
    assert check(root, "conf/both")["conf/both"][:2] == ("run", "slow v2\n")


# --- the runner kind -------------------------------------------------------------------------


def test_a_result_of_one_runner_kind_is_not_served_to_the_other(tmp_path: Path) -> None:
    # false-green.md #4: fork and subprocess results can differ (runner.md);
    # which one ran used to be invisible to the cache.
    root = project(tmp_path / "p", {"kind/one": "print(1)\n"})
    assert check(root, "kind/one", runner="fork")["kind/one"][0] == "run"
    assert check(root, "kind/one", runner="subprocess")["kind/one"][0] == "run"
    assert check(root, "kind/one", runner="fork")["kind/one"][0] == "cache"
    assert check(root, "kind/one", runner="subprocess")["kind/one"][0] == "cache"


def test_a_build_switched_to_subprocesses_reruns_only_the_edited_snippet(tmp_path: Path) -> None:
    # Few runs needed: they run as subprocesses (and are stored as such); the
    # fork runner's results of the other snippets are still taken.
    root = project(tmp_path / "p", {f"plan/s{i}": f"print({i})\n" for i in range(4)})
    ids = [f"plan/s{i}" for i in range(4)]
    check(root, *ids, runner="fork")  # all four cached under the fork runner
    (root / "snippets" / "plan" / "s0.py").write_text("print('edited')\n")
    settings, _ = Settings.from_conf(root)
    settings = dataclasses.replace(settings, fork_min_runs=3)
    snippets = [load(i, settings.snippets_dir, settings.root) for i in ids]
    executor = executor_for(settings, probe(settings.python, settings.cache_dir))
    try:
        assert executor.plan(snippets) == 1
        outcomes = [executor.outcome(s) for s in snippets]
        assert [o.origin for o in outcomes] == ["run", "cache", "cache", "cache"]
        assert [o.result.runner for o in outcomes] == ["subprocess", "fork", "fork", "fork"]
    finally:
        executor.close()
    # A build that forks does not take the subprocess result: it runs s0 again.
    assert check(root, *ids, runner="fork")["plan/s0"][0] == "run"


# --- unrelated changes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    ["unrelated-variable", "undeclared-file", "declared-file-touched", "other-snippet", "home"],
)
def test_an_unrelated_change_reuses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    source = READS_TABLE.replace('with open("data/table.csv", "a") as f:', "if False:")
    root = project(tmp_path / "p", {"data/reader": source, "data/other": "print('other')\n"})
    table = root / "data" / "table.csv"
    table.parent.mkdir()
    table.write_text("x\n")
    first = check(root, "data/reader")["data/reader"]
    assert first[0] == "run"
    if change == "unrelated-variable":
        monkeypatch.setenv("DEMO_UNRELATED", "1")
    elif change == "undeclared-file":
        (root / "data" / "notes.txt").write_text("not read by the snippet\n")
    elif change == "declared-file-touched":
        os.utime(table, ns=(table.stat().st_atime_ns, table.stat().st_mtime_ns + 10**9))
    elif change == "other-snippet":
        (root / "snippets" / "data" / "other.py").write_text("print('changed')\n")
    elif change == "home":
        monkeypatch.setenv("HOME", str(tmp_path))  # not passed: runs get their own HOME
    assert check(root, "data/reader")["data/reader"] == ("cache", first[1], first[2])


# --- the fingerprint ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("numpy-2.4.6.dist-info", ("numpy", "2.4.6")),
        ("torch-2.13.0+cpu.dist-info", ("torch", "2.13.0+cpu")),
        ("Foo_Bar-1.0-py3.11.egg-info", ("foo-bar", "1.0")),
        ("zope.interface-6.0.dist-info", ("zope-interface", "6.0")),
        ("legacy.egg-info", ("legacy", "")),
    ],
)
def test_distribution_names_and_versions_come_from_metadata_folder_names(entry: str, expected: tuple[str, str]) -> None:
    assert fingerprint.distribution(entry) == expected


def test_the_fingerprint_lists_what_the_snippet_interpreter_sees(tmp_path: Path, probe_cache: Path) -> None:
    site = fake_site(tmp_path, "numpy", "1.0.0")
    found = probe_environment(str(interpreter_with(tmp_path, site)), tmp_path / "cache")
    assert str(site) in found.fingerprint.paths
    assert found.fingerprint.version("numpy") == "1.0.0"  # the fake shadows the real one
    assert found.fingerprint.version("torch") is not None
    assert found.stamp.env == found.fingerprint.id
    assert dict(found.fingerprint.variables)["PATH"] == os.environ["PATH"]
    assert not any("bootstrap" in p for p in found.fingerprint.paths)  # snipcheck's own folder


def test_the_probe_answer_is_reused_until_the_interpreter_path_changes(tmp_path: Path) -> None:
    # The stored answer saves a process per build; it must not hide a change.
    counter = tmp_path / "starts"
    site = fake_site(tmp_path, "numpy", "1.0.0")
    wrapper = tmp_path / "python-counted"
    wrapper.write_text(
        f'#!/bin/sh\necho start >> {counter}\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    cache = tmp_path / "cache"
    first = probe_environment(str(wrapper), cache)
    starts = counter.read_text().count("start")
    assert probe_environment(str(wrapper), cache).fingerprint == first.fingerprint
    assert counter.read_text().count("start") == starts  # nothing changed: no process started
    upgrade_in_place(site, "numpy", "1.0.0", "1.1.0")
    second = probe_environment(str(wrapper), cache)
    assert second.fingerprint.version("numpy") == "1.1.0"
    assert second.stamp.env != first.stamp.env
    extra = tmp_path / "extra"
    extra.mkdir()
    wrapper.write_text(wrapper.read_text().replace(f"{site}\"", f"{site}:{extra}\""))
    assert str(extra) in probe_environment(str(wrapper), cache).fingerprint.paths


# --- the Sphinx build ---------------------------------------------------------------------------

PAGE = """\
# Page

```{{snippet}} np/version
{numpy}
```

```{{snippet}} env/colour
{colour}
```

```{{snippet}} data/reader
{table}```

```{{snipcheck-environment}}
```
"""


def sphinx_project(tmp_path: Path) -> tuple[Path, Path]:
    site = fake_site(tmp_path, "numpy", "2.4.6")
    reader = READS_TABLE.replace('with open("data/table.csv", "a") as f:', "if False:")
    root = project(
        tmp_path / "p",
        {"np/version": NUMPY_SNIPPET, "env/colour": DECLARED_VARIABLE, "data/reader": reader},
        python=interpreter_with(tmp_path, site),
    )
    (root / "data").mkdir()
    (root / "data" / "table.csv").write_text("a,b\n")
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text(PAGE.format(numpy="2.4.6", colour="red", table="a,b\n"))
    return root, site


def sphinx(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "--no-color", "-b", "html", "-c", str(root),
         "-d", str(root / "_build" / "doctrees"), str(root / "docs"), str(root / "_build" / "html")],
        env=environ, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("change", ["numpy", "path", "declared-variable", "declared-file", "unrelated"])
def test_an_incremental_build_rereads_and_reruns_what_a_change_affects(tmp_path: Path, change: str) -> None:
    # Before: nothing re-read the page, so the build stayed green with the
    # old numpy's output (the doctree, and the cache behind it, were stale).
    root, site = sphinx_project(tmp_path)
    first = sphinx(root, DEMO_COLOUR="red")
    assert first.returncode == 0, first.stdout + first.stderr
    colour, path = "red", os.environ["PATH"]
    if change == "numpy":
        upgrade_in_place(site, "numpy", "2.4.6", "2.3.5")
    elif change == "path":
        path = f"/opt/elsewhere{os.pathsep}{path}"
    elif change == "declared-variable":
        colour = "blue"
    elif change == "declared-file":
        (root / "data" / "table.csv").write_text("a,c\n")
    elif change == "unrelated":
        (root / "data" / "notes.txt").write_text("unrelated\n")
    second = sphinx(root, DEMO_COLOUR=colour, PATH=path)
    read = set(re.findall(r"reading sources\.\.\. \[\s*\d+%\] (\S+)", second.stdout))
    log = second.stdout + second.stderr
    if change == "unrelated":
        assert second.returncode == 0 and read == set(), log
        return
    assert read == {"index"}, log
    if change == "path":  # no snippet prints PATH: all re-run, none drifts
        assert second.returncode == 0, log
        assert "this build ran 3, took 0 from the cache" in log
        return
    assert second.returncode != 0, log
    drifted, line = {
        "numpy": ("np/version", "+2.3.5"),
        "declared-variable": ("env/colour", "+blue"),
        "declared-file": ("data/reader", "+a,c"),
    }[change]
    assert f"snippet '{drifted}'" in log and line in log
    # the environment is every snippet's; a declared input only its reader's
    ran = 3 if change == "numpy" else 1
    assert f"this build ran {ran}, took {3 - ran} from the cache" in log


def test_the_environment_box_names_the_fingerprint_and_main_distributions(tmp_path: Path) -> None:
    root, _ = sphinx_project(tmp_path)
    assert sphinx(root, DEMO_COLOUR="red").returncode == 0
    # a cold build took nothing from the cache, so the box says nothing of it
    cold = html(root / "_build" / "html" / "index.html").find(class_="snipcheck-environment").get_text()
    assert "3 snippets in all; 3 ran and match their stated output." in cold
    assert "cache" not in cold
    assert sphinx(root, DEMO_COLOUR="red").returncode == 0
    (root / "_build" / "doctrees" / "environment.pickle").unlink()  # read again, all from the cache
    build = sphinx(root, DEMO_COLOUR="red")
    assert "took 3 from the cache" in build.stdout + build.stderr
    settings, _ = Settings.from_conf(root)
    found = probe_environment(settings.python, settings.cache_dir)
    box = html(root / "_build" / "html" / "index.html").find(class_="snipcheck-environment").get_text()
    assert f"environment fingerprint {found.fingerprint.id}" in box  # English: the project sets no language
    assert f"Python {found.stamp.python}" in box and "numpy 2.4.6" in box
    assert f"torch {found.fingerprint.version('torch')}" in box
    assert "3 of them from the cache" in box


def _described(**changes: Any) -> dict[str, Any]:
    base = {
        "executable": "/venv/bin/python", "python": "3.11.7", "paths": ["/lib/a", "/lib/b"],
        "distributions": {"numpy": "2.4.6", "torch": "2.13.0"}, "variables": {"PATH": "a" * 12, "LD_LIBRARY_PATH": None},
    }  # fmt: skip
    return {**base, **changes}


def test_describe_names_each_variable_by_a_digest_of_its_value_never_the_value(tmp_path: Path) -> None:
    fp = fingerprint.compute("/py", "3.11", fingerprint.scan([str(tmp_path)]), {"PATH": "/secret/bin", "X": None})
    described = fingerprint.describe(fp)
    assert described["variables"] == {"PATH": hashlib.sha256(b"/secret/bin").hexdigest()[:12], "X": None}
    assert "/secret/bin" not in json.dumps(described)
    assert described["paths"] == [str(tmp_path)] and described["executable"] == "/py"


@pytest.mark.parametrize(
    ("there", "said"),
    [
        (_described(), []),
        (_described(python="3.11.9"), ["Python 3.11.9 there, 3.11.7 here"]),
        (_described(distributions={"numpy": "2.3.5", "torch": "2.13.0", "rich": "13"}),
         ["numpy 2.3.5 there, 2.4.6 here", "only there: rich 13"]),
        (_described(distributions={"numpy": "2.4.6"}), ["only here: torch 2.13.0"]),
        (_described(variables={"PATH": "b" * 12, "LD_LIBRARY_PATH": None}), ["variable PATH"]),
        (_described(variables={"PATH": "a" * 12, "LD_LIBRARY_PATH": "c" * 12}), ["variable LD_LIBRARY_PATH"]),
        (_described(paths=["/lib/a", "/lib/c"]), ["sys.path entries only there: /lib/c", "sys.path entries only here: /lib/b"]),
        (_described(paths=["/lib/b", "/lib/a"]), ["the order of sys.path"]),
        (_described(executable="/other/bin/python", distributions={f"d{i}": "1" for i in range(5)}),
         ["interpreter /other/bin/python there, /venv/bin/python here",
          "only there: d0 1, d1 1, d2 1 and 2 more", "only here: numpy 2.4.6, torch 2.13.0"]),
        ({"executable": "/venv/bin/python"}, []),  # damaged: the caller says only that the ids differ
    ],
)  # fmt: skip
def test_differences_say_what_another_environment_changes(there: dict[str, Any], said: list[str]) -> None:
    assert fingerprint.differences(there, _described()) == said
