"""What the fork server preloads (``snipcheck_preload``).

Left unset, it preloads torch only where the snippet interpreter has torch:
a project without torch forks from a server that preloaded nothing, without a
word about torch.  A list in ``conf.py`` is taken as written, and a module in
it that cannot be imported is reported.

The interpreter without torch is this one started with ``-S`` (no
site-packages): the standard library only, like a fresh virtualenv.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from snipcheck.engine.execute import executor_for
from snipcheck.model import Stamp
from snipcheck.settings import Settings
from faults_support import Build, sphinx_build
from runner_support import wrapped_python

WITH_TORCH = Stamp("3.11.7", "2.13.0+cpu", "CPU", "Linux x86_64")
WITHOUT_TORCH = Stamp("3.11.7", None, "CPU", "Linux x86_64")


def settings(tmp_path: Path, **values: object) -> Settings:
    found, messages = Settings.from_mapping(tmp_path, values)
    assert messages == []
    return found


def test_unset_preloads_torch_only_where_the_interpreter_has_it(tmp_path: Path) -> None:
    unset = settings(tmp_path)
    assert unset.preload_modules(WITH_TORCH) == ("torch",)
    assert unset.preload_modules(WITHOUT_TORCH) == ()
    # what the executor hands the fork server
    assert executor_for(unset, WITHOUT_TORCH, use_cache=False).config.preload == ()
    assert executor_for(unset, WITH_TORCH, use_cache=False).config.preload == ("torch",)
    assert unset.preload_problem(WITHOUT_TORCH) is None


def test_a_configured_list_is_taken_as_written(tmp_path: Path) -> None:
    chosen = settings(tmp_path, snipcheck_preload=["numpy", "json"])
    assert chosen.preload_modules(WITHOUT_TORCH) == ("numpy", "json")
    assert executor_for(chosen, WITH_TORCH, use_cache=False).config.preload == ("numpy", "json")
    assert settings(tmp_path, snipcheck_preload=[]).preload_modules(WITH_TORCH) == ()


@pytest.fixture
def no_torch(tmp_path: Path) -> Path:
    """An interpreter without torch: this one, without site-packages."""
    return wrapped_python(tmp_path / "python-no-torch", flags="-S ")


def build(tmp_path: Path, python: Path, conf: str = "") -> Build:
    """Build a two-snippet ``.rst`` project whose snippets run on ``python``, forked."""
    src = tmp_path / "src"
    (src / "snippets" / "p").mkdir(parents=True)
    (src / "conf.py").write_text(f'extensions = ["snipcheck"]\nsnipcheck_python = {str(python)!r}\n{conf}')
    (src / "snippets" / "p" / "a.py").write_text('print("a")\n')
    (src / "snippets" / "p" / "b.py").write_text('print("b")\n')
    (src / "index.rst").write_text("Preload\n=======\n\n.. snippet:: p/a\n\n   a\n\n.. snippet:: p/b\n\n   b\n")
    # the probe of this interpreter is its own: the cache starts empty
    return sphinx_build(src, tmp_path, tmp_path / "cache", {"snipcheck_fork_min_runs": 0})


def test_a_project_without_torch_forks_without_a_word_about_torch(tmp_path: Path, no_torch: Path) -> None:
    built = build(tmp_path, no_torch)
    assert built.statuscode == 0, built.warnings_text
    assert built.warnings == [], built.warnings_text
    # the test's own folder is named after it ("..._without_torch_f0"), and
    # Sphinx names the output folder relative to the working directory
    everything = built.status + built.warnings_text
    for folder in (str(tmp_path), os.path.relpath(tmp_path)):
        everything = everything.replace(folder, "<tmp>")
    assert "snipcheck: fork runner ready (preloaded nothing)" in everything
    assert "torch" not in everything
    assert "subprocess runner" not in everything


def test_a_configured_module_that_cannot_be_imported_is_reported(tmp_path: Path, no_torch: Path) -> None:
    built = build(tmp_path, no_torch, 'snipcheck_preload = ["snipcheck_no_such_module"]\n')
    assert built.statuscode == 0, built.warnings_text  # the runs go on, as plain subprocesses
    assert (
        "snipcheck: using the subprocess runner: forking is unsafe: cannot preload snipcheck_no_such_module: "
        "ModuleNotFoundError: No module named 'snipcheck_no_such_module'"
    ) in built.status + built.warnings_text


def test_configured_torch_on_an_interpreter_without_it_is_a_config_warning(tmp_path: Path, no_torch: Path) -> None:
    built = build(tmp_path, no_torch, 'snipcheck_preload = ["torch"]\n')
    assert built.warnings == [
        f"WARNING: {tmp_path / 'src' / 'conf.py'}: snipcheck_preload names torch, but the snippet interpreter "
        f"{no_torch} has no torch, so the fork server does not preload it; install torch there, or remove it "
        "from snipcheck_preload [snipcheck.config]"
    ], built.warnings_text


HELD = '''import weakref


class Thing:
    pass


loose = Thing()  # its finalizer is held by no one but weakref's registry (as torch's are)
weakref.finalize(loose, print, "loose finalized")
kept = Thing()
kept_finalizer = weakref.finalize(kept, print, "kept finalized")  # held, as tempfile's are
'''
USES_HELD = '''import gc
import held

print("alive:", held.kept_finalizer.alive)
del held.loose
gc.collect()
print("detached:", held.kept_finalizer.detach() is not None, held.kept_finalizer.alive)
del held.kept
gc.collect()
late = held.Thing()
held.weakref.finalize(late, print, "the snippet's own finalizer, at exit")
print("end")
'''


def test_the_preloads_finalizers_behave_as_in_a_plain_run(tmp_path: Path, stamp: Stamp) -> None:
    """The fork server makes the preload's unreferenced ``weakref.finalize``
    objects again, side by side (fewer copy-on-write faults at a run's exit):
    each still runs its callback once when its object dies, a held one is
    still the one its holder can call or detach, and the snippet's own run
    at exit, as in a plain run."""
    from snipcheck.run import make_runner
    from snipcheck.sources.snippets import load

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "held.py").write_text(HELD)
    wrapper = tmp_path / "python-with-held"  # the server's environment has no PYTHONPATH of its own
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path / "lib"} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "uses.py").write_text(USES_HELD)
    snippet = load("uses", tmp_path / "snippets", tmp_path)
    outputs = {}
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=str(wrapper), stamp=stamp, kind=kind, preload=("held",))
        try:
            result = runner.run(snippet, timeout=60, output_limit=1 << 20)
            assert getattr(runner, "unavailable", None) is None
        finally:
            getattr(runner, "close", lambda: None)()
        outputs[kind] = ("".join(e.text for e in result.events), result.exit_status)
    assert outputs["fork"] == outputs["subprocess"] == (
        "alive: True\nloose finalized\ndetached: True False\nend\nthe snippet's own finalizer, at exit\n",
        0,
    )


SCATTERED = '''import weakref


class Thing:
    pass


things = []
held = []  # finalizers someone holds: they stay where they are, and space the loose ones apart
for _ in range(120):
    loose = Thing()
    things.append(loose)
    weakref.finalize(loose, int)  # held by no one but the registry
    for _ in range(100):
        spacer = Thing()
        things.append(spacer)
        held.append(weakref.finalize(spacer, int))
'''
COUNTS_PAGES = '''import weakref

import scattered

held = {id(f) for f in scattered.held}
loose = [f for f, info in weakref.finalize._registry.items() if info.func is int and id(f) not in held]
print(len(loose), len({id(f) >> 12 for f in loose}))
'''


def test_the_preloads_loose_finalizers_lie_together_in_a_run(tmp_path: Path, stamp: Stamp) -> None:
    """At every run's exit, ``weakref.finalize`` looks at each registered
    finalizer, a copy-on-write fault for each page they lie on (torch's 134
    lay on ~140 pages).  The fork server makes the preload's loose ones again
    side by side: here 120 of them, each 100 finalizers apart (on a page of
    its own) in a plain run, lie on a handful of pages in a forked run."""
    from snipcheck.run import make_runner
    from snipcheck.sources.snippets import load

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "scattered.py").write_text(SCATTERED)
    wrapper = tmp_path / "python-with-scattered"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path / "lib"} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "pages.py").write_text(COUNTS_PAGES)
    snippet = load("pages", tmp_path / "snippets", tmp_path)
    pages = {}
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=str(wrapper), stamp=stamp, kind=kind, preload=("scattered",))
        try:
            result = runner.run(snippet, timeout=60, output_limit=1 << 20)
            assert getattr(runner, "unavailable", None) is None
        finally:
            getattr(runner, "close", lambda: None)()
        out = "".join(e.text for e in result.events)
        assert result.exit_status == 0, out
        count, pages[kind] = (int(n) for n in out.split())
        assert count == 120, out
    assert pages["subprocess"] >= 100  # the layout scatters them, as torch's are scattered
    assert pages["fork"] <= 10, pages
