"""Wildcards in stated outputs (issue 15, part 2): ``[..]`` within a line, ``...`` for lines.

Unit tests of the matching (snipcheck.judge.wildcards), the drift diff and what
record/accept write (snipcheck.judge.alignment), then the command line (record,
accept, review) on small projects, a pathological case timed, and a
Sphinx build (sphinx.testing, root tests/roots/test-wildcards).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import (
    directive_line,
    environment_label,
    html,
    placements_in,
    snipcheck_cli,
    snipcheck_warnings,
    write_project,
)
from judge_support import out, result
from snipcheck.judge import normalize as N
from snipcheck.judge.alignment import align
from snipcheck.judge.compare import judge, masking_normalizers, text_diff
from snipcheck.judge.wildcards import line_matches, matches, only_wildcards, parse, prepare, uses_wildcards
from snipcheck.model import Stamp, Tags
from snipcheck.pending.recording import Unrecordable, to_record
from snipcheck.report.verify import Report, SnippetReport

ALL = N.resolve(N.DEFAULT)


def ok(stated: str, actual: str, normalizers: tuple[N.Normalizer, ...] = ALL) -> bool:
    return text_diff(stated, actual, normalizers, "stated", "actual") == ""


def diff(stated: str, actual: str) -> str:
    return text_diff(stated, actual, ALL, "stated", "actual")


# --- syntax and matching ------------------------------------------------------------


def test_inline_wildcard_matches_any_text_within_a_line_possibly_none() -> None:
    assert ok("took [..] ms", "took 12.5 ms")
    assert ok("took [..] ms", "took  ms")
    assert ok("[..]: [..]", "loss: 0.25")
    assert ok("a[..]b[..]c", "abc")
    assert not ok("took [..] ms", "took 12.5 s")
    assert not ok("took [..] ms", "took 1\n2 ms")  # never a line break
    assert not ok("x[..]", "y x1")  # the literal start is anchored


def test_a_line_of_three_dots_matches_any_number_of_whole_lines() -> None:
    assert ok("first\n...\nlast", "first\nlast")  # zero lines
    assert ok("first\n...\nlast", "first\n1\n2\n3\nlast")
    assert ok("...\nlast", "1\n2\nlast")
    assert ok("first\n...", "first\n1\n2")
    assert ok("a\n...\nb\n...\nc", "a\nx\nb\ny\nb\nc")
    assert not ok("first\n...\nlast", "first\n1\nlast but not")
    assert not ok("first\n...\nlast", "1\nfirst\nlast")


def test_only_an_exact_line_of_three_dots_is_a_wildcard() -> None:
    assert parse("...").lines == (None,)
    assert parse("    ...\n... \n....").lines == (("    ...",), ("... ",), ("....",))
    assert not ok("a\n    ...\nb", "a\nx\nb")  # an indented ... (a traceback, a prompt) is text
    assert ok("a\n    ...\nb", "a\n    ...\nb")


def test_wildcards_apply_in_the_stated_output_never_in_the_actual_one() -> None:
    assert not ok("value: 1", "value: [..]")
    assert not ok("a\nb\nc", "a\n...\nc")
    assert ok("value: [..]", "value: [..]")  # a literal [..] printed is matched like any text


def test_a_stated_output_ending_with_one_newline_more_still_matches() -> None:
    assert ok("took [..] ms\n", "took 3 ms")
    assert ok("a\n...\n", "a\nb\n")
    assert not ok("took [..] ms\n\n", "took 3 ms")


def test_line_matching_is_leftmost_and_exact_for_overlaps() -> None:
    assert line_matches(("ab", "ba"), "aba") is False  # start and end may not overlap
    assert line_matches(("ab", "ba"), "abba")
    assert line_matches(("a", "a", "a"), "aaa")
    assert not line_matches(("a", "a", "a"), "aa")


def test_normalizers_run_on_both_sides_before_the_wildcards() -> None:
    # The address is masked on both sides (memory-addresses), the path made
    # canonical (python-paths); the wildcard then matches the rest.
    stated = '<object at 0x7f0000000001> from "/usr/lib/python3.11/site-packages/torch/x.py" in [..]'
    actual = '<object at 0x7fffaaaa0000> from "/venv/lib/python3.11/site-packages/torch/x.py" in 3 ms'
    assert ok(stated, actual)
    # A compare-only normalizer that hid a difference is still named.
    assert masking_normalizers(stated, actual, ALL) == ("memory-addresses",)


def test_a_normalizer_never_destroys_nor_creates_a_wildcard() -> None:
    collapse = N.Normalizer("collapse-spaces", lambda t: re.sub(r"\s+", " ", t.replace("\n", "\x00")).replace("\x00", "\n"), True, "")
    brackets = N.Normalizer("no-brackets", lambda t: t.replace("[", "(").replace("]", ")"), True, "")
    dots = N.Normalizer("dots", lambda t: t.replace("etc", "..."), True, "")
    # The sentinel a marker becomes is whitespace to regular expressions: a
    # normalizer rewriting whitespace would eat it, so it runs on the text
    # between the markers instead, and the marker survives.
    assert prepare("a  [..]  b", (collapse,)).lines == (("a ", " b"),)
    assert ok("a  [..]  b", "a x b", (collapse,))
    # A normalizer never sees the marker's text, so it cannot rewrite it.
    assert prepare("x[..]y", (brackets,)).lines == (("x", "y"),)
    assert ok("x[..]y", "x123y", (brackets,))
    # Text a normalizer produces is never a wildcard: only what the author wrote.
    assert prepare("etc", (dots,)).lines == (("...",),)
    assert not ok("a\netc\nb", "a\nx\nb", (dots,))
    # The path normalizer stops at a marker rather than swallowing it.
    assert prepare("/home/[..]/x/site-packages/torch", ALL).lines == (("/home/", ".../site-packages/torch"),)


def test_a_stated_output_of_nothing_but_wildcards_is_compared_as_plain_text_and_drifts() -> None:
    for stated in ("...", "[..]", "...\n[..]\n...", "  [..]  "):
        assert only_wildcards(stated) and not uses_wildcards(stated)
        verdict = judge(Tags(), result(out("anything at all\n")), stated, ALL)
        assert verdict.status == "drift"
        assert verdict.problems == (
            (
                "the stated output is nothing but wildcards ([..], ...), which would accept any output, "
                "so it is compared as plain text; record the real output, then put wildcards only where it varies"
            ),
        )
    assert verdict.diff.splitlines()[2:] == ["@@ -1 +1 @@", "-  [..]··", "+anything at all"]
    # One character of literal text and the wildcards apply.
    assert uses_wildcards("[..]:[..]") and judge(Tags(), result(out("a:b\n")), "[..]:[..]", ALL).ok


# --- the drift diff -----------------------------------------------------------------

STATED = "started at [..]\n...\nstep 3 of 3\ntotal [..] steps\nresult: 42"
ACTUAL = "started at 12:00:01\nstep 1 of 3\nstep 2 of 3\nstep 3 of 3\ntotal 3 steps\nresult: {}"


def test_a_drift_shows_lines_a_wildcard_accepts_as_context_with_the_stated_line_quoted() -> None:
    assert diff(STATED, ACTUAL.format(42)) == ""
    assert diff(STATED, ACTUAL.format(43)) == (
        "--- stated\n"
        "+++ actual\n"
        "@@ -3,3 +4,3 @@\n"
        " step 3 of 3\n"
        "\\ matched by stated line 4: total [..] steps\n"
        " total 3 steps\n"
        "-result: 42\n"
        "+result: 43"
    )


def test_the_lines_a_dots_line_covers_are_context_after_a_note_naming_their_range() -> None:
    stated = "head [..]\n...\nmiddle\n...\nend"
    actual = "head 1\na\nb\nmiddle\nend?"
    assert diff(stated, actual) == (
        "--- stated\n"
        "+++ actual\n"
        "@@ -2,4 +3,3 @@\n"
        "\\ matched by stated line 2: ... (actual lines 2-3)\n"
        " b\n"
        " middle\n"
        "\\ stated line 4: ... matched no line\n"
        "-end\n"
        "+end?"
    )


def test_a_stated_line_whose_wildcard_no_longer_matches_is_shown_as_written() -> None:
    assert diff("a\nloss: [..] (ok)  \nz", "a\nloss: 3 (failed)  \nz") == (
        "--- stated\n"
        "+++ actual\n"
        "@@ -1,3 +1,3 @@\n"
        " a\n"
        "-loss: [..] (ok)··\n"
        "+loss: 3 (failed)··\n"
        " z"
    )


def test_far_apart_changes_make_separate_hunks_counted_in_stated_lines() -> None:
    stated = "\n".join(["a", "...", "k", "l", "m", "n", "o", "p", "q [..]", "r"])
    actual = "\n".join(["a", "b", "c", "d", "K", "l", "m", "n", "o", "p", "q 1", "R"])
    assert diff(stated, actual).split("\n")[2:] == [
        "@@ -2,4 +3,5 @@",
        "\\ matched by stated line 2: ... (actual lines 2-4)",
        " c",
        " d",
        "-k",
        "+K",
        " l",
        " m",
        "@@ -8,3 +10,3 @@",
        " p",
        "\\ matched by stated line 9: q [..]",
        " q 1",
        "-r",
        "+R",
    ]


def test_the_diff_of_a_stated_output_without_wildcards_is_unchanged() -> None:
    # The plain path (difflib) is kept byte for byte: a literal [..] in the
    # actual output is not a wildcard, and there is no note.
    assert diff("a\nb\nc", "a\n[..]\nc") == "--- stated\n+++ actual\n@@ -1,3 +1,3 @@\n a\n-b\n+[..]\n c"


# --- what record and accept write -------------------------------------------------------


def test_record_keeps_the_authors_wildcards_and_rewrites_only_the_changed_line() -> None:
    written = to_record(STATED, ACTUAL.format(43), ALL)
    assert written == STATED.replace("42", "43")
    assert to_record(written, ACTUAL.format(43), ALL) == written  # it matches: nothing more to do


def test_a_wildcard_line_that_no_longer_matches_is_replaced_by_the_actual_line() -> None:
    stated = "loss: [..] (ok)\n...\nend [..]"
    assert to_record(stated, "loss: 3 (failed)\nx\nend 1", ALL) == "loss: 3 (failed)\n...\nend [..]"


def test_a_dots_line_is_kept_while_one_neighbour_still_anchors_it() -> None:
    # z changed: a still anchors the ... before it
    assert to_record("a\n...\nz", "a\nb\nc\ny", ALL) == "a\n...\ny"
    # at the start or the end, the output's own edge anchors it
    assert to_record("...\nz", "b\nc\ny", ALL) == "...\ny"
    assert to_record("a [..]\nb\n...", "a 1\nB\nc\nd", ALL) == "a [..]\nB\n..."
    # both neighbours changed: what it covered is written out
    assert to_record("x [..]\na\n...\nz\nw", "x 1\nA\nb\nc\nZ\nw", ALL) == "x [..]\nA\nb\nc\nZ\nw"


def test_record_writes_the_display_text_of_lines_without_wildcards() -> None:
    # the kept wildcard line is the author's; other lines are the actual text after display normalizers
    actual = 'File "/venv/lib/python3.11/site-packages/torch/x.py", line 7\nat [..]\nnew'
    written = to_record("head [..]\n" + actual.replace("new", "old"), "head 1\n" + N.for_display(actual, ALL), ALL)
    assert written == 'head [..]\nFile ".../site-packages/torch/x.py", line 7\nat [..]\nnew'


def test_record_never_introduces_a_wildcard() -> None:
    for stated in ("", "old output", "head [..]\nold"):
        with pytest.raises(Unrecordable) as info:
            to_record(stated, "head 1\nvalue: [..]", ALL)
        assert str(info.value) == (
            "line 2 of the output holds '[..]', which a stated output reads as a wildcard, so the recording would "
            "check less than the run printed; print it differently (repr() of it, say), or state that line with "
            "a wildcard of your own ([..] or ...), which record keeps"
        )
    with pytest.raises(Unrecordable, match=r"^line 2 of the output is '\.\.\.', which a stated output reads"):
        to_record("", "waiting\n...\ndone", ALL)
    # The author's own wildcard line covering it is kept, so nothing new is introduced.
    assert to_record("head [..]\nvalue: [..]\nold", "head 1\nvalue: [..]\nnew", ALL) == "head [..]\nvalue: [..]\nnew"
    # An output that is nothing but "..." is compared as plain text: recording it introduces no wildcard.
    assert to_record("", "...", ALL) == "..."
    assert ok("...", "...") and not ok("...", "x")


def test_an_alignment_pairs_every_line_exactly_once() -> None:
    pattern = prepare(STATED, ALL)
    lines = ACTUAL.format(43).split("\n")
    ops = align(pattern, lines)
    assert [op.kind for op in ops] == ["=", "...", "=", "=", "~"]
    covered = [j for op in ops if op.kind in "=~+" for j in [op.j]] + [j for op in ops if op.kind == "..." for j in range(op.j, op.k)]
    assert sorted(covered) == list(range(len(lines)))


# --- pathological cases: linear, no backtracking -------------------------------------------


def timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def test_many_wildcards_against_a_megabyte_finish_fast() -> None:
    # A regular expression (a.*){300}b on one 1 MiB line backtracks for ever;
    # leftmost placement of each piece reads the line once.
    line = "a" * (1 << 20)
    _, one_line = timed(matches, prepare("a[..]" * 300 + "b[..]", ALL), [line])
    # 110,000 distinct lines (1.1 MB) and a block of 500 wildcard lines that
    # never completes: a naive block search tests 500 lines at every position.
    lines = [f"x{i:08d}" for i in range(110_000)]
    pattern = prepare("...\n" + "x[..]\n" * 500 + "y\n...", ALL)
    found, block = timed(matches, pattern, lines)
    # 300 runs between ... lines, all found.
    many = prepare("x00000000\n" + "...\nx[..]5\n" * 300 + "...\nx[..]9", ALL)
    hit, runs = timed(matches, many, lines)
    # A drift after a ...: the diff and what record writes.
    text = "\n".join(lines)
    stated = "x00000000\n...\nx[..]\nx00109999 changed"
    shown, drift = timed(text_diff, stated, text, ALL, "stated", "actual")
    written, record = timed(to_record, stated, text, ALL)
    assert not found and hit
    assert shown.split("\n")[2:] == [
        "@@ -2,3 +109998,3 @@",
        "\\ matched by stated line 2: ... (actual lines 2-109998)",
        " x00109997",
        "\\ matched by stated line 3: x[..]",
        " x00109998",
        "-x00109999 changed",
        "+x00109999",
    ]
    assert written == "x00000000\n...\nx[..]\nx00109999"
    timings = {"one line": one_line, "block": block, "runs": runs, "drift diff": drift, "record": record}
    print("wildcard timings (s):", {k: round(v, 3) for k, v in timings.items()})
    assert max(timings.values()) < 5, timings  # each well under a second on an idle machine


# --- the command line: record, accept, review ---------------------------------------------------

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_cache_dir = {cache!r}
snipcheck_runner = "subprocess"  # these snippets do not use torch: start fast
"""
CLOCK = """\
import time
print("started at", time.time())
for step in range(1, 4):
    print(f"step {step} of 3")
print("total 3 steps")
print("result:", 6 * 7 + OFFSET)
"""


