"""Fault tolerance of the Sphinx build (issue 6): snippets that misbehave.

One page (tests/roots/test-fault-snippets) places a snippet for each fault,
each followed by a paragraph ``after <case>``, then a control snippet; a second
page places one more.  The page is built once per Python runner, and every
test checks one case of that build: the warning names the snippet id, the
file and the directive's line and says what to do; the rest of the page is
there; nothing under the sources changed; the cache holds only valid entries
of runs worth keeping.

The runner-level side of the same faults is in test_faults_runner.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import block_kinds, directive_line, html, plain
from load import Inbox, host_pid, spec_gone
from snipcheck.judge.compare import truncation_marker
from snipcheck.run import PYTHON_RUNNERS
from faults_support import Build, cached_ids, copy_root, sphinx_build

LONG_LINE = "0123456789" * 10_000
FLOOD_KEPT = ("x" * 1023 + "\n") * 1024  # the first MiB of the 200 MiB the snippet writes
FLOOD_DROPPED = 1 << 20  # counted beyond the limit before the run is stopped (the limit again)


@dataclass
class Faults:
    build: Build
    runner: str
    orphan: list[str]  # what fault/orphan said of its child (load.RUN_PID)

    @property
    def index(self) -> Path:
        return self.build.srcdir / "index.md"

    @property
    def page(self) -> Path:
        return self.build.outdir / "index.html"

    def at(self, snippet_id: str) -> str:
        """``<path>:<line>`` of the directive placing ``snippet_id``, as warnings start."""
        return f"{self.index}:{directive_line(self.index, snippet_id)}"


@pytest.fixture(scope="module", params=PYTHON_RUNNERS)
def faults(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, probe_cache: Path) -> Faults:
    from conftest import fresh_cache

    tmp = tmp_path_factory.mktemp(f"faults-{request.param}")
    src = copy_root("fault-snippets", tmp / "src")
    index = src / "index.md"
    # Stated outputs too big to keep in the root, and where the orphan says which its child is.
    text = index.read_text(encoding="utf-8")
    text = text.replace("@LONGLINE@", LONG_LINE)
    text = text.replace("@FLOOD@", FLOOD_KEPT + truncation_marker(FLOOD_DROPPED, 1 << 20, stopped=True).rstrip("\n"))
    index.write_text(text, encoding="utf-8")
    orphan = src / "snippets" / "fault" / "orphan.py"
    with Inbox() as inbox:
        orphan.write_text(orphan.read_text().replace("INBOX = None", f"INBOX = {inbox.path!r}"))
        with stdin_that_never_ends():
            build = sphinx_build(
                src, tmp, fresh_cache(tmp / "cache", probe_cache), {"snipcheck_runner": request.param}
            )
        said = inbox.lines()
    return Faults(build, request.param, said)


@contextlib.contextmanager
def stdin_that_never_ends() -> Iterator[None]:
    """File descriptor 0 of this process as a terminal waiting for input is:
    open, with nothing to read.  A snippet that inherited it would block."""
    read, write = os.pipe()
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read, write):
            os.close(fd)


def blocks(page: Path, snippet_id: str) -> list[tuple[list[str], str]]:
    """(classes, text) of each output block of a snippet, in page order."""
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    assert div is not None, f"no rendered snippet {snippet_id}"
    panel = div.find(class_="snipcheck-output")
    return [
        (block_kinds(d["class"]), d.find("pre").get_text())
        for d in panel.find_all("div", class_="output", recursive=False)
    ]


def notes(page: Path, snippet_id: str) -> list[str]:
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    return [p.get_text() for p in div.find_all("p", class_="snipcheck-note")]


def stamp(page: Path, snippet_id: str) -> str:
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    return div.find("p", class_="snipcheck-stamp").get_text()


def hint(expect: str) -> str:
    return f"fix the code, or if this is what the page means to show, add expect = \"{expect}\" to its tag block"


# --- what every fault must leave intact ------------------------------------------------------


def test_every_other_snippet_and_page_still_builds(faults: Faults) -> None:
    soup = html(faults.page)
    paragraphs = {p.get_text() for p in soup.find_all("p")}
    cases = re.findall(r"^after (\S+)$", faults.index.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(cases) == 17
    assert {f"after {case}" for case in cases} <= paragraphs
    assert blocks(faults.page, "fault/control") == [(["snipcheck-stdout"], "control ran\n")]
    assert blocks(faults.build.outdir / "other.html", "fault/other") == [(["snipcheck-stdout"], "other page\n")]
    summary = next(line for line in faults.build.status.splitlines() if re.match(r"snipcheck: \d+ snippets", line))
    assert summary == (
        "snipcheck: 18 snippets on 2 pages: 11 match their stated output, 1 drift, 4 failed, 1 timed out, "
        "1 cut at the output limit; "
        "this build ran 18, took 0 from the cache; "
        "of its runs 17 gave the stated output, 1 a new one"  # the failures print what their pages state
    )


def test_only_the_faults_warn_and_nothing_else_does(faults: Faults) -> None:
    warned = sorted(re.search(r"snippet '([^']+)'", w).group(1) for w in faults.build.warnings)  # type: ignore[union-attr]
    faulty = ["fault/exit3", "fault/flood", "fault/longline-drift", "fault/loop", "fault/markup", "fault/segv", "fault/syntax"]
    assert warned == faulty
    assert faults.build.other_warnings == []  # no Sphinx, MyST or Pygments complaint either


def test_the_faults_fail_the_build_without_w_and_the_summary_names_each(faults: Faults) -> None:
    # false-green.md #5: drift must not pass as "build succeeded, N warnings"
    assert faults.build.statuscode == 1
    summary = faults.build.summary
    assert summary is not None and "the build fails" in summary
    named = sorted(re.findall(r"^  \S+:\d+: (\S+): \w+$", summary, re.MULTILINE))
    assert named == ["fault/exit3", "fault/flood", "fault/longline-drift", "fault/loop", "fault/markup", "fault/segv", "fault/syntax"]


def test_no_file_under_the_sources_changes(faults: Faults) -> None:
    # fault/writes writes into its working directory, over its own file, into
    # snippets/ and ../index.md relative to it, and into ~: all of it lands in
    # the run's temporary directory.
    assert faults.build.after == faults.build.before
    assert blocks(faults.page, "fault/writes") == [(["snipcheck-stdout"], "wrote files\n")]


def test_the_cache_holds_only_valid_entries_of_runs_worth_keeping(faults: Faults) -> None:
    # Failed, crashed and timed-out runs are run again next time, and so is
    # one stopped for its output (fault/flood); a drifted output is a good
    # run of a changed snippet and is kept.
    assert cached_ids(faults.build.cache_dir) == {
        f"fault/{name}"
        for name in (
            "abort", "stdin", "writes", "orphan", "bytes", "ansi", "cjk", "progress",
            "longline", "longline-drift", "control", "other",
        )
    }  # fmt: skip


# --- snippet behaviour -------------------------------------------------------------------------


def test_syntax_error_warns_and_shows_the_traceback_plain_python_shows(faults: Faults) -> None:
    assert faults.build.about("fault/syntax") == [
        f"{faults.at('fault/syntax')}: WARNING: snippet 'fault/syntax': the snippet raised SyntaxError: "
        f"'(' was never closed (syntax.py, line 1), but its tags expect a normal exit; {hint('SyntaxError')} "
        "[snipcheck.exec]"
    ]
    assert blocks(faults.page, "fault/syntax") == [
        (
            ["snipcheck-stderr", "snipcheck-traceback"],
            '  File "snippets/fault/syntax.py", line 1\n    print("before"\n         ^\nSyntaxError: \'(\' was never closed\n',
        )
    ]
    assert "forkserver" not in faults.page.read_text(encoding="utf-8")


def test_infinite_loop_times_out_with_its_printed_output_kept(faults: Faults) -> None:
    (warning,) = faults.build.about("fault/loop")
    assert re.fullmatch(
        re.escape(f"{faults.at('fault/loop')}: WARNING: snippet 'fault/loop': timed out after ")
        + r"\d+\.\d s"
        + re.escape(
            ": it reached its timeout, counted in CPU seconds of its processes, and was killed with its "
            "processes; the output printed until then is shown; make it faster or raise 'timeout' in its tag "
            "block (or snipcheck_timeout) [snipcheck.timeout]"
        ),
        warning,
    )
    assert blocks(faults.page, "fault/loop") == [(["snipcheck-stdout"], "spinning\n")]
    (note,) = notes(faults.page, "fault/loop")
    assert re.fullmatch(
        r"Timed out: the whole process group was killed after \d+\.\d s; above is what it printed until then\.", note
    )


def test_os_exit_3_is_a_result_with_a_warning_and_its_status_shown(faults: Faults) -> None:
    assert faults.build.about("fault/exit3") == [
        f"{faults.at('fault/exit3')}: WARNING: snippet 'fault/exit3': the snippet exited with status 3, "
        f"but its tags expect a normal exit; {hint('exit 3')} [snipcheck.exec]"
    ]
    assert blocks(faults.page, "fault/exit3") == [(["snipcheck-stdout"], "bye\n")]
    assert " · exit status 3 · " in stamp(faults.page, "fault/exit3")


def test_segfault_is_a_result_with_a_warning_and_the_signal_shown(faults: Faults) -> None:
    assert faults.build.about("fault/segv") == [
        f"{faults.at('fault/segv')}: WARNING: snippet 'fault/segv': the snippet was killed by SIGSEGV, "
        f"but its tags expect a normal exit; {hint('signal SIGSEGV')} [snipcheck.exec]"
    ]
    assert blocks(faults.page, "fault/segv") == [(["snipcheck-stdout"], "about to crash\n")]
    assert notes(faults.page, "fault/segv") == ["The process was killed by signal SIGSEGV."]


def test_declared_abort_is_shown_without_a_warning(faults: Faults) -> None:
    assert faults.build.about("fault/abort") == []
    assert blocks(faults.page, "fault/abort") == [(["snipcheck-stdout"], "aborting\n")]
    assert notes(faults.page, "fault/abort") == ["The process was killed by signal SIGABRT."]


def test_reading_stdin_gets_end_of_file_at_once(faults: Faults) -> None:
    # The build ran with an open, silent stdin (see stdin_that_never_ends); the
    # tag block allows 10 s: a read that waited for input would time out.
    assert faults.build.about("fault/stdin") == []
    assert blocks(faults.page, "fault/stdin") == [(["snipcheck-stdout"], "''\nEOF\n")]


def test_a_child_outliving_its_snippet_is_killed_with_the_group(faults: Faults) -> None:
    assert faults.build.about("fault/orphan") == []
    (spec,) = faults.orphan
    deadline = time.monotonic() + 10
    while not spec_gone(spec) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spec_gone(spec), f"process {host_pid(spec)}, started by fault/orphan, still runs"


def test_invalid_utf8_is_shown_as_backslash_escapes(faults: Faults) -> None:
    assert faults.build.about("fault/bytes") == []
    # with braces: never the same as the printed text "\\xff" (issue 33 §5, tests/run/test_raw_bytes.py)
    assert blocks(faults.page, "fault/bytes") == [(["snipcheck-stdout"], "ok \\x{ff}\\x{fe} end\n")]


def test_ansi_colours_are_rendered_never_raw(faults: Faults) -> None:
    assert faults.build.about("fault/ansi") == []
    raw = faults.page.read_text(encoding="utf-8")
    assert "\x1b" not in raw
    assert blocks(faults.page, "fault/ansi") == [
        (["snipcheck-stdout"], "red plain bold green\n"),
        (["snipcheck-stderr"], "coloured stderr\n"),
    ]
    div = html(faults.page).find(id="snippet-fault-ansi")
    assert div.find("span", class_="-Color-Red").get_text() == "red"


def test_html_in_output_and_in_the_exception_is_shown_as_text(faults: Faults) -> None:
    raw = faults.page.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in raw
    assert "<b>bold?</b>" not in raw
    assert faults.build.about("fault/markup") == [
        f"{faults.at('fault/markup')}: WARNING: snippet 'fault/markup': the snippet raised ValueError: "
        f"<script>alert(1)</script>, but its tags expect a normal exit; {hint('ValueError')} [snipcheck.exec]"
    ]
    (stderr, traceback) = blocks(faults.page, "fault/markup")
    assert stderr == (["snipcheck-stderr"], "<b>bold?</b> & <i>\n")
    assert traceback[1].endswith("ValueError: <script>alert(1)</script>\n")
    problem = html(faults.page).find(id="snippet-fault-markup").find(class_="caution").find_all("p")[-1]
    assert "It ended with: ValueError: <script>alert(1)</script>" in problem.get_text()


def test_cjk_text_and_emoji_are_shown_and_compared_exactly(faults: Faults) -> None:
    assert faults.build.about("fault/cjk") == []
    assert blocks(faults.page, "fault/cjk") == [
        (["snipcheck-stdout"], "版本计数器：张量 a 的 _version 是 1 ✅\n"),
        (["snipcheck-stderr"], "表情符号 🔥😀👍🏽\n"),
        (
            ["snipcheck-stderr", "snipcheck-warning"],
            'snippets/fault/cjk.py:4: UserWarning: 就地操作修改了叶子张量 ⚠️\n  warnings.warn("就地操作修改了叶子张量 ⚠️")\n',
        ),
    ]


def test_carriage_return_progress_bars_show_their_final_state(faults: Faults) -> None:
    assert faults.build.about("fault/progress") == []
    assert blocks(faults.page, "fault/progress") == [
        (["snipcheck-stdout"], "progress 100%\n"),
        (["snipcheck-stderr"], "step 3/3\n"),
        (["snipcheck-stdout"], "done\n"),
    ]
    assert "\r" not in faults.page.read_text(encoding="utf-8")


def test_a_100000_character_line_is_shown_whole(faults: Faults) -> None:
    assert faults.build.about("fault/longline") == []
    assert blocks(faults.page, "fault/longline") == [(["snipcheck-stdout"], LONG_LINE + "\n")]


def test_drift_in_a_100000_character_line_warns_with_the_full_diff_file(faults: Faults) -> None:
    (warning,) = faults.build.about("fault/longline-drift")
    assert warning.startswith(
        f"{faults.at('fault/longline-drift')}: WARNING: snippet 'fault/longline-drift': "
        "the stated output differs from the actual output:\n"
    )
    diff_file = faults.build.report_dir / "diffs" / "fault__longline-drift.diff"
    assert warning.endswith(
        f"full diff: {diff_file}\nif the new output is right, record it: snipcheck record fault/longline-drift "
        "[snipcheck.drift]"
    )
    assert f"+{LONG_LINE}!" in diff_file.read_text(encoding="utf-8")
    assert blocks(faults.page, "fault/longline-drift") == [(["snipcheck-stdout"], LONG_LINE + "!\n")]


def test_drift_in_a_100000_character_line_keeps_the_warning_readable(faults: Faults) -> None:
    (warning,) = faults.build.about("fault/longline-drift")
    assert max(len(line) for line in warning.splitlines()) <= 1000


def test_200_mb_of_output_is_capped_stopped_and_warned_about(faults: Faults) -> None:
    # The stated output ends with the marker line, yet the build cannot check
    # what it did not keep: a truncated output warns (false-green.md #6).
    # Once a MiB more than the limit has come, the run is stopped (issue 23
    # item 4): the parent reads 2 MiB, not 200.
    assert faults.build.about("fault/flood") == [
        f"{faults.at('fault/flood')}: WARNING: snippet 'fault/flood': its output passed the output limit of "
        "1,048,576 bytes by 1,048,576 more, so the run was stopped there: how much more it would have printed, "
        "and how it would have ended, is unknown; print less, or raise the limit for this snippet in its tag "
        "block (output-limit = 4194304 or more) [snipcheck.truncated]"
    ]
    assert blocks(faults.page, "fault/flood") == [(["snipcheck-stdout"], FLOOD_KEPT)]
    assert notes(faults.page, "fault/flood") == [
        "Output over the limit of 1,048,576 bytes: the run was stopped once 1,048,576 more bytes had come; "
        "they are not shown."
    ]
    assert faults.page.stat().st_size < 4 * (1 << 20)


@pytest.mark.sphinx("html", testroot="fault-ansi")
def test_ansi_escapes_other_than_colours_never_reach_the_html(app) -> None:
    app.build()
    page = Path(app.outdir) / "index.html"
    assert blocks(page, "ansi/after") == [(["snipcheck-stdout"], "after the escapes\n")]
    assert [line for line in plain(app.warning.getvalue()).splitlines() if "WARNING" in line] == []
    raw = page.read_text(encoding="utf-8")
    assert "\x1b" not in raw and "\x07" not in raw
    assert blocks(page, "ansi/cursor") == [(["snipcheck-stdout"], "red, then a cleared line:\nerased after the title\n")]


# --- the fork runner: one warm parent, nothing leaks between runs ----------------------------


@pytest.mark.sphinx("html", testroot="fault-fork")
def test_fork_runner_shows_the_same_warning_in_both_snippets_and_leaks_no_state(app, stamp) -> None:
    # jobs = 1: the runs happen one after another, in page order, each forked
    # from the same parent (test_faults_runner.py has the one-process control).
    if stamp.torch is None:
        pytest.skip("torch is not installed")
    app.build()
    page = Path(app.outdir) / "index.html"
    assert plain(app.warning.getvalue()).strip() == ""
    for snippet_id, name in (("warn/first", "first"), ("warn/second", "second")):
        (warning, built) = blocks(page, snippet_id)
        assert warning[0] == ["snipcheck-stderr", "snipcheck-warning"]
        assert "torch/nn/modules/rnn.py:" in warning[1]
        assert "UserWarning: dropout option adds dropout after all but last recurrent layer" in warning[1]
        assert built == (["snipcheck-stdout"], f"{name} LSTM built\n")
    assert blocks(page, "state/read") == [
        (
            ["snipcheck-stdout"],
            "anomaly detection: False\ndefault dtype: torch.float32\njson.LEAKED: False\n"
            "recursion limit 123: False\nwarnings are errors: False\nsum: torch.float32\n",
        )
    ]
    # ... and it was the fork runner that ran them, not its subprocess fallback.
    entries = list(Path(app.config.snipcheck_cache_dir, "results").glob("*/*.json"))
    assert len(entries) == 4
    assert {json.loads(e.read_text())["result"]["runner"] for e in entries} == {"fork"}
