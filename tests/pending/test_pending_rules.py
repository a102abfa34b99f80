"""Unit tests of record's rules (snipcheck.pending.rules), without the command line.

Each rule that ``record`` applies to a run's output is called on a made-up
outcome and gives a pending change (snipcheck.pending.change): accepted,
skipped or refused with the reason; the stability re-runs come in as a fake.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from snipcheck.judge import figures as figure_files
from snipcheck.judge import normalize as N
from snipcheck.model import Event, ExceptionInfo, Figure, Outcome, RunResult, Snippet, Stamp, Tags
from snipcheck.pending.change import Change, Decision
from snipcheck.pending.rules import recheck, record_change
from snipcheck.pending.variation import VARIES
from snipcheck.sources.placement import Placement
from snipcheck.sources.snippets import load

STAMP = Stamp(python="3.11.7", torch="2.13.0+cpu", device="CPU", platform="Linux x86_64")
ALL = N.resolve(N.DEFAULT)


def result(text: str, *, exception: ExceptionInfo | None = None, status: int | None = 0, truncated: int = 0,
           figures: tuple[Figure, ...] = ()) -> RunResult:  # fmt: skip
    events = [Event("stdout", "text", text)] if text else []
    events += [Event("stdout", "figure", f.placeholder(n) + "\n") for n, f in enumerate(figures, start=1)]
    return RunResult(
        tuple(events), status, None, exception, 0.25, False, truncated, STAMP, "subprocess",
        output_limit=1 << 20 if not truncated else 16, figures=figures,
    )  # fmt: skip


def placement(stated: str, *, markup: str = "myst", writable: str = "") -> Placement:
    return Placement(
        "d/x", "snippet", "p", "docs/p.md", 3, markup, "backtick", "```", 3, 3, True, "", (), stated, writable
    )


@pytest.fixture
def snippet(tmp_path: Path) -> Snippet:
    (tmp_path / "snippets" / "d").mkdir(parents=True)
    (tmp_path / "snippets" / "d" / "x.py").write_text('print("new")\n')
    return load("d/x", tmp_path / "snippets", tmp_path)


class Again:
    """The stability re-runs, made up: ``problem`` says ``why``; ``other`` is ``run``."""

    def __init__(self, why: str = "", run: RunResult | None = None) -> None:
        self.why, self.run = why, run
        self.asked: list[tuple[str, str]] = []

    def problem(self, snippet: Snippet, body: str, written: str = "first run") -> str:
        self.asked.append((snippet.id, body))
        return self.why

    def other(self, snippet: Snippet) -> RunResult | None:
        return self.run


def decide(snippet: Snippet, stated: str, outcome: Outcome, srcdir: Path, again: Again | None = None,
           **where: str) -> Change | None:  # fmt: skip
    return record_change(placement(stated, **where), snippet, outcome, ALL, srcdir, again if again is not None else Again())


def test_a_drifted_output_is_accepted_as_the_new_stated_output(snippet: Snippet, tmp_path: Path) -> None:
    again = Again()
    found = decide(snippet, "old", Outcome(result("new\n"), "run"), tmp_path, again)
    assert found is not None
    assert (found.decision, found.old, found.new, dict(found.options), found.figures) == (
        Decision.ACCEPT, "old", "new", {}, ()
    )  # fmt: skip
    assert "-old" in found.diff and "+new" in found.diff
    assert again.asked == [("d/x", "new")]  # what is written was run again first


def test_a_snippet_with_requirements_names_the_environment_it_ran_in(snippet: Snippet, tmp_path: Path) -> None:
    needs = dataclasses.replace(snippet, tags=Tags(requires=("cuda",)))
    found = decide(needs, "old", Outcome(result("new\n"), "run"), tmp_path)
    assert found is not None and dict(found.options) == {"stated-env": f"{STAMP.label()} · {STAMP.platform}"}


def test_an_output_that_holds_is_no_change(snippet: Snippet, tmp_path: Path) -> None:
    assert decide(snippet, "same", Outcome(result("same\n"), "run"), tmp_path) is None


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (Outcome(None, "error", notes=("the runner could not start",)), "the runner could not start"),
        (Outcome(None, "not-run", stopped="not run: cell d/w before it failed"), "not recorded: not run: cell d/w before it failed"),
    ],
    ids=["run-error", "chain-stopped"],
)
def test_a_run_that_did_not_happen_is_refused(snippet: Snippet, tmp_path: Path, outcome: Outcome, reason: str) -> None:
    found = decide(snippet, "old", outcome, tmp_path)
    assert found is not None and (found.decision, found.reason, found.new) == (Decision.REFUSED, reason, None)


def test_a_snippet_this_environment_cannot_run_is_skipped_not_refused(snippet: Snippet, tmp_path: Path) -> None:
    found = decide(snippet, "old", Outcome(None, "not-run", missing=("cuda",)), tmp_path)
    assert found is not None
    assert (found.decision, found.reason) == (Decision.SKIP, "not run here (lacks cuda); left as is")


def test_a_run_that_ended_otherwise_than_expected_is_refused(snippet: Snippet, tmp_path: Path) -> None:
    raised = result("Traceback...\n", exception=ExceptionInfo("ValueError", "boom"), status=1)
    found = decide(snippet, "old", Outcome(raised, "run"), tmp_path)
    assert found is not None and found.decision is Decision.REFUSED
    assert found.reason.startswith("not recorded: ") and "ValueError" in found.reason


def test_a_truncated_output_is_refused_with_the_limit_to_raise(snippet: Snippet, tmp_path: Path) -> None:
    found = decide(snippet, "old", Outcome(result("x" * 16, truncated=100), "run"), tmp_path)
    assert found is not None and found.decision is Decision.REFUSED
    assert found.reason.startswith("not recorded: ") and "output-limit" in found.reason


def test_an_output_that_would_become_a_wildcard_is_refused(snippet: Snippet, tmp_path: Path) -> None:
    found = decide(snippet, "old", Outcome(result("a [..] b\n"), "run"), tmp_path)
    assert found is not None and found.decision is Decision.REFUSED
    assert found.reason.startswith("not recorded: line 1 of the output holds '[..]'")


def test_an_output_the_plain_page_cannot_hold_is_accepted_for_the_escaped_form(snippet: Snippet, tmp_path: Path) -> None:
    # issue 36 §5: rST drops a trailing space; the write path states it in the escaped form
    found = decide(snippet, "old", Outcome(result("trailing \n"), "run"), tmp_path, markup="rst")
    assert found is not None and (found.decision, found.new) == (Decision.ACCEPT, "trailing ")


def test_a_placement_that_cannot_be_rewritten_is_refused_with_its_reason(snippet: Snippet, tmp_path: Path) -> None:
    found = decide(snippet, "old", Outcome(result("new\n"), "run"), tmp_path, writable="it sits in an include")
    assert found is not None and (found.decision, found.reason) == (Decision.REFUSED, "not recorded: it sits in an include")


def test_an_output_that_varies_is_refused_and_a_shards_result_is_not_run_again(snippet: Snippet, tmp_path: Path) -> None:
    varies = Again(why=f"{VARIES}:\n-new\n+newer")
    found = decide(snippet, "old", Outcome(result("new\n"), "run"), tmp_path, varies)
    assert found is not None and (found.decision, found.reason) == (Decision.REFUSED, f"not recorded: {VARIES}:\n-new\n+newer")
    # a shard's result cannot run again here: it is accepted as it is
    shard = record_change(placement("old"), snippet, Outcome(result("new\n"), "shard"), ALL, tmp_path, None)
    assert shard is not None and (shard.decision, shard.new) == (Decision.ACCEPT, "new")


def figure(data: bytes) -> Figure:
    return Figure("png", data, "", 4, 3)


def test_only_figures_drifted_the_page_stays_and_the_figures_become_the_stated_files(snippet: Snippet, tmp_path: Path) -> None:
    drawn = (figure(b"not the stated bytes"),)
    stated = drawn[0].placeholder(1)
    again = Again(run=result("", figures=drawn))
    found = decide(snippet, stated, Outcome(result("", figures=drawn), "run"), tmp_path, again)
    assert found is not None and (found.decision, found.new, found.figures) == (Decision.ACCEPT, None, drawn)
    # once the stated file holds them, nothing changes
    path = figure_files.stated_path(tmp_path, "d/x", 1, "png")
    path.parent.mkdir(parents=True)
    path.write_bytes(drawn[0].data)
    assert decide(snippet, stated, Outcome(result("", figures=drawn), "run"), tmp_path, again) is None


def test_figures_that_differ_between_two_runs_are_refused(snippet: Snippet, tmp_path: Path) -> None:
    drawn = (figure(b"first run"),)
    again = Again(run=result("", figures=(figure(b"second run"),)))
    found = decide(snippet, drawn[0].placeholder(1), Outcome(result("", figures=drawn), "run"), tmp_path, again)
    assert found is not None and found.decision is Decision.REFUSED
    assert found.reason.startswith("not recorded: figure 1 differs between two runs of the same code")


def test_recheck_refuses_an_accepted_output_that_varies_and_keeps_the_rest_in_order(snippet: Snippet) -> None:
    from snipcheck.pending import change

    other = dataclasses.replace(placement("old y"), snippet_id="d/y", line=9)
    varying = change.accept(placement("old"), "new")
    figures_only = change.accept(other, None, figures=())
    refused = change.refuse("d/z", None, "no longer placed")
    again = Again(why="it varies")
    out = recheck([(varying, snippet), (figures_only, snippet), (refused, None)], again, lambda p: f"{p.source}:{p.line}")
    assert out[:2] == [figures_only, refused]
    assert (out[2].snippet_id, out[2].decision, out[2].reason) == ("d/x", Decision.REFUSED, "docs/p.md:3: not accepted: it varies")
    assert again.asked == [("d/x", "new")]  # only a new output is run again
