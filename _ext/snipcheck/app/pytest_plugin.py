"""The pytest plugin: ``pytest --snipcheck docs/`` checks every placed snippet.

Registered through the ``pytest11`` entry point, inactive unless
``--snipcheck`` is given.  For each page file pytest visits, it collects one
item per placement whose directive sits in that file, from the placement
index of the project around it (the nearest folder above holding
``conf.py``): the same set the build runs, read as the build reads it.  An
item runs its snippet through the core (no Sphinx build), with the project's
settings and result cache, and fails with the diff when the actual output
drifts from the stated one, the run ends otherwise than its tags expect, or
the output was cut at the output limit; a snippet whose requirements this
environment lacks is skipped, naming them.  A cell of a chain that an earlier
cell kept from running (it failed or ended the process) fails, naming that
cell, whether or not that cell's item was selected.

A notebook page (an ``.ipynb``, or a MyST-NB text notebook) places one
cell of chain ``notebook`` per code cell that runs
(:mod:`snipcheck.sources.notebook_cells`): an item each, named by the
notebook and the cell id, its failures by the cell's number, and an
``NBVAL_IGNORE_OUTPUT`` cell judged by how it ended only, as in the build.

Items are named by snippet id (``docs/inplace.md::inplace/leaf-add``), so
``-k`` selects snippets, ``-x`` stops at the first drift, and pytest-xdist
spreads them over workers (each runs its own share).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from snipcheck.app.project import Project, ProjectError
from snipcheck.judge.verdict import Status, check
from snipcheck.sources import notebook_cells
from snipcheck.sources.placement import Placement

if TYPE_CHECKING:
    from snipcheck.engine.execute import Executor
    from snipcheck.model import Outcome, Snippet


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("snipcheck", "check the stated outputs of a Sphinx project's snippets")
    group.addoption(
        "--snipcheck", action="store_true", default=False,
        help="collect one test per snippet placed in the Sphinx pages given (e.g. pytest --snipcheck docs/)",
    )  # fmt: skip
    group.addoption(
        "--snipcheck-no-cache", action="store_true", default=False,
        help="run every snippet, ignoring the result cache",
    )  # fmt: skip


class _Session:
    """Projects and executors of one pytest session (one per ``conf.py`` met)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.projects: dict[Path, Project | ProjectError] = {}
        self.executors: dict[Path, Executor] = {}

    def project_of(self, path: Path) -> Project | None:
        """The project whose sources hold ``path``, or ``None``.

        :raises ProjectError: if its ``conf.py`` or sources cannot be read.
        """
        confdir = next((p for p in path.resolve().parents if (p / "conf.py").is_file()), None)
        if confdir is None:
            return None
        if confdir not in self.projects:
            try:
                self.projects[confdir] = Project.load(confdir)[0]
            except ProjectError as exc:
                self.projects[confdir] = exc
        found = self.projects[confdir]
        if isinstance(found, ProjectError):
            raise found
        return found

    def executor(self, project: Project) -> Executor:
        if project.confdir not in self.executors:
            from snipcheck.engine.execute import executor_for
            from snipcheck.run.environment import probe

            stamp = probe(project.settings.python, project.settings.cache_dir)
            use_cache = not self.config.getoption("snipcheck_no_cache")
            self.executors[project.confdir] = executor_for(project.settings, stamp, use_cache=use_cache)
        return self.executors[project.confdir]

    def close(self) -> None:
        for executor in self.executors.values():
            executor.cancel_pending()  # -x, Ctrl-C: what never started need not run
            executor.close()


