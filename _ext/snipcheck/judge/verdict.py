"""The check step: what one placed snippet's outcome means, decided once.

Every front end — the Sphinx build (:mod:`snipcheck.sphinxext.results`),
``verify`` (:mod:`snipcheck.report.verify`), ``record``
(:mod:`snipcheck.app.cli`) and the pytest plugin
(:mod:`snipcheck.app.pytest_plugin`) — hands the executor's
:class:`~snipcheck.model.Outcome` and the stated output to :func:`check` and
presents the :class:`Finding` it returns, mapping :class:`Status` to its own
words through one table (:data:`snipcheck.report.verify.WORDS`,
:data:`snipcheck.sphinxext.results.WORDS`); none of them decides again what a
result means.

The order of the questions is the order of :class:`Status`: a snippet without
a result was not loaded or run (``error``), stopped by its chain
(``stopped``) or not run for a requirement (``not-run``); a result is judged
by its ending first (``timeout``, ``failed``, ``ended-wrong``), then by
whether its output was cut at the output limit (``truncated``: what was cut
was not checked, so it is never ``ok`` and never recorded), then by its text
(``drift``) and its figures (``figures``).

A drift whose every changed line many snippets share (a new warning at
``import torch``) is *environment-wide*: :func:`environment_wide` finds those
lines over one run of many snippets, which the check of one snippet cannot.

Pure core: standard library, :mod:`snipcheck.model` and the judge layer
(:mod:`snipcheck.judge.compare`, :mod:`snipcheck.judge.figures`,
:mod:`snipcheck.judge.normalize`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from snipcheck.judge import figures as figure_files
from snipcheck.judge.compare import (
    DIFFERS,
    Verdict,
    as_terminal,
    judge,
    terminal_text,
    text_diff,
    truncation_advice,
)
from snipcheck.judge.normalize import Normalizer, for_display
from snipcheck.model import Outcome, RunResult, Tags


class Status(enum.StrEnum):
    """What the check step found for one placed snippet: one meaning a value."""

    #: It ran, ended as its tags expect, and its output and figures are the stated ones.
    OK = "ok"
    #: It ended as its tags expect, but its output differs from the stated one
    #: (its figures may differ too).
    DRIFT = "drift"
    #: It ended as its tags expect and its output is the stated one, but a
    #: figure differs from its stated image, or has none yet.
    FIGURES = "figures"
    #: Its output reached the output limit (or went so far past it that the
    #: run was stopped): what was cut was not checked, whatever the rest says.
    TRUNCATED = "truncated"
    #: Its tags expect an exception, an exit status or a signal, and it ended otherwise.
    ENDED_WRONG = "ended-wrong"
    #: It failed in a way no tag allows: it crashed or raised where its tags
    #: expect a normal exit, ended its chain's process while cells after it
    #: were due, or marked the end of a cell itself.
    FAILED = "failed"
    #: It ran past its timeout and was killed.
    TIMEOUT = "timeout"
    #: Not run: an earlier cell of its chain failed or ended the chain's
    #: process first.  Not an environment's lack: it never counts as passing.
    STOPPED = "stopped"
    #: Not run: this environment lacks a requirement (its own, or that of an
    #: earlier cell of its chain).
    NOT_RUN = "not-run"
    #: It could not be loaded (a bad tag block, a missing file) or its run could not start.
    ERROR = "error"

    @property
    def passes(self) -> bool:
        """Whether it leaves a check green: it held, or this environment cannot run it."""
        return self in (Status.OK, Status.NOT_RUN)

    @property
    def new_output(self) -> bool:
        """Whether it ran as its tags expect with a new output that ``record``
        or ``accept`` may write: its text (:attr:`DRIFT`) or only its figures
        (:attr:`FIGURES`)."""
        return self in (Status.DRIFT, Status.FIGURES)


#: The statuses of a result judged by its ending: never recorded, never accepted.
ENDED_BADLY = frozenset({Status.TIMEOUT, Status.FAILED, Status.ENDED_WRONG})


@dataclass(frozen=True)
class Finding:
    """What :func:`check` found for one placed snippet.

    :param status: the verdict.
    :param notes: for :attr:`Status.ERROR`, why (one sentence each); for
        :attr:`Status.STOPPED`, the sentence that names the cell that
        stopped it (:attr:`~snipcheck.model.Outcome.stopped`).
    :param missing: for :attr:`Status.NOT_RUN`, the unmet requirements.
    :param text: the comparison of the run's text with the stated output
        (``None`` without a result).
    :param figures: one check per figure of the run, in order.
    :param figure_problems: one sentence per figure that is not ok, naming
        its stated file relative to the pages' source directory.
    :param truncation: what the output limit cut and how to raise it
        (:func:`snipcheck.judge.compare.truncation_advice`), ``""`` if nothing was cut.
    """

    status: Status
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    text: Verdict | None = None
    figures: tuple[figure_files.FigureCheck, ...] = ()
    figure_problems: tuple[str, ...] = ()
    truncation: str = ""

    @property
    def diff(self) -> str:
        """Unified diff stated → actual after every normalizer (``""`` when equal or not run)."""
        return self.text.diff if self.text is not None else ""

    @property
    def figures_changed(self) -> bool:
        """Whether a figure differs from its stated image or has none yet."""
        return any(not c.ok for c in self.figures)

    def problems(self, figure_problems: Sequence[str] | None = None) -> tuple[str, ...]:
        """Every problem, one sentence each: how it ended and how its text
        differs, its figures, what the output limit cut; or why it has no
        result (empty for :attr:`Status.NOT_RUN`, whose ``missing`` says it).

        :param figure_problems: the figures' sentences in a front end's own
            words (the build's name the images it saved); default :attr:`figure_problems`.
        """
        if self.text is None:
            return self.notes
        drawn = tuple(self.figure_problems if figure_problems is None else figure_problems)
        return self.text.problems + drawn + ((self.truncation,) if self.truncation else ())


def unloadable(message: str) -> Finding:
    """The finding for a placement whose snippet could not be loaded."""
    return Finding(Status.ERROR, notes=(message,))


def check(
    snippet_id: str,
    tags: Tags,
    outcome: Outcome,
    stated: str,
    normalizers: Sequence[Normalizer],
    srcdir: Path,
    *,
    stated_label: str = "stated",
    actual_label: str | None = None,
    compared: bool = True,
    stored: str = "",
    stderr: str | None = None,
    rest: str | None = None,
) -> Finding:
    """Judge one placed snippet's outcome: the one place that decides its status.

    :param snippet_id: the snippet id (names its stated figures).
    :param tags: the snippet's tags (what it is expected to do).
    :param outcome: what the executor has for it.
    :param stated: the stated output (the directive body).
    :param normalizers: the project's normalizers.
    :param srcdir: the pages' source directory, where the stated figures are
        (:func:`snipcheck.judge.figures.stated_path`).
    :param stated_label: names the stated side in the diff (file and line).
    :param actual_label: names the actual side; default ``actual (<the run's stamp>)``.
    :param compared: ``False`` for a notebook cell whose output is run but not
        compared (nbval's ``NBVAL_IGNORE_OUTPUT``,
        :func:`snipcheck.sources.notebook_cells.compared`): only how it ended
        is judged, as if it stated what it printed.
    :param stored: how the stated output is read: ``""`` as a page states it,
        ``"exact"`` as an ``.ipynb`` cell's stored outputs (what a run printed:
        to its last newline), ``"literal"`` the same and without wildcards
        (:data:`snipcheck.sources.notebook_cells.STORED`).
    :param stderr: for an ``.ipynb`` cell, the text its stored ``stderr``
        streams hold: an output that matches is a drift all the same when
        the run wrote other text to stderr (the same text on stdout, say,
        which the notebook shows as stderr); ``None`` for any other snippet.
    :param rest: for an ``.ipynb`` cell, what its other stored outputs state
        (stdout, shown values, figures, error): Jupyter stores what a cell
        writes to stdout and stderr in time order, where the run gives its
        stdout before its stderr; an output that differs only in how the two
        streams interleave holds when each stream holds on its own.
    """
    result = outcome.result
    if outcome.origin == "error":
        return Finding(Status.ERROR, notes=outcome.notes)
    if result is None and outcome.stopped:
        return Finding(Status.STOPPED, notes=(outcome.stopped,))
    if result is None:
        return Finding(Status.NOT_RUN, missing=outcome.missing)
    label = actual_label if actual_label is not None else f"actual ({result.stamp.label()})"
    if not compared:
        stated = terminal_text(result, normalizers)
    text = judge(tags, result, stated, normalizers, stated_label=stated_label, actual_label=label, stored=stored)
    if stderr is not None and compared and text.ok:
        text = streams_differ(text, result, stderr, normalizers, stated_label, label, stored)
    elif stderr is not None and rest is not None and compared and text.problems == (DIFFERS,) and interleaved(
        result, stderr, rest, normalizers, stored
    ):
        text = dataclasses.replace(text, status="ok", problems=(), diff="")
    found = figure_files.check(snippet_id, result.figures, srcdir)
    drawn = tuple(
        # a notebook's stated images are its stored outputs (srcdir holds a copy made for the check)
        figure_files.sentence(c, f"(the notebook's stored figure {c.number})" if stored else c.stated.relative_to(srcdir).as_posix())
        for c in found if not c.ok
    )  # fmt: skip
    truncation = truncation_advice(result)
    if text.status == "timeout":
        status = Status.TIMEOUT
    elif text.status == "exec":
        status = Status.FAILED
    elif text.ended_wrong:
        status = Status.ENDED_WRONG
    elif truncation:
        status = Status.TRUNCATED
    elif not text.ok:
        status = Status.DRIFT
    elif drawn:
        status = Status.FIGURES
    else:
        status = Status.OK
    return Finding(status, text=text, figures=found, figure_problems=drawn, truncation=truncation)


#: Said of a notebook cell whose output holds but whose stderr does not.
STREAMS = (
    "what it wrote to stderr is not what the notebook stores as its stderr streams (text moved between stdout "
    "and stderr); if the new output is right, run the cell in Jupyter and save the notebook (record cannot move "
    "text between a notebook's streams)"
)


def streams_differ(
    text: Verdict, result: RunResult, stderr: str, normalizers: Sequence[Normalizer], stated_label: str,
    actual_label: str, stored: str,
) -> Verdict:
    """``text`` (a verdict whose output holds), or a drift when the run's
    stderr differs from ``stderr`` (:func:`stderr_diff`): its diff is that of the two stderrs."""
    diff = stderr_diff(result, stderr, normalizers, stated_label, actual_label, stored)
    if not diff:
        return text
    return dataclasses.replace(text, status="drift", problems=(*text.problems, STREAMS), diff=diff)


def interleaved(result: RunResult, stderr: str, rest: str, normalizers: Sequence[Normalizer], stored: str) -> bool:
    """Whether a notebook cell's output differs only in how its stdout and
    stderr interleave: its stderr holds ``stderr`` and the rest of its
    output holds ``rest``, each on its own (:func:`stderr_diff`, :func:`rest_diff`)."""
    return not stderr_diff(result, stderr, normalizers, stored=stored) and not rest_diff(result, rest, normalizers, stored)


def rest_diff(result: RunResult, rest: str, normalizers: Sequence[Normalizer], stored: str = "exact") -> str:
    """The diff of ``rest`` (what a notebook cell's stored outputs state but
    its stderr streams) and the run's output without what it wrote to stderr
    (its stdout and its traceback kept), both as a terminal shows them."""
    written = "".join(e.text for e in result.events if e.stream != "stderr" or e.kind == "traceback")
    actual = for_display(as_terminal(written), normalizers).removesuffix("\n")
    return text_diff(as_terminal(rest), actual, normalizers, "stated", "actual", wildcards=stored != "literal", exact=True)


def stderr_diff(
    result: RunResult, stderr: str, normalizers: Sequence[Normalizer], stated_label: str = "stated",
    actual_label: str = "actual", stored: str = "exact",
) -> str:
    """The diff of ``stderr`` (what a notebook cell's stored stderr streams
    hold) and the run's stderr (its text and warnings, not its traceback,
    which a notebook stores as an error), both as a terminal shows them;
    ``""`` when they are equal."""
    written = "".join(e.text for e in result.events if e.stream == "stderr" and e.kind != "traceback")
    actual = for_display(as_terminal(written), normalizers).removesuffix("\n")
    return text_diff(
        as_terminal(stderr), actual, normalizers, f"{stated_label} stderr", f"{actual_label} stderr",
        wildcards=stored != "literal", exact=True,
    )  # fmt: skip


#: A changed line is environment-wide when it appears in the diffs of at least
#: this share of the snippets that ran (and in at least two of them).
ENV_WIDE_SHARE = 0.5


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """The ``(sign, text)`` changed lines of a unified diff (headers skipped)."""
    out = []
    for line in diff.split("\n"):  # as the diff was written: a form feed inside a line is no line end
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith(("+", "-")):
            out.append((line[0], line[1:]))
    return out


def environment_wide(
    ran: Sequence[tuple[str, str, bool]],
) -> tuple[dict[tuple[str, str], list[str]], tuple[bool, ...]]:
    """Find the environment-wide changes of one run of many snippets.

    :param ran: ``(snippet id, diff, drifted)`` of each snippet that ran,
        ``drifted`` true for a :attr:`Status.DRIFT` (or its front end's word for it).
    :return: the changed lines at least :data:`ENV_WIDE_SHARE` of ``ran``
        share (and two at least; blank ones never count), each with the ids
        whose diff holds it, in order of first appearance; and, for each of
        ``ran``, whether it drifted by such lines only.
    """
    seen: dict[tuple[str, str], list[str]] = {}  # insertion order = first appearance
    for snippet_id, diff, _ in ran:
        for change in dict.fromkeys(diff_lines(diff)):
            seen.setdefault(change, []).append(snippet_id)
    threshold = max(2, int(len(ran) * ENV_WIDE_SHARE + 0.999))
    wide = {c: ids for c, ids in seen.items() if len(ids) >= threshold and c[1].strip()}
    only = tuple(
        drifted and bool(diff) and all(c in wide for c in diff_lines(diff)) for _, diff, drifted in ran
    )
    return wide, only
