"""``record``'s rules: what becomes of a run's output, as a :class:`~snipcheck.pending.change.Change`.

:func:`record_change` decides, for one placement and the outcome of its
snippet's run (here, from the cache, or from a shard), whether its actual
output may become the stated one, and says why not when it may not:

* a run that could not start, a cell its chain stopped, a run that ended
  otherwise than its ``expect`` tag says, or an output cut at its limit is
  refused; a snippet this environment lacks a requirement for is skipped;
* an output that would turn into a wildcard (:func:`snipcheck.pending.recording.to_record`), is refused;
* an output that varies between runs, or with the hash seed, is refused
  (the stability re-runs of :class:`snipcheck.pending.variation.Rerun`), and
  so are figures that differ between two runs;
* when only the figures changed, the page keeps its text and the figures
  become the stated files.

Nothing here prints or writes: the command line says what each change is
(:mod:`snipcheck.app.cli.record`) and :func:`snipcheck.pending.commit.commit`
writes the accepted ones.

Pure core: :mod:`snipcheck.judge`, :mod:`snipcheck.sources`,
:mod:`snipcheck.pending`; the re-runs come in as an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from snipcheck.judge import figures as figure_files
from snipcheck.judge.compare import NO_STATED, judge
from snipcheck.judge.normalize import Normalizer
from snipcheck.judge.verdict import ENDED_BADLY, STREAMS, Status, check
from snipcheck.model import Outcome, RunResult, Snippet
from snipcheck.pending import change, notebook_write
from snipcheck.pending.change import Change
from snipcheck.pending.recording import Unrecordable, to_record
from snipcheck.pending.variation import VARIES, for_notebook
from snipcheck.sources import notebook_cells
from snipcheck.sources.placement import Placement

#: What every refusal of ``record`` starts with.
NOT_RECORDED = "not recorded: "


class Again(Protocol):
    """The stability re-runs (:class:`snipcheck.pending.variation.Rerun`)."""

    def problem(self, snippet: Snippet, body: str, written: str = ...) -> str:
        """Why ``body`` may not be written as ``snippet``'s stated output, or ``""``."""

    def other(self, snippet: Snippet) -> RunResult | None:
        """``snippet``'s run under another hash seed."""


def record_change(
    placement: Placement,
    snippet: Snippet,
    outcome: Outcome,
    normalizers: Sequence[Normalizer],
    srcdir: Path,
    again: Again | None,
) -> Change | None:
    """What ``record`` makes of ``outcome``, the run of ``placement``'s snippet.

    :param snippet: the snippet as loaded (its tags say what it must end with).
    :param normalizers: the project's normalizers.
    :param srcdir: the pages' source directory (where the stated figures are).
    :param again: the stability re-runs; ``None`` for a shard's result, which
        cannot run again here (the next merged build compares it).
    :return: the change, or ``None`` when the stated output and figures hold.
    """
    p = placement
    notebook = p.markup == notebook_write.MARKUP
    if p.figures_dir:  # a notebook cell's stated images: its stored figures, copied by the index's read
        srcdir = Path(p.figures_dir)
    found = check(
        p.snippet_id, snippet.tags, outcome, p.stated, normalizers, srcdir, actual_label="actual",
        compared=notebook_cells.compared(p), stored=notebook_cells.stored(p), stderr=notebook_cells.stated_stderr(p),
        rest=notebook_cells.stated_rest(p),
    )  # fmt: skip
    if found.status is Status.ERROR:
        return change.refuse(p.snippet_id, p, "; ".join(found.problems()))
    if found.status is Status.STOPPED:
        return change.refuse(p.snippet_id, p, NOT_RECORDED + "; ".join(found.problems()))
    if found.status is Status.NOT_RUN:
        return change.skip(p, f"not run here (lacks {', '.join(found.missing)}); left as is")
    result = outcome.result
    verdict = found.text
    assert result is not None and verdict is not None  # it ran
    if found.status in ENDED_BADLY:  # not "record it": this is record, and it will not
        return change.refuse(p.snippet_id, p, NOT_RECORDED + "; ".join(q for q in verdict.problems if q != NO_STATED))
    if found.status is Status.TRUNCATED:
        return change.refuse(p.snippet_id, p, NOT_RECORDED + found.truncation)
    if notebook and found.status is Status.FIGURES:
        return change.refuse(p.snippet_id, p, NOT_RECORDED + notebook_write.FIGURES_NOT_WRITTEN)
    if notebook and STREAMS in verdict.problems:
        # the text holds, on other streams: the writer keeps each output's stream, and cannot move text
        # between stdout and stderr (where new text lands on the wrong one, the next build says so)
        return change.refuse(p.snippet_id, p, NOT_RECORDED + STREAMS)
    if found.status in (Status.OK, Status.FIGURES):
        return figures_change(p, snippet, result, srcdir, again)
    try:
        # a notebook stores what the run printed: the wildcards its stated output
        # holds stand for what IPython prints otherwise, never the author's
        body = verdict.actual if notebook else to_record(p.stated, verdict.actual, normalizers)
    except Unrecordable as exc:
        return change.refuse(p.snippet_id, p, NOT_RECORDED + str(exc))
    why = p.writable  # any body can be stated: in the escaped form where the plain one cannot hold it
    if why:
        return change.refuse(p.snippet_id, p, NOT_RECORDED + why)
    # What is written must hold on the second run too (its wildcards, if the
    # author wrote any, may cover what varies).
    unstable = stability(snippet, body, result, again)
    if unstable:
        return change.refuse(p.snippet_id, p, NOT_RECORDED + (for_notebook(unstable) if notebook else unstable))
    options = {"stated-env": f"{result.stamp.label()} · {result.stamp.platform}"} if snippet.tags.requires else {}
    if notebook:  # its text goes into the notebook; its figures stay as stored, so they must hold
        if not all(c.ok for c in figure_files.check(p.snippet_id, result.figures, srcdir)):
            return change.refuse(p.snippet_id, p, NOT_RECORDED + notebook_write.FIGURES_NOT_WRITTEN)
        return change.accept(p, body, figures=None, diff=verdict.diff)
    return change.accept(p, body, options=options, figures=result.figures, diff=verdict.diff)