_KEY = pytest.StashKey[_Session]()


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("snipcheck"):
        config.stash[_KEY] = _Session(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start every selected snippet (after ``-k``): they run in parallel while pytest walks the items.

    Per project, the executor first plans them all (so ``snipcheck_fork_min_runs``
    decides whether a fork server is worth starting), then every snippet is
    submitted and the chains started, so each chain's selected cells run
    together in one process before any item waits on its outcome.
    """
    state = session.config.stash.get(_KEY, None)
    if state is None:
        return
    by_project: dict[Path, tuple[Project, list[Snippet]]] = {}
    for item in session.items:
        if isinstance(item, SnippetItem):
            try:
                snippet = item._snippet()
            except SnippetDrift:
                continue  # the item reports it
            by_project.setdefault(item.project.confdir, (item.project, []))[1].append(snippet)
    for project, snippets in by_project.values():
        executor = state.executor(project)
        executor.plan(snippets)
        for snippet in snippets:
            executor.submit(snippet)
        executor.start_chains()


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is not None:
        session.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    session = parent.config.stash.get(_KEY, None)
    if session is None or file_path.suffix in (".py", ".pyc"):
        return None
    try:
        project = session.project_of(file_path)
    except ProjectError as exc:
        if file_path.name == "conf.py" or file_path.suffix not in (".md", ".rst", ".txt", ".ipynb"):
            return None
        raise pytest.UsageError(f"snipcheck: {exc}") from None
    if project is None or not file_path.resolve().is_relative_to(project.srcdir):
        return None
    left_out = [(line, why) for path, line, why in project.unreadable() if _entry(Path(path)) == _entry(file_path)]
    if left_out:
        line, why = left_out[0]
        return UnreadablePage.from_parent(parent, path=file_path, message=f"{_shown(file_path)}:{line}: {why}")
    mine = [p for p in project.index().placements if Path(p.source).resolve() == file_path.resolve()]
    if not mine:
        return None
    return PageFile.from_parent(parent, path=file_path, project=project, placements=mine)


class PageFile(pytest.File):
    """A page (or included file) that places snippets."""

    def __init__(self, *, project: Project, placements: list[Placement], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.project = project
        self.placements = placements

    def collect(self) -> Iterator[SnippetItem]:
        for placement in self.placements:
            yield SnippetItem.from_parent(self, name=placement.snippet_id, placement=placement)


class UnreadablePage(pytest.File):
    """A page Sphinx cannot read (not UTF-8, say): its collection fails with
    the reason, so a run over it is never green while its snippets are unknown."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message

    def collect(self) -> Iterator[SnippetItem]:
        raise self.CollectError(f"{self.message}; its snippets were not checked")


def _entry(path: Path) -> Path:
    """``path`` made absolute through its folder, not through its last part: a
    page that is a broken symbolic link or a loop of links keeps its own name
    (``Path.resolve`` would follow it, or fail on a loop)."""
    return path.parent.resolve() / path.name


@pytest.hookimpl(tryfirst=True)  # before -k deselects, like every collected item
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """A page Sphinx cannot read that pytest does not visit (a broken symbolic
    link, a loop of links, a named pipe: pytest visits regular files only)
    under the paths given: a failing item each, so the run is never green
    while its snippets are unknown."""
    state = config.stash.get(_KEY, None)
    if state is None:
        return
    invoked = config.invocation_params.dir
    given = [(invoked / arg.split("::")[0]).resolve() for arg in config.args]
    visited = {_entry(Path(item.path)) for item in items}
    for project in state.projects.values():
        if isinstance(project, ProjectError):
            continue
        for path, line, why in project.unreadable():
            page = _entry(Path(path))
            if page in visited or not any(page == g or page.is_relative_to(g) for g in given):
                continue
            visited.add(page)
            items.append(UnreadablePageItem.from_parent(session, name=_shown_entry(page), page=page, line=line, why=why))


class UnreadablePageItem(pytest.Item):
    """A page Sphinx cannot read and pytest does not visit: it fails with the reason."""

    def __init__(self, *, page: Path, line: int, why: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.page, self.line, self.why = page, line, why

    def runtest(self) -> None:
        raise SnippetDrift(f"{self.name}:{self.line}: {self.why}; its snippets were not checked")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.page, self.line - 1, "a page that cannot be read"


class SnippetDrift(Exception):
    """A placed snippet whose run does not match the page (the message has the diff)."""


#: What an item does with each verdict of the check step (:mod:`snipcheck.judge.verdict`):
#: it passes, is skipped (this environment cannot run it), or fails with :class:`SnippetDrift`.
OUTCOMES: dict[Status, str] = {
    Status.OK: "pass",
    Status.NOT_RUN: "skip",
    Status.DRIFT: "fail",
    Status.FIGURES: "fail",
    Status.ENDED_WRONG: "fail",
    Status.FAILED: "fail",
    Status.TIMEOUT: "fail",
    Status.TRUNCATED: "fail",
    Status.STOPPED: "fail",
    Status.ERROR: "fail",
}


class SnippetItem(pytest.Item):
    """One placement: run its snippet, compare with what the page states."""

    def __init__(self, *, placement: Placement, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.placement = placement

    @property
    def project(self) -> Project:
        parent = self.parent
        assert isinstance(parent, PageFile)
        return parent.project

    def _snippet(self) -> Snippet:
        from snipcheck.sources.snippets import SnippetError

        try:
            return self.project.snippet(self.placement)
        except SnippetError as exc:
            where = f" ({exc.path}:{exc.line})" if exc.path and exc.line else ""
            raise SnippetDrift(f"snippet {self.placement.snippet_id!r} cannot be loaded: {exc.message}{where}") from None

    def runtest(self) -> None:
        session: _Session = self.config.stash[_KEY]
        snippet = self._snippet()
        outcome: Outcome = session.executor(self.project).outcome(snippet)
        p = self.placement
        where = notebook_cells.label(p, _shown(Path(p.source)))
        found = check(
            p.snippet_id, snippet.tags, outcome, p.stated, self.project.settings.normalizers,
            Path(p.figures_dir) if p.figures_dir else self.project.srcdir,
            stated_label=f"stated ({where})", compared=notebook_cells.compared(p), stored=notebook_cells.stored(p),
            stderr=notebook_cells.stated_stderr(p), rest=notebook_cells.stated_rest(p),
        )  # fmt: skip
        verdict = OUTCOMES[found.status]
        if verdict == "pass":
            return
        if verdict == "skip":  # reported at the page's line, as a skip marker would be
            raise pytest.skip.Exception(f"this environment lacks {', '.join(found.missing)}", _use_item_location=True)
        if found.status is Status.ERROR:
            raise SnippetDrift(f"snippet {p.snippet_id!r} could not run: " + "; ".join(found.problems()))
        text = f"snippet {p.snippet_id!r} ({where}): " + "; ".join(found.problems())
        if found.diff:
            text += "\n" + found.diff
        if found.status.new_output and notebook_cells.is_cell(p) and p.writable:  # record refuses it: say what to do
            text += f"\nif the new output is right: {p.writable}"
        elif found.status.new_output:
            from snipcheck.sphinxext.record_hint import record_command  # only on a failure: it loads Sphinx

            command = record_command(self.project.settings.record_command, self.project.confdir, Path.cwd())
            text += "\nif the new output is right, record it: " + command.format(id=p.snippet_id)
        raise SnippetDrift(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SnippetDrift):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        p = self.placement
        if notebook_cells.is_cell(p):  # its line is the cell's number: no line of the file
            return self.path, None, f"snippet {p.snippet_id} ({notebook_cells.label(p, self.path.name)})"
        return self.path, p.line - 1, f"snippet {p.snippet_id}"


def _shown_entry(page: Path) -> str:
    """:func:`_shown` of a page that may be a broken link (its own name is kept)."""
    return f"{_shown(page.parent)}/{page.name}"


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
