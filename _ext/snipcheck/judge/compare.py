"""Turn a run result into terminal text and judge it against the stated output.

The *terminal text* of a run is what a terminal would show: stdout and stderr
interleaved in their true order, carriage-return progress bars collapsed to
what stays visible, ANSI escape codes removed, and a marker where output was
cut at the output limit.  The stated output in the page source is compared
with it after the configured normalizers, exactly otherwise (trailing spaces
included; a single final newline is not significant, since a directive body
cannot express it: the terminal text has it removed, and a stated output
may carry one newline more).

A stated output may hold **wildcards** (trycmd's and snapbox's syntax; see
:mod:`snipcheck.judge.wildcards`):

* ``[..]`` inside a line matches any text within that line, possibly none,
  never a line break;
* a line that is exactly ``...`` matches any number of whole lines, zero
  included.

They apply only to the stated output, never to the actual one, and only
after the normalizers: both sides are normalized first (a normalizer never
sees or removes a marker), then the markers are matched on the normalized
stated text.  A stated output made of nothing but wildcards (and whitespace)
would accept anything, so it is compared as plain text, and its drift says
why.  When a stated output with wildcards drifts, the diff shows each actual
line a stated line still accepts as context, after a ``\\ matched by stated
line N: ...`` note quoting that stated line (:mod:`snipcheck.judge.alignment`).

Pure core: standard library and :mod:`snipcheck.model`,
:mod:`snipcheck.judge.normalize`, :mod:`snipcheck.judge.wildcards`,
:mod:`snipcheck.judge.alignment`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from snipcheck.judge import alignment
from snipcheck.judge.normalize import Normalizer, for_compare, for_display
from snipcheck.judge.wildcards import only_wildcards, uses_wildcards
from snipcheck.model import Event, RunResult, Tags
from snipcheck.sources.tags import WALL_FACTOR

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


_SGR = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor moves, OSC titles)."""
    return _ANSI.sub("", text)


def keep_colours(text: str) -> str:
    """Remove every escape sequence except colours (SGR, ``ESC [ ... m``),
    which the page renders; cursor moves, erases and window titles have no
    place in a static page.  A control character left over (a lone BEL, the
    ESC of a malformed sequence) stays, as in the terminal text: the page
    shows it as an escape (:func:`snipcheck.report.display.visible_keeping_colours`)."""
    return _ANSI.sub(lambda m: m.group(0) if _SGR.fullmatch(m.group(0)) else "", text)


def collapse_cr(text: str) -> str:
    """Apply carriage returns as a terminal does: text after ``\\r`` overwrites
    the line from its start, character by character."""
    if "\r" not in text:
        return text
    out = []
    for line in text.split("\n"):
        if "\r" not in line:
            out.append(line)
            continue
        cells: list[str] = []
        for part_no, part in enumerate(line.split("\r")):
            if part_no == 0:
                cells = list(part)
                continue
            for i, ch in enumerate(part):
                if i < len(cells):
                    cells[i] = ch
                else:
                    cells.append(ch)
        out.append("".join(cells))
    return "\n".join(out)


def truncation_marker(dropped: int, limit: int, stopped: bool = False) -> str:
    """The line appended where output was cut (part of the compared text).

    :param stopped: the run was stopped there (:attr:`RunResult.stopped_by_output`).
    """
    if stopped:
        return f"[snipcheck: output limit of {limit:,} bytes reached; stopped after {dropped:,} more bytes]\n"
    return f"[snipcheck: output limit of {limit:,} bytes reached; {dropped:,} more bytes not shown]\n"


def truncation_advice(result: RunResult) -> str:
    """What a truncated run means and how to raise its limit (``""`` if the
    output was not cut): the limit, the bytes dropped, and a round
    ``output-limit`` that would keep them (the next power of two)."""
    if not result.truncated_bytes:
        return ""
    limit = 1
    while limit < result.output_limit + result.truncated_bytes:
        limit *= 2
    if result.stopped_by_output:
        return (
            f"its output passed the output limit of {result.output_limit:,} bytes by {result.truncated_bytes:,} "
            "more, so the run was stopped there: how much more it would have printed, and how it would have "
            "ended, is unknown; print less, or raise the limit for this snippet in its tag block "
            f"(output-limit = {limit * 2} or more)"
        )
    return (
        f"its output reached the output limit of {result.output_limit:,} bytes and "
        f"{result.truncated_bytes:,} more bytes were not shown or checked; print less, or raise the "
        f"limit for this snippet with output-limit = {limit} in its tag block"
    )