@pytest.fixture
def project(tmp_path: Path, probe_cache: Path) -> Path:
    conf = CONF.format(cache=str(fresh_cache(tmp_path / "cache", probe_cache)))
    page = f"# W\n\n```{{snippet}} w/clock\n{STATED}\n```\n\nProse.\n"
    return write_project(tmp_path / "project", conf, {"docs/index.md": page}, {"w/clock": "OFFSET = 0\n" + CLOCK})


def test_record_round_trip_rewrites_only_the_changed_line_and_keeps_the_wildcards(project: Path) -> None:
    page = project / "docs" / "index.md"
    before = page.read_text()
    first = snipcheck_cli(project, "record")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == ["0 stated output(s) recorded; 1 unchanged or skipped"]
    assert page.read_text() == before  # the time varies, the wildcard covers it

    (project / "snippets" / "w" / "clock.py").write_text("OFFSET = 1\n" + CLOCK)
    second = snipcheck_cli(project, "record")
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == ["docs/index.md:3: w/clock: recorded", "1 stated output(s) recorded; 0 unchanged or skipped"]
    assert page.read_text() == before.replace("result: 42", "result: 43")  # one line, every other byte kept

    third = snipcheck_cli(project, "record")
    assert third.returncode == 0, third.stderr
    assert third.stdout.splitlines() == ["0 stated output(s) recorded; 1 unchanged or skipped"]
    assert page.read_text() == before.replace("result: 42", "result: 43")


