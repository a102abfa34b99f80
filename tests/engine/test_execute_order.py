"""The executor's queue: declared long runs first, page order otherwise (issue 14).

A snippet whose tags declare a long timeout (``torch.compile`` takes minutes
on a cold cache) starts before the short ones that were submitted earlier,
so it overlaps with them instead of running alone at the end of the build.
"""

from __future__ import annotations

import dataclasses
import threading

from snipcheck.engine.execute import Executor, ExecutorConfig, declared_length
from snipcheck.model import RunResult, Snippet, Stamp, Tags

STAMP = Stamp(python="3.11.7", torch=None, device="CPU", platform="Linux x86_64")


def snippet(snippet_id: str, timeout: float | None = None) -> Snippet:
    return Snippet(snippet_id, f"snippets/{snippet_id}.py", f"/p/snippets/{snippet_id}.py", "python",
                   "pass\n", "pass", 1, Tags(timeout=timeout))  # fmt: skip


class Recorder:
    """A runner that records the order of its runs; the first waits to be released."""

    name = "fork"

    def __init__(self) -> None:
        self.order: list[str] = []
        self.release = threading.Event()

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        if not self.order:
            self.order.append(snippet.id)
            assert self.release.wait(30)
        else:
            self.order.append(snippet.id)
        return RunResult((), 0, None, None, 0.0, False, 0, STAMP, self.name)


def test_a_declared_long_run_starts_before_short_ones_submitted_earlier() -> None:
    runner = Recorder()
    ex = Executor(ExecutorConfig(python="python", stamp=STAMP, cache=None, jobs=1, fork_min_runs=0),
                  runner_factory=lambda language: runner)  # fmt: skip
    try:
        first = ex.submit(snippet("a/blocker"))
        while not runner.order:  # the one worker holds the blocker
            threading.Event().wait(0.01)
        later = [ex.submit(s) for s in (snippet("a/short-1"), snippet("a/long", 300), snippet("a/short-2"), snippet("a/longer", 600))]
        runner.release.set()
        for fut in (first, *later):
            fut.result(timeout=30)
    finally:
        ex.close()
    assert runner.order == ["a/blocker", "a/longer", "a/long", "a/short-1", "a/short-2"]


def test_chains_are_ordered_by_their_longest_cell() -> None:
    cells = [(dataclasses.replace(snippet("c/a"), chain="page:c"), None), (dataclasses.replace(snippet("c/b", 120), chain="page:c"), None)]
    assert declared_length(("chain", cells)) == 120.0
    assert declared_length((snippet("s/short"), None)) == 0.0
