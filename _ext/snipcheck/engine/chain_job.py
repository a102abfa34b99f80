"""One job of the executor: the cells of a chain, run in one process.

:func:`run_chain_job` takes the cells of one chain that were submitted
(each with the cells before it in ``Snippet.earlier``), runs the longest line
of them once through the Python runner's ``run_chain`` and hands each cell its
own :class:`~snipcheck.model.Outcome` (see :mod:`snipcheck.sources.chains`):

* a cell whose requirement is missing is not run, and neither are the cells
  after it (they need its state): they lack the same requirements
  (``Outcome.missing``), and name that cell (``Outcome.stopped_at``);
* when every cell's result is in the cache, nothing runs;
* otherwise the whole line runs: the cells before the first one missing from
  the cache run again to rebuild the state, and where their new result is the
  cached one they count as from the cache;
* a cell that fails (or times out, or ends the process) ends the chain: the
  cells after it are not run, and say which cell stopped them
  (``Outcome.stopped``, and its id in ``Outcome.stopped_at``).  Ending the process is a failure of a cell that has
  cells after it, whatever its exit status and its ``expect`` tag
  (``RunResult.ended_chain``, judged by :func:`snipcheck.judge.compare.outcome_problem`):
  a notebook cell cannot end its kernel and leave the next cells checked.
  So that a run of only the first cells (``record ID``, ``pytest -k``, a
  verify shard, a cell before one whose requirement is missing) sees it too,
  a mark that runs nothing follows its last cell when the chain goes on
  after it (``Snippet.later``);
* results are stored only when every cell that ran ended as its tags expect
  and the process went on to the end of the run.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Future

from snipcheck.engine.config import NO_RESULT
from snipcheck.engine.runs import Runs, cacheable
from snipcheck.judge.compare import ending
from snipcheck.model import Outcome, RunResult, Snippet
from snipcheck.sources.chains import cells_of

__all__ = ["NO_RESULT", "run_chain_job"]

def run_chain_job(runs: Runs, cells: Sequence[tuple[Snippet, Future[Outcome]]]) -> None:
    """Run ``cells`` (one chain's, ordered by position) and set each future."""
    live = [(snippet, fut) for snippet, fut in cells if fut.set_running_or_notify_cancel()]
    if not live:
        return
    try:
        outcomes = _by_line(runs, [snippet for snippet, _ in live])
    except OSError as exc:
        error = Outcome(None, "error", notes=(f"could not start the chain's run: {exc}",))
        outcomes = [error] * len(live)
    except BaseException as exc:  # noqa: BLE001 - handed to the waiting readers
        for _, fut in live:
            fut.set_exception(exc)
        return
    for (_, fut), outcome in zip(live, outcomes, strict=True):
        fut.set_result(outcome)


def _by_line(runs: Runs, wanted: Sequence[Snippet]) -> list[Outcome]:
    """Outcomes of ``wanted``, one run per line of cells: the cells whose
    earlier cells are a prefix of the longest one's run with it; any other
    (a cell of a page as an earlier build read it, say) runs in a line of
    its own."""
    found: dict[int, Outcome] = {}
    left = list(range(len(wanted)))
    while left:
        longest = max(left, key=lambda n: len(wanted[n].earlier))
        line = cells_of(wanted[longest])
        same = [n for n in left if cells_of(wanted[n]) == line[: len(wanted[n].earlier) + 1]]
        for n, outcome in zip(same, _outcomes(runs, [wanted[n] for n in same]), strict=True):
            found[n] = outcome
        left = [n for n in left if n not in found]
    return [found[n] for n in range(len(wanted))]


def _outcomes(runs: Runs, wanted: Sequence[Snippet]) -> list[Outcome]:
    """Outcomes of ``wanted`` (cells of one line), in its order."""
    cfg = runs.config
    last = max(wanted, key=lambda cell: len(cell.earlier))
    line = [runs.declared(cell) for cell in cells_of(last)]
    # Each position's key covers the cells before it (Snippet.earlier).
    chain_ids = [cell.id for cell in line] + list(last.later)  # the whole chain, as far as it is known
    # ... and whether cells come after it (a cell that must let the process go on has a result of its own)
    linked = [
        dataclasses.replace(cell, earlier=tuple(line[:n]), later=tuple(chain_ids[n + 1 :])) for n, cell in enumerate(line)
    ]
    found: list[Outcome | None] = [None] * len(linked)
    stop = len(linked)
    for n, cell in enumerate(linked):
        missing = runs.missing(cell)
        if missing:
            found[n] = Outcome(None, "not-run", missing)
            for later in range(n + 1, len(linked)):
                found[later] = Outcome(None, "not-run", missing, stopped_at=cell.id)
            stop = n
            break
    runnable = linked[:stop]
    keys = [runs.key(cell) for cell in runnable] if cfg.cache is not None else []
    notes: list[str] = []
    cached: list[RunResult | None] = [None] * stop
    for n, cell in enumerate(runnable if keys else ()):
        for kind in runs.lookup_kinds(cell):  # what the other runner kind stored counts too (Executor.plan)
            cached[n] = runs.from_cache(runs.key(cell, kind), notes, cell)
            if cached[n] is not None:
                break
    if runnable and all(result is not None for result in cached):
        for n, result in enumerate(cached):
            found[n] = Outcome(result, "cache", notes=tuple(notes))
    elif runnable and not cfg.may_run:  # a build that runs nothing: each cell has its result, or none
        for n, result in enumerate(cached):
            found[n] = Outcome(result, "cache", notes=tuple(notes)) if result is not None else Outcome(
                None, "error", notes=(*notes, NO_RESULT)
            )
    elif runnable:
        found[:stop] = _run_line(runs, runnable, chain_ids[stop:], cached, keys, notes)
    by_id = {cell.id: outcome for cell, outcome in zip(linked, found, strict=True)}
    return [by_id[cell.id] or Outcome(None, "error", notes=("not run",)) for cell in wanted]


def _run_line(
    runs: Runs,
    runnable: Sequence[Snippet],
    beyond: Sequence[str],
    cached: Sequence[RunResult | None],
    keys: Sequence[str],
    notes: list[str],
) -> list[Outcome]:
    """Run ``runnable`` (the first cells of a chain, linked) in one process
    and store what may be stored.

    :param beyond: ids of the chain's cells after ``runnable`` (not run
        here: not wanted, or a requirement is missing).  When there are any,
        a mark that runs nothing (:func:`_mark`) runs after the last cell, so
        that it too must let the process go on and its output ends where the
        next cell's would begin, as in a run of the whole chain.
    :param cached: each cell's cached result, or ``None``.
    :param keys: each cell's cache key (empty without a cache).
    :return: one outcome per cell of ``runnable``.
    """
    cfg = runs.config
    runner = runs.runner("python")
    timeouts = [cell.tags.timeout or cfg.timeout for cell in runnable]
    plain = [dataclasses.replace(cell, earlier=(), later=()) for cell in runnable]
    if beyond:
        plain.append(_mark(plain[-1]))
        timeouts.append(cfg.timeout)
    # One process, one limit: the largest any of its cells asks for (output-limit tags).
    limit = max(runs.output_limit(cell) for cell in runnable)
    results: list[RunResult] = runner.run_chain(plain, timeouts=timeouts, output_limit=limit)  # type: ignore[attr-defined]
    if not results:  # the capture reports at least the cell the process ended in; never rely on it
        return [Outcome(None, "error", notes=("the chain's process reported none of its cells",))] * len(runnable)
    cut = len(results) < len(plain)  # the process ended before its last cell (or the mark) ran
    results = results[: len(runnable)]
    if cut:
        # The cell it ended with: the cells after it (whatever their requirements) did not run.
        stopper = len(results) - 1
        ids = [cell.id for cell in runnable[stopper + 1 :]] + list(beyond)
        results[stopper] = dataclasses.replace(results[stopper], ended_chain=tuple(ids))
    for _ in results:
        runs.count("ran")
    whole = not cut and all(cacheable(cell, result) for cell, result in zip(runnable, results, strict=True))
    found: list[Outcome] = []
    for n, result in enumerate(results):
        earlier = cached[n]
        same = earlier is not None and _same(earlier, result)
        found.append(Outcome(earlier if same and earlier is not None else result, "cache" if same else "run", notes=tuple(notes)))
        if whole and not same and cfg.cache is not None:
            try:
                cfg.cache.put(keys[n], runnable[n].id, result)
            except OSError as exc:
                found[n] = dataclasses.replace(
                    found[n],
                    notes=(
                        *notes,
                        f"could not write the cache entry ({exc.strerror or exc}); the chain will run again next build",
                    ),
                )
    if cut:
        stopper_cell, ended = runnable[len(results) - 1], results[-1]
        stopped = (
            f"its chain's process ended before it could run: {stopper_cell.id}, a cell before it, {ending(ended)}; "
            "fix that cell (see its own report) and this one runs"
        )
        found += [Outcome(None, "not-run", stopped=stopped, stopped_at=stopper_cell.id)] * (
            len(runnable) - len(results)
        )
    return found


def _mark(cell: Snippet) -> Snippet:
    """The mark that runs nothing after ``cell`` (``path`` empty: no file,
    see ``_snipcheck_main.run_cells``), with ``cell``'s inputs so that the
    process's memory limit and variables stay those of the real cells."""
    return dataclasses.replace(
        cell, path="", source="", code="", helpers=(), files=(), tags=dataclasses.replace(cell.tags, expect="ok")
    )


def _same(a: RunResult, b: RunResult) -> bool:
    """Whether two results of one cell say the same (timing apart)."""
    return (
        a.events, a.exit_status, a.signal, a.exception, a.timed_out, a.truncated_bytes, a.ended_chain,
        a.stopped_by_output, a.forged,
    ) == (
        b.events, b.exit_status, b.signal, b.exception, b.timed_out, b.truncated_bytes, b.ended_chain,
        b.stopped_by_output, b.forged,
    )
