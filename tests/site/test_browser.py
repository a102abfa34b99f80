"""The published pages in a real browser (headless Chromium through Playwright).

The fixtures (one chapter build, a local server, headless Chromium) are in
``tests/browser_fixtures.py``.  The tests check what a reader sees: stdout and stderr panels that look different and say which is which, a
copy button that copies the code and nothing else, captured output shown as
text (never run), no request to any other host, Chinese full-text search,
the checkpoint dropdowns, the computed reading aids and the flowchart.

Layout on phones and desktops, accessibility, search and the page's
language are in ``tests/site/test_browser_reader.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from browser_fixtures import (
    BROWSER_MARKS,
    Site,
    Tab,
    open_dropdowns,
    open_tab,
    shot,
    snippet_selector,
    wait_for_search,
)
from conftest import REPO
from helpers import html
from snipcheck.sources.snippets import load

pytestmark = BROWSER_MARKS

# --- output panels ------------------------------------------------------------------


def test_stdout_and_stderr_panels_look_different_and_are_labelled(
    tab: Tab, site: Site, artifacts: Path
) -> None:
    page = tab.page
    page.goto(site.url("chapter/inplace.html"))
    anomaly = page.locator(snippet_selector("inplace/anomaly"))
    anomaly.scroll_into_view_if_needed()
    styles = page.evaluate(
        """() => [...document.querySelectorAll('.snipcheck-output > .output')].map(el => {
            const box = el.getBoundingClientRect(), label = el.previousElementSibling;
            const s = getComputedStyle(el), l = getComputedStyle(label);
            return {classes: [...el.classList], background: s.backgroundColor, border: s.borderTopColor,
                    label: label.classList.contains('snipcheck-output-label') ? label.textContent : null,
                    labelColor: l.color, visible: box.width > 0 && box.height > 0};
        })"""
    )
    stdout = [s for s in styles if "snipcheck-stdout" in s["classes"]]
    stderr = [s for s in styles if "snipcheck-stderr" in s["classes"]]
    assert stdout and stderr
    assert all(s["visible"] for s in styles)
    # Every block has its label above it, in the page's language (document text, not CSS).
    assert {s["label"] for s in stdout} == {"标准输出 stdout"}
    assert all(s["label"].startswith("标准错误 stderr") for s in stderr), {s["label"] for s in stderr}
    for out in stdout:
        for err in stderr:
            assert out["background"] != err["background"], (out, err)
            assert out["labelColor"] != err["labelColor"], (out, err)
    # The anomaly snippet has both kinds of stderr: a warning and a traceback, each labelled.
    kinds = anomaly.locator(".snipcheck-output-label").all_inner_texts()
    assert kinds == ["标准错误 stderr · 警告", "标准错误 stderr · 未捕获的异常"]
    shot(anomaly, artifacts, "output-panels-stderr")
    storage = page.locator(snippet_selector("inplace/storage"))
    storage.scroll_into_view_if_needed()
    shot(storage, artifacts, "output-panels-stdout")


# --- copy button -----------------------------------------------------------------------


@pytest.mark.parametrize("snippet_id", ["inplace/storage", "inplace/form1-leaf", "inplace/anomaly"])
def test_copy_button_copies_the_code_only(tab: Tab, site: Site, artifacts: Path, snippet_id: str) -> None:
    snippet = load(snippet_id, REPO / "snippets", REPO)
    page = tab.page
    page.goto(site.url("chapter/inplace.html"))
    box = page.locator(snippet_selector(snippet_id))
    code = box.locator("div.snipcheck-code")
    code.scroll_into_view_if_needed()
    code.hover()
    buttons = box.locator("button.copybtn")
    assert buttons.count() == 1, "one copy button per snippet: on the code, not on the output"
    assert box.locator(".snipcheck-output button.copybtn").count() == 0
    # The clipboard is the browser's, shared by every context: what it holds
    # afterwards must be what this click copied, not what an earlier test did.
    page.evaluate("navigator.clipboard.writeText('')")
    buttons.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    shot(box, artifacts, f"copy-{snippet_id.replace('/', '-')}")
    assert copied.rstrip("\n") == snippet.code.rstrip("\n")
    assert "# /// snipcheck" not in copied  # the tag block is not part of the shown code
    output = box.locator(".snipcheck-output").inner_text()
    for line in output.splitlines():
        if line.strip() and line.strip() not in snippet.code:
            assert line.strip() not in copied
    first_line = copied.splitlines()[0]
    assert not re.match(r"^\s*\d+\s", first_line) or re.match(r"^\s*\d+\s", snippet.code), first_line


# --- captured output is text ----------------------------------------------------------------


def test_output_that_looks_like_markup_is_shown_as_text_and_never_runs(
    tab: Tab, site: Site, artifacts: Path
) -> None:
    page = tab.page
    page.goto(site.url("markup/index.html"))
    page.wait_for_load_state("networkidle")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    stdout = page.locator(".snipcheck-output .snipcheck-stdout pre")
    stderr = page.locator(".snipcheck-output .snipcheck-stderr pre")
    assert stdout.inner_text().strip() == "<script>window.__pwned=1</script>"
    assert stderr.inner_text().strip() == '<img src="/pwned.png" onerror="window.__pwned=2">'
    assert stdout.is_visible() and stderr.is_visible()
    # Neither became an element: no script or img inside the output panel.
    assert page.locator(".snipcheck-output script, .snipcheck-output img").count() == 0
    assert not [u for u in tab.requests if "pwned" in u]
    shot(page.locator(".snipcheck-snippet"), artifacts, "markup-as-text")


# --- offline ------------------------------------------------------------------------------


def chapter_pages(site: Site) -> list[str]:
    return sorted(p.relative_to(site.chapter).as_posix() for p in site.chapter.glob("*.html"))


def test_no_request_leaves_localhost(browser: Any, site: Site, artifacts: Path) -> None:
    pages = chapter_pages(site)
    assert {"index.html", "inplace.html", "burn.html", "myths.html", "search.html"} <= set(pages)
    elsewhere: dict[str, list[str]] = {}
    broken: dict[str, list[str]] = {}
    for name in pages:
        opened = open_tab(browser, site, 1280)  # a fresh context: nothing cached from another page
        page, requests, failed = opened.page, opened.requests, opened.failed
        page.goto(site.url(f"chapter/{name}"))
        page.wait_for_load_state("networkidle")
        # Open every dropdown so that what they load is loaded too: networkidle
        # was reached already, so waiting for it again would return at once.
        open_dropdowns(page)
        page.wait_for_function("[...document.images].every(image => image.complete)")
        if name == "inplace.html":
            shot(page, artifacts, "page-inplace-top")
        page.context.close()
        outside = [u for u in requests if not u.startswith((site.base, "data:"))]
        if outside:
            elsewhere[name] = outside
        if failed:
            broken[name] = failed
    assert elsewhere == {}, f"requests to other hosts: {elsewhere}"
    assert broken == {}, f"local requests that failed: {broken}"


# --- search -----------------------------------------------------------------------------------


def section_id(page: Path, words: str) -> str:
    """The id of the first section of ``page`` whose heading contains ``words``."""
    for heading in html(page).find_all(re.compile("^h[1-6]$")):
        if words in heading.get_text():
            return heading.find_parent("section")["id"]
    raise AssertionError(f"no heading with {words!r} in {page}")


def test_chinese_search_finds_the_version_counter_section(tab: Tab, site: Site, artifacts: Path) -> None:
    page = tab.page
    page.goto(site.url("chapter/search.html?q=版本计数器"))
    results = page.locator("#search-results ul.search li a")
    # The list grows one result per timer tick; its summary is written after the last
    # (the paragraph itself is there, empty, from the start).
    wait_for_search(page, excerpts=False)
    shot(page, artifacts, "search-版本计数器")
    links = [urlsplit(unquote(h)) for h in results.evaluate_all("as => as.map(a => a.getAttribute('href'))")]
    expected = section_id(site.chapter / "inplace.html", "版本计数器")
    assert ("inplace.html", expected) in [(u.path, u.fragment) for u in links], links
    target = next(i for i, u in enumerate(links) if (u.path, u.fragment) == ("inplace.html", expected))
    # The result names the section it opens at, not only the page.
    heading_text = html(site.chapter / "inplace.html").find(id=expected).find("h2").get_text().rstrip("#¶")
    assert results.nth(target).inner_text() == f"就地操作 › {heading_text}"
    # Following the link lands on that section.
    results.nth(target).click()
    page.wait_for_url(re.compile(r"inplace\.html"))
    assert urlsplit(page.url).fragment == expected
    heading = page.locator(f"section#{expected} > h2")
    assert "版本计数器" in heading.inner_text()
    assert heading.is_visible()


# --- checkpoint dropdowns, reading aids, flowchart ------------------------------------------------


def test_checkpoint_answers_are_in_closed_dropdowns_that_open(tab: Tab, site: Site, artifacts: Path) -> None:
    page = tab.page
    page.goto(site.url("chapter/inplace.html"))
    checkpoints = page.locator(f"section#{section_id(site.chapter / 'inplace.html', '检查点')}")
    dropdowns = checkpoints.locator("details.sd-dropdown")
    count = dropdowns.count()
    assert count == source_dropdowns(REPO / "docs" / "inplace.md", "## 检查点")
    assert count >= 10
    first = dropdowns.first
    first.scroll_into_view_if_needed()
    answer = first.locator(".sd-summary-content")
    assert not answer.is_visible()
    first.locator("summary").click()
    answer.wait_for(state="visible")
    assert "增强赋值" in answer.inner_text()
    shot(checkpoints, artifacts, "checkpoints")


def source_dropdowns(source: Path, heading: str) -> int:
    """How many dropdowns the source has after ``heading``."""
    text = source.read_text(encoding="utf-8")
    return len(re.findall(r"^:::+\{dropdown\}", text[text.index(heading) :], re.MULTILINE))


def test_reading_time_and_resume_points_show_and_link(tab: Tab, site: Site, artifacts: Path) -> None:
    page = tab.page
    page.goto(site.url("chapter/inplace.html"))
    reading = page.locator(".snipcheck-reading-time")
    assert reading.is_visible()
    assert re.match(r"阅读时间约 \d+ 分钟", reading.inner_text())
    # Near the top: above the first section heading.
    assert reading.bounding_box()["y"] < page.locator("h2").first.bounding_box()["y"]
    resumes = page.locator(".snipcheck-resume")
    assert resumes.count() == 2
    first = resumes.first
    first.scroll_into_view_if_needed()
    text = first.inner_text()
    assert re.search(r"已经读了约 \d+ 分钟，后面还有约 \d+ 分钟", text), text
    shot(first, artifacts, "resume-point")
    link = first.locator("a").first
    href = link.get_attribute("href")
    link.click()
    page.wait_for_function(f"location.hash === {href!r}")
    heading = page.locator(f"section{href} > h2")
    assert heading.inner_text().strip("#¶ \n") in link.inner_text()


#: True once an ``<object>`` holds its SVG document, parsed and loaded.
SVG_LOADED = """object => { const svg = object.contentDocument;
    return !!svg && svg.documentElement?.localName === 'svg' && svg.readyState === 'complete'; }"""


def test_the_flowchart_is_a_local_svg_with_chinese_labels(tab: Tab, site: Site, artifacts: Path) -> None:
    page = tab.page
    page.goto(site.url("chapter/burn.html"))
    diagram = page.locator("div.graphviz object")
    data = diagram.get_attribute("data")
    assert data and data.startswith("_images/") and data.endswith(".svg"), data
    # The object is 300 x 150 px, holding an empty document that is already
    # "complete", until its SVG has loaded: the size is read once that is so (the
    # page's load event waits for it too; networkidle, waited for before, is a
    # 500 ms quiet spell on the network, not a condition on the diagram).
    page.wait_for_function(SVG_LOADED, arg=diagram.element_handle())
    diagram.scroll_into_view_if_needed()
    box = diagram.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 200
    assert any(u.endswith(data) and u.startswith(site.base) for u in tab.requests)
    svg = (site.chapter / data).read_text(encoding="utf-8")
    for label in ("版本号 0 变 1", "backward 报错", "另开缓冲 16 MiB", "梯度用旧的 x"):
        assert label in svg
    # Above the first section: near the top of the page.
    assert box["y"] < page.locator("h2").first.bounding_box()["y"]
    shot(page.locator("div.graphviz").first, artifacts, "burn-flowchart")