def test_record_refuses_an_output_that_would_become_a_wildcard(project: Path) -> None:
    (project / "snippets" / "w" / "marker.py").write_text('print("x = [..]")\n')
    page = project / "docs" / "index.md"
    page.write_text(page.read_text() + "\n```{snippet} w/marker\n```\n")
    done = snipcheck_cli(project, "record", "w/marker")
    assert done.returncode == 1
    assert done.stderr == (
        "docs/index.md:13: w/marker: not recorded: line 1 of the output holds '[..]', which a stated output reads "
        "as a wildcard, so the recording would check less than the run printed; print it differently (repr() of it, "
        "say), or state that line with a wildcard of your own ([..] or ...), which record keeps\n"
    )
    assert [p.stated for p in placements_in(page)] == [STATED, ""]


STAMP = Stamp("3.11.7", "2.15.0+cpu", "CPU", "Linux x86_64")


def git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def drifted_report(project: Path, actual: str, schema: str = "") -> Path:
    """A verify report in which w/clock drifted to ``actual``, and the project committed.

    :param schema: the report's schema, if not the current one."""
    snippet = SnippetReport("w/clock", "docs/index.md", 3, "drifted", diff="(a diff)", stated=STATED, actual=actual)
    path = project.parent / "report.json"
    data = Report(STAMP, "torch 2.13.0", (1, 1), (snippet,)).to_json()
    path.write_text(json.dumps(dict(data, schema=schema or data["schema"])))
    (project / "pyproject.toml").write_text('[tool.snipcheck]\nreference-torch = "2.13.0"\n')
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    return path


