"""Review drifted outputs one by one before accepting them (like ``cargo insta review``).

``snipcheck review`` keeps its state in a file (``review.json`` in the cache
directory): the verify report under review and the decision taken on each
drifted snippet so far.  It shows each undecided snippet's diff and asks:
accept, reject, skip (decide later) or quit.  Each decision is written to the
state file at once, so a review can stop anywhere and resume; when every
drifted snippet is decided, the accepted ones become pending changes through
:func:`snipcheck.app.accept.plan`, as ``accept`` makes them, and are written by
the same commit (:func:`snipcheck.pending.commit.commit`: read back, all or
nothing); then the state file is removed.  The reference pin moves only when every drifted output was
accepted: a chapter with rejected outputs does not hold on that release.

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from snipcheck.files import write_atomic
from snipcheck.report import read as report_file
from snipcheck.report.verify import Report, SnippetReport

CHOICES = {"a": "accept", "r": "reject", "s": "skip", "q": "quit"}


@dataclass
class Review:
    """A review in progress.

    :param report: the verify report under review (a whole run, not a shard).
    :param decisions: snippet id → ``"accept"`` or ``"reject"``.
    """

    report: Report
    decisions: dict[str, str] = field(default_factory=dict)

    @property
    def drifted(self) -> list[SnippetReport]:
        return [s for s in self.report.snippets if s.status == "drifted" and s.actual is not None]

    @property
    def undecided(self) -> list[SnippetReport]:
        return [s for s in self.drifted if s.id not in self.decisions]

    @property
    def accepted(self) -> list[str]:
        return [s.id for s in self.drifted if self.decisions.get(s.id) == "accept"]

    @property
    def complete(self) -> bool:
        return not self.undecided

    def to_json(self) -> dict[str, object]:
        """The state file's form: the report, the decisions, and the outputs as
        they ran (a report's JSON form writes what varies as ``[..]``, which
        accepting must not write into a page)."""
        ran = {s.id: s.run_actual for s in self.report.snippets if s.run_actual is not None}
        diffs = {s.id: s.run_diff for s in self.report.snippets if s.run_diff is not None}
        return {
            "schema": "snipcheck-review/1", "report": self.report.to_json(), "decisions": self.decisions,
            "ran": ran, "diffs": diffs,
        }  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> Review | None:
        """The review saved at ``path``, or ``None`` when there is none.

        :raises ValueError: if the file is not a review state file.
        """
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError as exc:  # not JSON, or not UTF-8
            raise ValueError(f"{path} is not a snipcheck review state file ({exc}); remove it to start afresh") from None
        if not isinstance(data, dict) or data.get("schema") != "snipcheck-review/1":
            raise ValueError(f"{path} is not a snipcheck review state file; remove it to start afresh")
        decisions = data.get("decisions")
        if not isinstance(decisions, dict) or not all(v in ("accept", "reject") for v in decisions.values()):
            raise ValueError(f"{path}: its key 'decisions' is damaged; remove the file to start the review afresh")
        try:
            report = report_file.parse(data.get("report"), f"{path} (the report under review)")
        except report_file.ReportError as exc:
            raise ValueError(f"{exc}; remove {path} to start the review afresh") from None
        ran, diffs = data.get("ran", {}), data.get("diffs", {})
        for key, value in (("ran", ran), ("diffs", diffs)):
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ValueError(f"{path}: its key {key!r} is damaged; remove the file to start the review afresh")
        snippets = tuple(
            dataclasses.replace(s, run_actual=ran.get(s.id), run_diff=diffs.get(s.id)) for s in report.snippets
        )
        return cls(dataclasses.replace(report, snippets=snippets), dict(decisions))

    def save(self, path: Path) -> None:
        write_atomic(path, (json.dumps(self.to_json(), ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


def walk(review: Review, path: Path, ask: Callable[[str], str], say: Callable[[str], None]) -> bool:
    """Ask about each undecided snippet; save every decision at once.

    :param ask: shows a prompt and returns the answer (``""`` at end of input).
    :param say: prints a line.
    :return: ``False`` if the reviewer quit (or input ended) before deciding every snippet.
    """
    todo = review.undecided
    for number, snippet in enumerate(todo, start=1):
        say(f"[{number}/{len(todo)}] {snippet.id}  ({snippet.doc}:{snippet.line})")
        for line in snippet.shown_diff.splitlines():
            say("    " + line)
        while True:
            answer = ask("accept (a), reject (r), skip (s) or quit (q)? ").strip().lower()[:1]
            if answer in CHOICES or answer == "":
                break
            say("please answer a, r, s or q")
        choice = CHOICES.get(answer, "quit")
        if choice == "quit":
            return False
        if choice in ("accept", "reject"):
            review.decisions[snippet.id] = choice
            review.save(path)
    return review.complete