def may_change(outcome: Outcome, placement: Placement, snippet: Snippet, normalizers: Sequence[Normalizer]) -> bool:
    """Whether ``record`` may write ``placement``'s stated output or figures
    (its run's output differs, or it drew figures): the snippets whose
    stability re-runs are submitted together."""
    if outcome.result is None or not notebook_cells.compared(placement):  # NBVAL_IGNORE_OUTPUT: nothing to write
        return False
    found = judge(snippet.tags, outcome.result, placement.stated, normalizers, stored=notebook_cells.stored(placement))
    return bool(outcome.result.figures) or bool(found.diff)


def figures_change(
    placement: Placement, snippet: Snippet, result: RunResult, srcdir: Path, again: Again | None
) -> Change | None:
    """The change of a run whose text holds: its figures become the stated
    files when one of them differs from its file (the page stays as it is),
    unless two runs draw them differently.

    :return: ``None`` when every figure holds.
    """
    figures = result.figures
    if all(c.ok for c in figure_files.check(placement.snippet_id, figures, srcdir)):
        return None
    other = again.other(snippet) if again is not None else None
    why = figure_files.stable(figures, other.figures if other else ())
    if why:
        return change.refuse(placement.snippet_id, placement, NOT_RECORDED + why)
    return change.accept(placement, None, figures=figures)


def stability(snippet: Snippet, body: str, result: RunResult, again: Again | None) -> str:
    """Why ``body`` (with ``result``'s figures) would not hold on another run
    of ``snippet``, or ``""`` (also for a shard's result: ``again`` is ``None``).

    The text is compared with runs under other hash seeds and, when those
    differ, a run under the same one (:meth:`snipcheck.pending.variation.Rerun.problem`);
    the figures with the run under the first other seed.
    """
    if again is None:
        return ""
    unstable = again.problem(snippet, body)
    other = again.other(snippet)
    moved = figure_files.stable(result.figures, other.figures) if other else None
    return unstable or (f"{VARIES}:\n{moved}" if moved else "")


def recheck(
    loaded: Sequence[tuple[Change, Snippet | None]], again: Again, where: Callable[[Placement], str]
) -> list[Change]:
    """``accept``'s and ``review``'s stability rule: each accepted new output
    is run again (:meth:`snipcheck.pending.variation.Rerun.problem`), and one
    that varies is refused, as ``record`` refuses it.

    :param loaded: the changes, each with its snippet (``None``: it could not
        be loaded, so it is not run again).
    :param where: says where a placement sits (the start of a refusal's reason).
    :return: the changes kept as they were, in order, then those now refused.
    """
    kept: list[Change] = []
    refused: list[Change] = []
    for each, snippet in loaded:
        if snippet is None or each.placement is None or each.new is None or not each.accepted:
            kept.append(each)
            continue
        why = again.problem(snippet, each.new, "the report's run")
        if why:
            reason = f"{where(each.placement)}: not accepted: {why}"
            refused.append(change.refuse(each.snippet_id, each.placement, reason))
        else:
            kept.append(each)
    return kept + refused