def display_events(result: RunResult, normalizers: Sequence[Normalizer]) -> tuple[Event, ...]:
    """Events as the page shows them: carriage returns applied, display
    normalizers applied, colour codes kept (the page renders them as colour)
    and every other escape sequence removed."""
    return tuple(
        Event(e.stream, e.kind, for_display(keep_colours(collapse_cr(e.text)), normalizers)) for e in result.events
    )


def as_terminal(stated: str) -> str:
    """A stated output as a terminal would show it, as the actual output is
    compared (:func:`terminal_text`): escape sequences dropped, carriage
    returns applied (a notebook stores a run's output as it was written)."""
    return strip_ansi(collapse_cr(stated)) if "\x1b" in stated or "\r" in stated else stated


def terminal_text(result: RunResult, normalizers: Sequence[Normalizer] = ()) -> str:
    """The run's output as a terminal shows it, after display normalizers.

    This is the text the record and accept commands write into the page
    source, without its final newline.
    """
    text = strip_ansi(collapse_cr("".join(e.text for e in result.events)))
    if result.truncated_bytes:
        if text and not text.endswith("\n"):
            text += "\n"
        text += truncation_marker(result.truncated_bytes, result.output_limit, result.stopped_by_output)
    return for_display(text, normalizers).removesuffix("\n")


@dataclass(frozen=True)
class Verdict:
    """The judgement on one snippet.

    :param status: ``"ok"``, ``"drift"`` (output or expected outcome differs),
        ``"exec"`` (the run failed in a way its tags do not expect) or
        ``"timeout"``.
    :param problems: one sentence per problem, each saying what to do.
    :param diff: unified diff stated → actual after all normalizers, or ``""``.
    :param actual: the terminal text after display normalizers.
    :param ended_wrong: the run timed out or ended differently from its
        ``expect`` tag (as opposed to only printing something else).
    """

    status: str
    problems: tuple[str, ...]
    diff: str
    actual: str
    ended_wrong: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def ending(result: RunResult) -> str:
    """How a run ended, as the end of a sentence about it: ``"exited
    normally (status 0)"``, ``"exited with status 3"``, ``"was killed by
    SIGKILL"``, ``"raised KeyError: 'x'"`` or ``"timed out after 2.0 s"``."""
    exc = result.exception
    if result.forged:
        return "marked the end of a cell itself (and was stopped)"
    if result.timed_out:
        reached = {"cpu": " (its CPU-time limit)", "wall": " (its wall-clock cap)"}.get(result.limit, "")
        return f"timed out after {result.duration:.1f} s{reached}"
    if result.stopped_by_output:
        return "was stopped when its output passed the output limit"
    if result.signal:
        return f"was killed by {result.signal}"
    if exc is not None:
        return f"raised {exc.type}: {_first_line(exc.message)}"
    if result.exit_status == 0:
        return "exited normally (status 0)"
    return f"exited with status {result.exit_status}"


#: Exceptions that end a chain's process even when a cell's tags expect them.
_ENDS_INTERPRETER = ("KeyboardInterrupt", "SystemExit")


def outcome_problem(tags: Tags, result: RunResult) -> tuple[str, str] | None:
    """Check the run's ending against the ``expect`` tag, and, for a cell of
    a chain, that the process went on after it (:attr:`RunResult.ended_chain`).

    :return: ``None`` if it ended as expected, else ``(status, sentence)``.
    """
    if result.forged:
        return "exec", (
            f"the snippet's process marked the end of a cell itself: it {result.forged}; a cell's output must "
            "come from its own code, so snipcheck stopped the run there and takes no output of it from this cell "
            "on: remove the code that reaches into snipcheck's runner"
        )
    if result.timed_out or result.stopped_by_output:
        return None  # reported separately: the run did not end by itself
    found = _expect_problem(tags, result)
    exc = result.exception
    if result.ended_chain and (found is None or exc is None or exc.type in _ENDS_INTERPRETER):
        # Whatever its tags expect: an ending that is right for a script
        # alone leaves the cells after it unchecked (issue 23, item 1).  An
        # exception that python need not end with keeps its own sentence:
        # expecting it (the hint there) lets the chain go on.
        if tags.expect.startswith(("exit ", "signal ")):
            what = "an expect tag of an exit or a signal fits the chain's last cell only; move this snippet there, or"
        else:
            what = "end the process in the chain's last cell only, or take this snippet"
        return "exec", (
            f"the snippet {ending(result)} and so ended its chain's process before the cells after it could run "
            f"({', '.join(result.ended_chain)}); a cell of a chain must let the process go on: {what} "
            "out of the chain (its chain option left empty)"
        )
    return found