def cli(project: Path, *args: str, answers: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(project), *args],
        input=answers, cwd=project, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("command", [["accept"], ["review"]])
def test_accept_and_review_keep_the_authors_wildcards(project: Path, command: list[str]) -> None:
    report = drifted_report(project, ACTUAL.format(43).replace("12:00:01", "99"))
    done = cli(project, *command, "--report", str(report), answers="a\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.stated for p in placements_in(project / "docs" / "index.md")] == [STATED.replace("42", "43")]
    assert 'reference-torch = "2.15.0"' in (project / "pyproject.toml").read_text()


@pytest.mark.parametrize("schema", ["snipcheck-verify/2", "snipcheck-verify/3"])
def test_accept_skips_an_output_that_would_become_a_wildcard_and_keeps_the_pin(project: Path, schema: str) -> None:
    report = drifted_report(project, ACTUAL.format("[..]"), schema)
    done = cli(project, "accept", "--report", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    said = (
        "skipped w/clock: docs/index.md:3: not accepted: line 6 of the output holds '[..]', which a stated output reads "
        "as a wildcard, so the recording would check less than the run printed; print it differently (repr() of it, "
        "say), or state that line with a wildcard of your own ([..] or ...), which record keeps"
    )
    if schema == "snipcheck-verify/3":  # such a report writes what varies from run to run as [..]
        said += (
            " (a verify report file writes each part of an output that varies from run to run as [..]; accept "
            "without --report, which runs the snippet, or record it)"
        )
    assert done.stderr == said + "\n"
    assert "the reference pin stays: 1 drifted output(s) not accepted (w/clock)" in done.stdout
    assert [p.stated for p in placements_in(project / "docs" / "index.md")] == [STATED]


# --- a Sphinx build ----------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="wildcards")
def test_a_build_passes_a_stated_output_with_wildcards_and_drifts_when_its_literal_part_changes(
    app, make_app, app_params
) -> None:
    app.build()
    assert snipcheck_warnings(app.warning.getvalue()) == []
    # The page shows what the run printed, never the wildcards.
    shown = html(Path(app.outdir) / "index.html").find(id="snippet-wild-clock").find(class_="snipcheck-output").get_text()
    assert re.search(r"started at \d+\.\d+\nstep 1 of 3\n", shown) and "[..]" not in shown

    srcdir = Path(app.srcdir)
    snippet = srcdir / "snippets" / "wild" / "clock.py"
    snippet.write_text(snippet.read_text().replace("6 * 7", "6 * 7 + 1"))
    app.cleanup()
    args, kwargs = app_params
    again = make_app(*args, **kwargs)
    again.build()
    index = srcdir / "index.md"
    line = directive_line(index, "wild/clock")
    report = Path(again.config.snipcheck_report_dir)
    assert snipcheck_warnings(again.warning.getvalue()) == [
        (
            f"{index}:{line}: WARNING: snippet 'wild/clock': the stated output differs from the actual output:\n"
            f"--- stated (index.md:{line})\n"
            f"+++ actual ({environment_label()})\n"
            "@@ -3,3 +4,3 @@\n"
            " step 3 of 3\n"
            "\\ matched by stated line 4: total [..] steps\n"
            " total 3 steps\n"
            "-result: 42\n"
            "+result: 43\n"
            f"full diff: {report / 'diffs' / 'wild__clock.diff'}\n"
            "if the new output is right, record it: snipcheck record wild/clock [snipcheck.drift]"
        )
    ]
