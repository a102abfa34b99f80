"""The committed verify reports (docs/_reports/*.json, the 版本差异 page's
source) are reports of the chapter as it is now (issues 25 and 34).

Each report carries the fingerprint of the placements and snippet sources it
was made from (:func:`snipcheck.report.verify.chapter_fingerprint`).  A change to a
snippet, a stated output or a placement changes the chapter's fingerprint;
until ``nox -s verify -- VERSION`` is run again, the versions page would show
a verdict about a chapter that no longer exists.  The fingerprint leaves out
where a snippet stands on its page, so each snippet's place (page and line,
which the versions page cites) is compared on its own: prose added above a
snippet moves it, and the report must say where it is now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO
from snipcheck.app.project import Project
from snipcheck.report.verify import chapter_fingerprint

REPORTS = sorted((REPO / "docs" / "_reports").glob("*.json"))


@pytest.fixture(scope="module")
def project() -> Project:
    return Project.load(REPO)[0]


@pytest.fixture(scope="module")
def current(project: Project) -> str:
    return chapter_fingerprint(project.settings, project.placements(), project.snippet)


@pytest.fixture(scope="module")
def places(project: Project) -> list[tuple[str, str, int]]:
    """Each placement's snippet id, page (relative to the repository) and line, as verify writes them."""
    return sorted(
        (p.snippet_id, Path(p.source).resolve().relative_to(REPO.resolve()).as_posix(), p.line)
        for p in project.placements()
    )


def test_there_are_committed_reports() -> None:
    assert [p.name for p in REPORTS] == ["torch-2.14.1.json", "torch-2.15.0.json"]


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_a_committed_report_is_of_the_chapter_as_it_is_now(path: Path, current: str) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    version = report["stamp"]["torch"].split("+")[0]
    assert report["fingerprint"] == current, (
        f"docs/_reports/{path.name} was made from another state of the chapter (fingerprint "
        f"{report['fingerprint']}, the chapter's is {current}): run nox -s verify -- {version} and commit it"
    )


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_a_committed_report_cites_each_snippet_where_it_is_now(path: Path, places: list[tuple[str, str, int]]) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    version = report["stamp"]["torch"].split("+")[0]
    cited = sorted((s["id"], s["doc"], s["line"]) for s in report["snippets"])
    where = {i: f"{doc}:{line}" for i, doc, line in places}
    said = {i: f"{doc}:{line}" for i, doc, line in cited}
    wrong = [f"{i} at {said.get(i, 'nowhere')}, now {where.get(i, 'gone')}" for i in sorted(set(where) | set(said)) if said.get(i) != where.get(i)]
    assert cited == places, (
        f"docs/_reports/{path.name} cites {len(wrong)} snippets where they no longer are ({'; '.join(wrong[:4])}"
        f"{'; ...' if len(wrong) > 4 else ''}): run nox -s verify -- {version} and commit it"
    )
