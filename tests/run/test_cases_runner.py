"""New examples of the kind of ``shared/cases/runner.md``: a run is ``python file.py``.

Walked again after the layered layout (every numbered case of runner.md has its
test in test_runner_cases.py, test_lifecycle.py, test_run_command.py,
test_order_stress.py or test_suite_limits.py).  These are examples the file
does not list, tried as a demanding user would: what PyTorch's ``DataLoader``
with ``num_workers`` does under the hood, a ``multiprocessing`` pool whose
workers import the snippet's ``__main__`` again (the ``spawn`` and
``forkserver`` start methods), a thread still printing after the
snippet's main code ends, and Python's default warning filters (a
``DeprecationWarning`` shows from ``__main__`` only).  Each run under both Python runners must show what plain python
shows.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from snipcheck.run import Runner
from runner_support import LIMIT, TIMEOUT, plain_python, project, runner, write  # noqa: F401 - fixtures



def shown(runner: Runner, project: Path, snippet_id: str, source: str) -> tuple[str, str, int]:
    """The run's stdout and stderr text (as plain python's terminals show them) and exit status."""
    snippet = write(project, snippet_id, source)
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    out = "".join(e.text for e in result.events if e.stream == "stdout")
    err = "".join(e.text for e in result.events if e.stream == "stderr")
    return out, err, result.exit_status


def plain(project: Path, snippet_id: str) -> tuple[str, str, int]:
    from snipcheck.sources.snippets import load

    out = plain_python(project, load(snippet_id, project / "snippets", project))
    return out.stdout, out.stderr, out.returncode


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_pool_whose_workers_import_the_snippet_again_runs_as_in_plain_python(
    runner: Runner, project: Path, method: str
) -> None:
    # The workers of a spawn or forkserver pool import __main__ again from
    # sys.argv[0] / __main__.__file__ to find the function they run.
    source = textwrap.dedent(
        f"""\
        import multiprocessing as mp

        def square(n):
            return n * n

        if __name__ == "__main__":
            with mp.get_context({method!r}).Pool(2) as pool:
                print(pool.map(square, range(5)))
        """
    )
    assert shown(runner, project, f"mp/{method}", source) == plain(project, f"mp/{method}") == ("[0, 1, 4, 9, 16]\n", "", 0)


def test_output_of_a_thread_joined_at_exit_is_kept(runner: Runner, project: Path) -> None:
    # A non-daemon thread keeps the interpreter alive at exit: its later output is part of the run.
    source = textwrap.dedent(
        """\
        import threading, time

        def late():
            time.sleep(0.2)
            print("late")

        threading.Thread(target=late).start()
        print("main done")
        """
    )
    assert shown(runner, project, "threads/late", source) == plain(project, "threads/late") == ("main done\nlate\n", "", 0)


def test_deprecation_warnings_show_from_the_snippet_only_as_in_plain_python(runner: Runner, project: Path) -> None:
    # Python shows a DeprecationWarning raised in __main__ and hides one from
    # an imported module (the default filter "default::DeprecationWarning:__main__"):
    # a snippet run under another module name would hide the first.
    (project / "snippets" / "dep").mkdir(parents=True)
    (project / "snippets" / "dep" / "_old.py").write_text(
        "import warnings\n\ndef old():\n    warnings.warn('old from a helper', DeprecationWarning, stacklevel=1)\n"
    )
    source = textwrap.dedent(
        """\
        import warnings
        from _old import old

        warnings.warn("old from the snippet", DeprecationWarning)
        old()
        print("done")
        """
    )
    out, err, status = shown(runner, project, "dep/main", source)
    assert (out, err, status) == plain(project, "dep/main")
    assert "old from the snippet" in err and "old from a helper" not in err
