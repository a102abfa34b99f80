"""The committed verify reports (docs/_reports/*.json, the 版本差异 page's
source) are reports of the chapter as it is now (issue 25).

Each report carries the fingerprint of the placements and snippet sources it
was made from (:func:`snipcheck.verify.chapter_fingerprint`).  A change to a
snippet, a stated output or a placement changes the chapter's fingerprint;
until ``nox -s verify -- VERSION`` is run again, the versions page would show
a verdict about a chapter that no longer exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO
from snipcheck.project import Project
from snipcheck.verify import chapter_fingerprint

REPORTS = sorted((REPO / "docs" / "_reports").glob("*.json"))


@pytest.fixture(scope="module")
def current() -> str:
    project, _ = Project.load(REPO)
    return chapter_fingerprint(project.settings, project.placements(), project.snippet)


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
