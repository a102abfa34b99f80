"""The 版本差异 page, generated from committed verify reports (issue 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import html
from snipcheck.model import Stamp
from snipcheck.report.verify import Report, SnippetReport, finish


def write_report(path: Path, torch: str, snippets: list[SnippetReport], shard: tuple[int, int] = (1, 1)) -> None:
    path.parent.mkdir(exist_ok=True)  # git keeps no empty _reports/ in the test root
    report = finish(Report(Stamp("3.11.7", torch, "CPU", "Linux x86_64"), "torch 1.0.0", shard, tuple(snippets), total=2))
    path.write_text(json.dumps(report.to_json()), encoding="utf-8")


def snip(i: str, status: str = "unchanged", stated: str = "", diff: str = "") -> SnippetReport:
    return SnippetReport(i, "chapter.md", 3, status, stated=stated, diff=diff, actual=stated)


@pytest.mark.sphinx("html", testroot="versions")
def test_reports_make_the_page_partial_and_shard_reports_are_left_out(app) -> None:
    reports = Path(app.srcdir) / "_reports"
    write_report(reports / "torch-1.1.0.json", "1.1.0", [snip("v/one", stated="one"), snip("v/two", stated="two")])
    write_report(reports / "torch-1.2.0.json", "1.2.0", [snip("v/one", stated="one")])  # made before v/two existed
    write_report(reports / "torch-1.3.0-shard1of2.json", "1.3.0", [snip("v/one", stated="one")], shard=(1, 2))
    app.build()
    page = html(Path(app.outdir) / "index.html")
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in page.select("table tbody tr")]
    # the verdict first: on a phone the table scrolls sideways, and the verdict is what a reader wants (issue 34)
    assert [th.get_text(strip=True) for th in page.select("table thead th")] == [
        "结论", "验证的环境", "覆盖", "一致", "输出不同", "运行失败", "未运行",
    ]  # fmt: skip
    assert [(r[0], r[1].split(" · ")[0], r[2]) for r in rows] == [  # verdict, environment (and file), coverage
        ("本章成立", "torch 1.1.0", "2/2"),
        ("所覆盖的部分成立", "torch 1.2.0", "1/2"),
    ]  # the shard is no row of its own
    (stale,) = [c.get_text(" ", strip=True) for c in page.select(".caution")]
    assert "torch 1.2.0" in stale and "1 个代码片段不在报告里（v/two）" in stale
    assert "nox -s verify -- 1.2.0" in stale


@pytest.mark.sphinx("html", testroot="versions")
def test_a_new_report_file_rebuilds_the_page(app, make_app, app_params) -> None:
    reports = Path(app.srcdir) / "_reports"
    write_report(reports / "torch-1.1.0.json", "1.1.0", [snip("v/one", stated="one"), snip("v/two", stated="two")])
    app.build()
    write_report(reports / "torch-1.4.0.json", "1.4.0", [snip("v/one", stated="one"), snip("v/two", stated="two")])
    args, kwargs = app_params
    again = make_app(*args, **kwargs)
    again.build()
    page = html(Path(again.outdir) / "index.html")
    assert "torch 1.4.0" in page.select_one("table").get_text()