def _expect_problem(tags: Tags, result: RunResult) -> tuple[str, str] | None:
    """:func:`outcome_problem` for the ``expect`` tag alone (not timed out)."""
    exc = result.exception
    expect = tags.expect
    ended = ending(result)
    if expect == "ok":
        if result.exit_status == 0 and not result.signal:
            return None
        hint = f'expect = "{exc.type}"' if exc is not None else (
            f'expect = "signal {result.signal}"' if result.signal else f'expect = "exit {result.exit_status}"'
        )
        files = ""
        if exc is not None and exc.type in ("FileNotFoundError", "builtins.FileNotFoundError"):
            # a run starts in a folder of its own: a file beside the page or the script is not there
            files = (
                "; a run starts in a folder of its own, with only the files it declares: to read a file beside "
                "it, declare it (depends in its tag block; a notebook's: its metadata snipcheck.depends, or "
                "snipcheck_depends in conf.py)"
            )
        return "exec", (
            f"the snippet {ended}, but its tags expect a normal exit; fix the code{files}, "
            f"or if this is what the page means to show, add {hint} to its tag block"
        )
    if expect.startswith("exit "):
        if result.exit_status == int(expect[5:]) and not result.signal:
            return None
    elif expect.startswith("signal "):
        if result.signal == expect[7:]:
            return None
    elif exc is not None and _type_matches(expect, exc.type) and (
        result.exit_status not in (0, None)
        # An uncaught KeyboardInterrupt ends python by SIGINT (shell status 130).
        or (result.signal == "SIGINT" and exc.type == "KeyboardInterrupt")
    ):
        return None
    return "drift", f"expected the snippet to end with {expect}, but it {ended}"


def judge(
    tags: Tags,
    result: RunResult,
    stated: str,
    normalizers: Sequence[Normalizer],
    *,
    stated_label: str = "stated",
    actual_label: str = "actual",
    stored: str = "",
) -> Verdict:
    """Compare a run with the stated output and the ``expect`` tag.

    :param stated: the directive body (the stated output); read as a
        terminal shows it, as the actual output is (colours and other escape
        sequences dropped, carriage returns applied: a notebook stores them
        as the run wrote them).
    :param stated_label: names the stated side in the diff (file and line).
    :param actual_label: names the actual side (e.g. the torch version).
    :param stored: see :func:`snipcheck.judge.verdict.check`.
    """
    actual = terminal_text(result, normalizers)
    stated = as_terminal(stated)
    problems: list[str] = []
    status = "ok"
    ended_wrong = False
    if result.timed_out:
        status, ended_wrong = "timeout", True
        problems.append(timeout_problem(result))
    else:
        found = outcome_problem(tags, result)
        if found:
            status, sentence = found
            ended_wrong = True
            problems.append(sentence)
    diff = ""
    if not result.timed_out:
        diff = text_diff(
            stated, actual, normalizers, stated_label, actual_label, wildcards=stored != "literal", exact=bool(stored)
        )
        if diff:
            if status == "ok":
                status = "drift"
            if only_wildcards(stated):
                problems.append(
                    "the stated output is nothing but wildcards ([..], ...), which would accept any output, "
                    "so it is compared as plain text; record the real output, then put wildcards only where it varies"
                )
            elif stated.strip():
                problems.append(DIFFERS)
            else:
                problems.append(NO_STATED)
    return Verdict(status, tuple(problems), diff, actual, ended_wrong)


#: What a verdict says of a stated output that differs from the actual one.
DIFFERS = "the stated output differs from the actual output"
#: What a verdict says of an empty stated output (``record``, which is what it advises, leaves it out of its own refusals).
NO_STATED = "no stated output yet: record it from a real run"


