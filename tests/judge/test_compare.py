"""Unit tests of snipcheck.judge.compare: terminal text and the verdict on a run."""

from __future__ import annotations

from judge_support import out, result
from snipcheck.judge import normalize as N
from snipcheck.judge.compare import collapse_cr, judge, strip_ansi, terminal_text
from snipcheck.model import ExceptionInfo, Tags

ALL = N.resolve(N.DEFAULT)
TRACEBACK = 'Traceback (most recent call last):\n  File "snippets/x.py", line 1, in <module>\n    raise ValueError("boom")\nValueError: boom\n'
RAISED = result(("stderr", "traceback", TRACEBACK), exception=ExceptionInfo("ValueError", "boom"), status=1)


# --- terminal text -----------------------------------------------------------


def test_terminal_text_interleaves_streams_collapses_progress_bars_and_strips_ansi() -> None:
    run = result(
        out("\x1b[1;31mred\x1b[0m start\n"),
        ("stderr", "text", "  0%|          |\r 50%|#####     |\r100%|##########|\n"),
        ("stderr", "warning", "snippets/x.py:3: UserWarning: w\n  warnings.warn('w')\n"),
        out("done\n"),
    )
    assert terminal_text(run) == (
        "red start\n100%|##########|\nsnippets/x.py:3: UserWarning: w\n  warnings.warn('w')\ndone"
    )


def test_carriage_return_overwrites_only_as_far_as_the_new_text() -> None:
    assert collapse_cr("downloading 10%\rdone") == "doneloading 10%"
    assert collapse_cr("a\rb\nc\rd\n") == "b\nd\n"
    assert collapse_cr("no cr") == "no cr"


def test_strip_ansi_removes_colours_cursor_moves_and_titles() -> None:
    assert strip_ansi("\x1b]0;title\x07\x1b[2K\x1b[32mok\x1b[0m") == "ok"


def test_terminal_text_applies_display_normalizers_only() -> None:
    run = result(out('File "/x/.venv/lib/python3.11/site-packages/torch/_tensor.py", line 623 at 0x7f7f81955ff0\n'))
    assert terminal_text(run, ALL) == 'File ".../site-packages/torch/_tensor.py", line 623 at 0x7f7f81955ff0'


def test_terminal_text_marks_truncation() -> None:
    run = result(out("x" * 10), truncated=5, limit=10)
    assert terminal_text(run) == "x" * 10 + "\n[snipcheck: output limit of 10 bytes reached; 5 more bytes not shown]"


# --- judge -------------------------------------------------------------------


def test_equal_output_is_ok() -> None:
    verdict = judge(Tags(), result(out("a.add_(1): same storage? True\n")), "a.add_(1): same storage? True", ALL)
    assert verdict.status == "ok"
    assert verdict.ok
    assert verdict.problems == ()
    assert verdict.diff == ""


def test_one_changed_character_is_drift_with_a_diff_naming_both_sides() -> None:
    verdict = judge(
        Tags(),
        result(out("a.add_(1): same storage? True\n")),
        "a.add_(1): same storage? Trve",
        ALL,
        stated_label="stated (inplace.md:12)",
        actual_label="actual (torch 2.13.0+cpu)",
    )
    assert verdict.status == "drift"
    assert verdict.problems == ("the stated output differs from the actual output",)
    assert verdict.diff == (
        "--- stated (inplace.md:12)\n"
        "+++ actual (torch 2.13.0+cpu)\n"
        "@@ -1 +1 @@\n"
        "-a.add_(1): same storage? Trve\n"
        "+a.add_(1): same storage? True"
    )
    assert verdict.actual == "a.add_(1): same storage? True"


def test_differences_masked_by_normalizers_are_not_drift() -> None:
    stated = '  File ".../site-packages/torch/autograd/graph.py", line 979, in f\n<object object at 0x7f7f81955ff0>'
    actual = '  File "/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py", line 1072, in f\n<object object at 0x7f00aa11bb22>\n'
    assert judge(Tags(), result(out(actual)), stated, ALL).status == "ok"


def test_expected_exception_that_does_not_happen_is_drift() -> None:
    verdict = judge(Tags(expect="RuntimeError"), result(out("fine\n")), "fine", ALL)
    assert verdict.status == "drift"
    assert verdict.problems == ("expected the snippet to end with RuntimeError, but it exited normally (status 0)",)


def test_expected_exception_that_happens_with_the_stated_message_is_ok() -> None:
    assert judge(Tags(expect="ValueError"), RAISED, TRACEBACK, ALL).status == "ok"


def test_another_exception_than_expected_is_drift() -> None:
    verdict = judge(Tags(expect="RuntimeError"), RAISED, TRACEBACK, ALL)
    assert verdict.status == "drift"
    assert verdict.problems == ("expected the snippet to end with RuntimeError, but it raised ValueError: boom",)


def test_unexpected_exception_is_exec_and_says_how_to_declare_it() -> None:
    verdict = judge(Tags(), RAISED, TRACEBACK, ALL)
    assert verdict.status == "exec"
    assert verdict.problems == (
        "the snippet raised ValueError: boom, but its tags expect a normal exit; fix the code, or if this "
        'is what the page means to show, add expect = "ValueError" to its tag block',
    )


def test_a_missing_file_says_a_run_starts_in_its_own_folder_and_how_to_declare_a_file() -> None:
    # Found by a fresh user's try: a notebook reading data.txt beside it was
    # told only to expect FileNotFoundError.
    missing = result(exception=ExceptionInfo("FileNotFoundError", "[Errno 2] No such file or directory: 'data.txt'"), status=1)
    (said,) = judge(Tags(), missing, "", ALL).problems
    assert "a run starts in a folder of its own" in said and "snipcheck.depends" in said and "depends in its tag block" in said


def test_unexpected_nonzero_exit_is_exec() -> None:
    verdict = judge(Tags(), result(out("bye\n"), status=3), "bye", ALL)
    assert verdict.status == "exec"
    assert 'add expect = "exit 3" to its tag block' in verdict.problems[0]
    assert judge(Tags(expect="exit 3"), result(out("bye\n"), status=3), "bye", ALL).status == "ok"


def test_timeout_is_its_own_status() -> None:
    verdict = judge(Tags(), result(out("started\n"), status=None, timed_out=True), "", ALL)
    assert verdict.status == "timeout"
    assert verdict.actual == "started"


def test_trailing_space_only_change_is_drift_and_shown_with_middle_dots() -> None:
    verdict = judge(Tags(), result(out("x = 1  \n")), "x = 1", ALL)
    assert verdict.status == "drift"
    assert verdict.diff.splitlines()[-2:] == ["-x = 1", "+x = 1··"]


def test_a_single_final_newline_is_not_significant() -> None:
    assert judge(Tags(), result(out("x\n")), "x\n", ALL).status == "ok"
    assert judge(Tags(), result(out("x")), "x", ALL).status == "ok"


def test_a_blank_line_at_the_end_beyond_the_final_newline_is_significant() -> None:
    # print("x"); print()  prints "x\n\n": the blank line is output a reader
    # sees; only the single final newline is not significant.
    verdict = judge(Tags(), result(out("x\n\n")), "x", ALL)
    assert verdict.status == "drift"
    assert verdict.diff != ""
    assert judge(Tags(), result(out("x\n\n")), "x\n", ALL).status == "ok"


def test_empty_stated_output_asks_for_a_recording() -> None:
    verdict = judge(Tags(), result(out("hello\n")), "", ALL)
    assert verdict.status == "drift"
    assert verdict.problems == ("no stated output yet: record it from a real run",)
