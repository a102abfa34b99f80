"""A snippet cannot claim an uncaught exception it never let escape (issue 33 §2's kind).

Found by a fresh user's try: the runner learns which exception ended a run
from the ``sys.excepthook`` audit event, and a snippet can raise that event
itself (``sys.audit("sys.excepthook", ..., KeyError, ...)``), print what a
KeyError would, and exit with status 1: ``expect = "KeyError"`` then took
the run for one that raised it, and ``verify`` said "unchanged".  Now the
event counts only where the interpreter raises it (no Python frame under
the hook: ``python file.py`` at its end) or where the fork runner's own
report of an exception it caught does; forged, the run has no exception and
its ``expect`` tag fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_support import LIMIT, TIMEOUT, project, runner, write  # noqa: F401 - fixtures
from snipcheck.judge.compare import outcome_problem
from snipcheck.model import ExceptionInfo
from snipcheck.run import Runner

EXPECT = '\n# /// snipcheck\n# expect = "KeyError"\n# ///\n'

#: The fork runner's own report of an exception, and the capture module it takes, found up the snippet's frames.
FIND_REPORT = """\
import atexit, sys
print("no KeyError here")
frame, report, child = sys._getframe(), None, None
while frame is not None:
    report = report or frame.f_globals.get("report")
    child = child or frame.f_locals.get("child_mod")
    frame = frame.f_back
"""

#: How the snippet claims a KeyError it never raised, then exits with status 1.
FORGERIES = {
    # the audit event, raised from the snippet's own code
    "audit": 'import sys\nprint("no KeyError here")\nsys.audit("sys.excepthook", sys.__excepthook__, KeyError, KeyError("x"), None)\nsys.exit(1)\n',
    # the report, called from the snippet's code (the subprocess runner has none: the event instead)
    "report": FIND_REPORT
    + """\
if report is not None and child is not None:
    report(KeyError, KeyError("x"), None, child)
else:
    sys.audit("sys.excepthook", sys.__excepthook__, KeyError, KeyError("x"), None)
sys.exit(1)
""",
}

#: Set off by the runner's own code after the snippet's last line: an exit handler.
LATER = {
    "atexit-audit": 'import atexit, sys\nprint("no KeyError here")\natexit.register(sys.audit, "sys.excepthook", sys.__excepthook__, KeyError, KeyError("x"), None)\nsys.exit(1)\n',
    "atexit-report": FIND_REPORT + 'atexit.register(report, KeyError, KeyError("x"), None, child)\nsys.exit(1)\n',
}


def _claims_nothing(runner: Runner, project: Path, snippet_id: str, source: str) -> None:
    snippet = write(project, snippet_id, source + EXPECT)
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exit_status == 1
    assert result.exception is None, result.exception
    problem = outcome_problem(snippet.tags, result)
    assert problem is not None and "expected the snippet to end with KeyError" in problem[1], problem


@pytest.mark.parametrize("how", list(FORGERIES))
def test_an_exception_claimed_from_the_snippets_code_is_no_exception(runner: Runner, project: Path, how: str) -> None:
    _claims_nothing(runner, project, f"forge/{how}", FORGERIES[how])


@pytest.mark.parametrize("how", list(LATER))
def test_an_exception_claimed_by_an_exit_handler_is_no_exception(runner: Runner, project: Path, how: str) -> None:
    if runner.name == "subprocess" and how == "atexit-audit":
        # Under the subprocess runner the interpreter runs exit handlers
        # from C after the script, as it reports an uncaught exception: the
        # event raised there cannot be told from its own (the guide says so,
        # at the expect tag).
        pytest.skip("the subprocess runner cannot tell an exit handler's event from the interpreter's")
    if runner.name == "subprocess" and how == "atexit-report":
        pytest.skip("the subprocess runner has no report function to find")
    _claims_nothing(runner, project, f"later/{how}", LATER[how])


def test_a_real_uncaught_exception_still_counts(runner: Runner, project: Path) -> None:
    # The same shape, raised for real: the expect tag holds.
    snippet = write(project, "forge/real", 'print("a KeyError here")\nraise KeyError("x")\n' + EXPECT)
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exception == ExceptionInfo("KeyError", "'x'")
    assert outcome_problem(snippet.tags, result) is None