def text_diff(
    stated: str,
    actual: str,
    normalizers: Sequence[Normalizer],
    stated_label: str,
    actual_label: str,
    *,
    masking: bool = True,
    wildcards: bool = True,
    exact: bool = False,
) -> str:
    """Unified diff of the two texts after every normalizer, ``""`` if equal.

    With ``masking=False`` only the display normalizers apply: the diff then
    shows what the compare-only normalizers hide.  Trailing whitespace on
    changed lines is shown as ``·`` so that a diff of invisible characters is
    still readable.  A ``stated`` text with wildcards is matched with them
    (see the module docstring) unless ``wildcards=False``, for comparing two
    actual outputs (or a notebook's stored text that holds markers).  A
    stated text one newline longer than the actual one is equal (a directive
    body ends with a line break) unless ``exact`` (a notebook's stored
    outputs: what a run printed, each newline of it).
    """
    if wildcards and uses_wildcards(stated):
        return alignment.diff(stated, actual, normalizers, stated_label, actual_label, masking=masking)
    prepare = for_compare if masking else for_display
    a = prepare(stated, normalizers)
    b = prepare(actual, normalizers)
    if a == b + "\n" and not exact:
        a = b  # a directive body may end with one newline more than the terminal text
    if a == b:
        return ""
    # split("\n"), not splitlines(): a trailing blank line is a difference too
    lines = difflib.unified_diff(
        a.split("\n"), b.split("\n"), fromfile=stated_label, tofile=actual_label, lineterm="", n=2
    )
    out = []
    for line in lines:
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            stripped = line.rstrip(" \t")
            line = stripped + "·" * (len(line) - len(stripped))
        out.append(line)
    return "\n".join(out)


def masking_normalizers(stated: str, actual: str, normalizers: Sequence[Normalizer]) -> tuple[str, ...]:
    """Names of the compare-only normalizers without which ``stated`` and
    ``actual`` would differ (empty if they are equal as displayed).

    Tells a maintainer that "unchanged" relied on masking, e.g. torch's own
    line numbers moving between releases.
    """
    a, b = stated, actual
    if a == b + "\n":
        a = b

    def same(normalizers: Sequence[Normalizer], masking: bool) -> bool:
        if uses_wildcards(a):
            return alignment.holds(a, b, normalizers, masking=masking)
        prepare = for_compare if masking else for_display
        return prepare(a, normalizers) == prepare(b, normalizers)

    if same(normalizers, False):
        return ()
    needed = []
    for n in normalizers:
        if n.display:
            continue
        if not same([m for m in normalizers if m is not n], True):
            needed.append(n.name)
    return tuple(needed)


#: The ``expect`` of a tutorial script's cell tagged ``raises-exception``
#: (jupytext, nbclient): it may end with an exception of any type, and its
#: chain goes on (:attr:`snipcheck.sources.placement.CodeBlock.expect`).
ANY_EXCEPTION = "exception"


def timeout_problem(result: RunResult) -> str:
    """What a run that timed out did, which limit it reached, and which to raise."""
    if result.limit == "wall":
        return (
            f"timed out after {result.duration:.1f} s of wall-clock time, the cap of a run that waits "
            f"({WALL_FACTOR:g} times its timeout, which counts CPU seconds), and was killed with its "
            "processes; it spent that time waiting (a sleep, I/O, a lock, a process it started), not "
            "computing; the output printed until then is shown; if the wait is meant, raise 'timeout' in "
            "its tag block (or snipcheck_timeout): the cap grows with it"
        )
    counted = "CPU seconds of its processes" if result.limit == "cpu" and result.cpu is not None else "seconds"
    return (
        f"timed out after {result.duration:.1f} s: it reached its timeout, counted in {counted}, and was "
        "killed with its processes; the output printed until then is shown; make it faster or raise "
        "'timeout' in its tag block (or snipcheck_timeout)"
    )


def _type_matches(expected: str, actual: str) -> bool:
    if expected == ANY_EXCEPTION:
        return actual not in ("SystemExit", "KeyboardInterrupt")
    return expected == actual or actual.rsplit(".", 1)[-1] == expected


def _first_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 160 else first[:157] + "..."
