"""What a reader meets, in headless Chromium at 390 px (a phone) and 1280 px
(a desktop): prose outputs that wrap and the rest that never soft-wrap,
nothing over the code, the landing page and the page of runner differences,
the page's language everywhere, search, the versions page, keyboard use and
axe-core's accessibility rules (reader.md, issues 13 and 34).

Fixtures: ``tests/browser_fixtures.py``.  axe-core comes from the npm
registry: ``npm ci --prefix tests/axe`` (``.ci/run`` does it); without it the
accessibility test is skipped, or fails where ``SNIPCHECK_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from browser_fixtures import (
    BROWSER_MARKS,
    SEARCH_EXCERPTS,
    SEARCH_LISTED,
    TIMEOUT_MS,
    Site,
    missing,
    open_dropdowns,
    open_tab,
    record_timing,
    shot,
    snippet_selector,
    wait_for_search,
)
from conftest import TESTS
from helpers import html

pytestmark = BROWSER_MARKS

WIDTHS = [390, 1280]
AXE = Path(os.environ.get("SNIPCHECK_AXE", TESTS / "axe" / "node_modules" / "axe-core" / "axe.min.js"))
# Pages of the chapter a reader reads (the generated index and search pages are Sphinx's own).
# Every source page under docs/, so a new page is checked without being listed here.
CHAPTER = sorted(f"{p.stem}.html" for p in (TESTS.parent / "docs").glob("*.md"))


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def width(request: pytest.FixtureRequest) -> int:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def visit(browser: Any, site: Site) -> Iterator[Callable[..., Any]]:
    """``visit(width, path, **context_options)``: ``path`` of the served site
    in a fresh page ``width`` px wide, loaded; every context closes after the test
    (a test that visits many pages closes each one when done with it: pages
    left open slow the next one down, 7.5 s to 21 s for inplace.html with
    SNIPCHECK_BROWSER_SLOWDOWN=10 behind four pages that axe had checked, when
    one test checked them all)."""
    contexts: list[Any] = []

    def open_page(width: int, path: str, **options: Any) -> Any:
        page = open_tab(browser, site, width, **options).page
        contexts.append(page.context)
        page.goto(site.url(path))
        page.wait_for_load_state("networkidle")
        return page

    yield open_page
    for context in contexts:
        context.close()  # closing a closed context again does nothing


# --- outputs and code on a phone and a desktop (reader.md #3, #4) -----------------------

SELECT_TAB = """i => { const label = document.querySelectorAll('article .sd-tab-set > label')[i];
    label.click(); return document.getElementById(label.htmlFor).checked; }"""
# Every code and output block of the article, in document order; ``shown``: laid out now
# (not in a hidden tab).
PANELS = """() => [...document.querySelectorAll('article div.highlight > pre')].map((pre, index) => {
    const s = getComputedStyle(pre), box = pre.getBoundingClientRect();
    const article = document.querySelector('article').getBoundingClientRect();
    const lines = pre.textContent.replace(/\\n$/, '').split('\\n').length;
    const lineHeight = parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.2;
    const padding = parseFloat(s.paddingTop) + parseFloat(s.paddingBottom);
    return {index, output: !!pre.closest('.snipcheck-output'), code: !!pre.closest('.snipcheck-code'),
            id: (pre.closest('.snipcheck-snippet') || {}).id || '', shown: box.width > 0 && box.height > 0,
            traceback: !!pre.closest('.snipcheck-traceback'), wraps: !!pre.closest('.snipcheck-wraps'),
            text: pre.textContent,
            whiteSpace: s.whiteSpace, overflowX: s.overflowX,
            scrolls: pre.scrollWidth > pre.clientWidth + 1, left: box.left, right: box.right,
            articleLeft: article.left, articleRight: article.right,
            rows: Math.round((box.height - padding - (pre.offsetHeight - pre.clientHeight)) / lineHeight), lines};
})"""
TAB_LABELS = "() => document.querySelectorAll('article .sd-tab-set > label').length"
# Pages with output panels: each traceback whose long lines must scroll, and blocks to photograph.
OUTPUT_PAGES = {
    "inplace.html": ("inplace/form3-sigmoid", ["inplace/form3-sigmoid", "inplace/what-is-saved", "inplace/forms-summary"]),
    "burn.html": ("burn/pytorch-side", ["burn/pytorch-side", "burn/autodiff-saved", "burn/cow-std"]),
    "myths.html": (None, ["myths/no-grad-safe", "myths/compile-out-of-place"]),
    "debugging.html": ("debugging/anomaly", ["debugging/setup", "debugging/anomaly", "debugging/versions"]),
    "tutorial.html": (None, ["tutorial/like", "tutorial/indexing", "tutorial/numpy-silent"]),
}
# Outputs of plain prose-like stdout (snipcheck.report.display.may_wrap) that wrap, with a line too
# long for a phone (its first block), and outputs no block of which may wrap: tables aligned by
# spaces, tensors printed over several rows (tracebacks never wrap: the test asserts it of each).
WRAPPED = {
    "inplace.html": ["inplace/saved-version", "inplace/relu-after-sigmoid", "inplace/fixes"],
    "myths.html": ["myths/no-grad-safe", "myths/clone-first"],
}
UNWRAPPED = {
    "inplace.html": ["inplace/what-is-saved", "inplace/forms-summary", "inplace/version-shared", "inplace/no-grad-detach"],
    "debugging.html": ["debugging/setup", "debugging/backward"],
}


def every_panel(page: Any) -> list[dict[str, Any]]:
    """Each block of the page measured where it is shown: once as loaded
    (dropdowns open), then with each tab of each tab set selected in turn."""
    open_dropdowns(page)
    seen: dict[int, dict[str, Any]] = {}
    for tab in [None, *range(page.evaluate(TAB_LABELS))]:
        if tab is not None:
            # Selecting a tab is synchronous (a radio input checked by its label), and
            # PANELS measures the layout that follows (getBoundingClientRect lays it out).
            assert page.evaluate(SELECT_TAB, tab), f"tab {tab} not selected"
        for panel in page.evaluate(PANELS):
            if panel["shown"]:
                seen.setdefault(panel["index"], panel)
    return [seen[i] for i in sorted(seen)]


@pytest.mark.parametrize("name", list(OUTPUT_PAGES))
def test_prose_outputs_wrap_and_the_rest_never_soft_wrap_and_scroll_inside_their_box(
    visit: Callable[..., Any], artifacts: Path, width: int, name: str
) -> None:
    page = visit(width, f"chapter/{name}")
    total = len(page.evaluate(PANELS))
    panels = every_panel(page)
    assert len(panels) == total  # every block was measured where a reader sees it (tabs included)
    outputs = [p for p in panels if p["output"]]
    code = [p for p in panels if p["code"]]
    assert outputs and code
    for panel in outputs + code:
        if panel["wraps"]:
            # plain stdout that reads as prose: it wraps at the box's edge, so its end,
            # the line's point, is in view on a phone without scrolling sideways
            assert panel["output"] and not panel["traceback"], panel
            assert panel["whiteSpace"] == "pre-wrap", panel
            assert not panel["scrolls"], panel
        else:
            assert panel["whiteSpace"] == "pre", panel
            assert panel["overflowX"] in ("auto", "scroll"), panel
            # one row per line: nothing wrapped onto a second row
            assert panel["rows"] == panel["lines"], panel
        # the block stays inside the article; what is wider scrolls inside it
        assert panel["left"] >= panel["articleLeft"] - 1 and panel["right"] <= panel["articleRight"] + 1, panel
    first = {}
    for panel in outputs:
        first.setdefault(panel["id"], panel)
    for snippet_id in WRAPPED.get(name, []):
        panel = first[snippet_selector(snippet_id)[1:]]
        assert panel["wraps"], panel
        if width == 390:
            assert panel["rows"] > panel["lines"], panel  # too long for a phone: it did wrap
    for snippet_id in UNWRAPPED.get(name, []):
        blocks = [p for p in outputs if p["id"] == snippet_selector(snippet_id)[1:]]
        assert blocks and not any(p["wraps"] for p in blocks), snippet_id
    # Traceback caret lines (^^^^) stay under the expression they mark.
    tracebacks = [p for p in outputs if p["traceback"] and "^" in p["text"]]
    for panel in tracebacks:
        assert caret_under_its_expression(panel["text"]), panel
    long_traceback, photographed = OUTPUT_PAGES[name]
    if long_traceback is not None:
        # its long lines scroll at both widths
        assert any(p["scrolls"] for p in tracebacks if p["id"] == snippet_selector(long_traceback)[1:]), tracebacks
    for snippet_id in photographed:
        # select the tab it is in (sphinx-design: input, label, then the tab's content)
        page.evaluate(
            "sel => { const tab = document.querySelector(sel).closest('.sd-tab-content');"
            " if (tab) tab.previousElementSibling.click(); }",
            snippet_selector(snippet_id),
        )
        box = page.locator(snippet_selector(snippet_id))
        box.scroll_into_view_if_needed()
        shot(box, artifacts, f"{width}px-{snippet_id.replace('/', '-')}")


def test_every_page_with_output_panels_is_checked_for_soft_wrap(site: Site) -> None:
    """A page that gains outputs joins OUTPUT_PAGES (the test above)."""
    with_outputs = {n for n in CHAPTER if html(site.chapter / n).select_one("article .snipcheck-output pre")}
    assert with_outputs == set(OUTPUT_PAGES)


def caret_under_its_expression(traceback: str) -> bool:
    """Every ``^^^`` line of a traceback starts under the expression of the line above."""
    lines = traceback.splitlines()
    carets = [i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"^"}]
    for i in carets:
        above = lines[i - 1]
        start = len(lines[i]) - len(lines[i].lstrip())
        if start >= len(above) or above[start] == " ":
            return False
    return bool(carets)


BACK_TO_TOP = """() => {
    const pill = document.querySelector('.back-to-top');
    const box = pill.getBoundingClientRect();
    const shown = getComputedStyle(pill).display !== 'none' && box.width > 0;
    const covered = shown ? [...document.querySelectorAll('article pre')].filter(pre => {
        const r = pre.getBoundingClientRect();
        return r.left < box.right && box.left < r.right && r.top < box.bottom && box.top < r.bottom;
    }).length : 0;
    return {shown, covered};
}"""


# Scrolls the window at once (Furo makes every scroll of the page smooth: an animation
# of about 600 ms that a later scroll cuts short where it happens to be) to a block
# (``[selector, null]``) or by ``[null, dy]`` CSS pixels, and resolves to the new
# scrollY once Furo has noted the position: in an animation frame that it asks for
# from its scroll listener, which runs before this one's (it was added first).
SCROLL = """async ([selector, dy]) => {
    const before = scrollY;
    if (selector) document.querySelector(selector).scrollIntoView({block: 'center', behavior: 'instant'});
    else window.scrollBy({top: dy, behavior: 'instant'});
    if (scrollY !== before)
        await new Promise(done => addEventListener('scroll', () => requestAnimationFrame(done), {once: true}));
    return scrollY;
}"""
SHOWN = "document.documentElement.classList.contains('show-back-to-top')"


@pytest.mark.parametrize("screen", [390, 1280, 1600], ids=lambda w: f"{w}px")
def test_the_back_to_top_pill_never_covers_code(visit: Callable[..., Any], artifacts: Path, screen: int) -> None:
    page = visit(screen, "chapter/inplace.html")
    # Furo shows the pill while the reader scrolls back up: stop over code blocks.
    seen = []
    for target in ("inplace/form3-sigmoid", "inplace/anomaly", "inplace/fixes"):
        at = page.evaluate(SCROLL, [snippet_selector(target), None])
        down = page.evaluate(SCROLL, [None, 1200])
        assert down > at and not page.evaluate(SHOWN), (target, at, down)  # scrolling down hides it
        up = page.evaluate(SCROLL, [None, -300])
        assert up == down - 300, (target, down, up)
        page.wait_for_function(SHOWN)
        state = page.evaluate(BACK_TO_TOP)
        seen.append(state)
        assert state["covered"] == 0, (target, state)
    shot(page, artifacts, f"{screen}px-scrolled-up")
    # Where the window has a margin beside the article, the pill is there and usable.
    assert any(s["shown"] for s in seen) == (screen >= 1440), seen


# --- the page's language (reader.md #1) ---------------------------------------------------------

CHROME_TEXT = """() => {
    const out = [];
    // The theme's labels, and snipcheck's inside the article; not the chapter's own words
    // (section titles in the page's table of contents and in the resume boxes' links).
    const outside = el => !el.closest('.toc-tree, .snipcheck-resume a') && (!el.closest('article')
        || el.closest('.snipcheck-output-label, .snipcheck-badges, .snipcheck-environment, '
                      + '.snipcheck-belief-head, .snipcheck-reading-time, .snipcheck-resume'));
    for (const el of document.querySelectorAll('body *')) {
        for (const attr of ['aria-label', 'title', 'placeholder', 'data-tooltip', 'alt']) {
            const value = el.getAttribute(attr);
            if (value && outside(el) && !el.closest('.snipcheck-snippet')) out.push(value);
        }
    }
    for (const el of document.querySelectorAll('.copybtn')) out.push(el.dataset.tooltip);
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!el || !n.textContent.trim() || el.closest('script, style, svg')) continue;
        if (getComputedStyle(el).display === 'none' || !outside(el)) continue;
        out.push(n.textContent.trim());
    }
    return out;
}"""
# Names that are the same in any language.
NAMES = {"PyTorch", "Sphinx", "Furo", "pradyunsg", "burn", "torch", "Python", "CPU", "Linux", "stdout", "stderr",
         "cuda", "rustc", "snipcheck", "JavaScript", "ReLU", "inplace", "True", "cpu", "Flex", "numpy"}  # fmt: skip


@pytest.mark.parametrize("name", CHAPTER)
def test_every_label_around_the_chapter_is_chinese(visit: Callable[..., Any], name: str) -> None:
    page = visit(1280, f"chapter/{name}")
    page.evaluate("document.documentElement.classList.add('show-back-to-top')")
    texts = page.evaluate(CHROME_TEXT)
    words = (w for t in texts for w in re.findall(r"(?<![0-9A-Za-z])[A-Za-z]{3,}(?![0-9A-Za-z])", t))
    english = Counter(w for w in words if w not in NAMES and not w.isupper())  # CUDA_VISIBLE_DEVICES is a name
    # Page titles in the navigation are the chapter's own words (they contain names only).
    assert english == Counter(), [t for t in texts if any(w in t for w in english)][:12]
    if name == "inplace.html":
        assert page.locator(".copybtn").first.get_attribute("data-tooltip") == "复制"
        assert {"下一页", "上一页", "回到顶部"} <= set(texts), texts[-20:]


def test_the_search_page_speaks_chinese(visit: Callable[..., Any]) -> None:
    page = visit(1280, "chapter/search.html?q=版本计数器")
    wait_for_search(page, excerpts=False)
    assert page.locator("#search-results h2").inner_text() == "搜索结果"
    assert re.fullmatch(r"搜索完成，匹配搜索条件的有 \d+ 个页面。", page.locator("p.search-summary").inner_text())


# --- search (reader.md #6) ------------------------------------------------------------------------

RESULTS = """() => [...document.querySelectorAll('#search-results ul.search > li')].map(li => ({
    href: li.querySelector('a').getAttribute('href'),
    excerpt: (li.querySelector('p.context') || {innerText: ''}).innerText}))"""


@pytest.mark.parametrize(
    ("query", "page_", "heading"),
    [
        ("版本计数器", "inplace.html", "版本计数器"),
        ("形态③", "inplace.html", "形态③"),
        ("_version", "inplace.html", None),
        ("add_", "inplace.html", None),
    ],
)
def test_search_lists_each_page_once_with_excerpts_free_of_line_numbers(
    visit: Callable[..., Any],
    artifacts: Path,
    record_property: Callable[[str, object], None],
    query: str,
    page_: str,
    heading: str | None,
) -> None:
    page = visit(1280, f"chapter/search.html?q={query}")
    page.wait_for_function(SEARCH_LISTED)
    finished = page.evaluate("performance.now()")
    # Excerpts are fetched after the list appears: wait until every result has one.
    page.wait_for_function(SEARCH_EXCERPTS)
    results = page.evaluate(RESULTS)
    shot(page, artifacts, f"search-{query}")
    # A figure, recorded and printed, never asserted: it depends on the machine and its load.
    record_timing(artifacts, f"{query}\t{finished:.0f} ms from navigation to the finished result list")
    record_property("search_ms", round(finished))
    docs = Counter(urlsplit(unquote(r["href"])).path for r in results)
    assert docs[page_] == 1, results
    assert max(docs.values()) == 1, docs  # each page listed once
    for r in results:
        # No line number glued to the code it numbers ("1import torch 2 3plain = ...").
        assert not re.search(r"(?:^|\s)\d+(?:import|print|torch|from|def|[a-z_]+\s=)", r["excerpt"]), r
    if heading is not None:
        (hit,) = [r for r in results if urlsplit(unquote(r["href"])).path == page_]
        fragment = urlsplit(unquote(hit["href"])).fragment
        assert fragment, hit
        title = page.evaluate(
            "async ([doc, id]) => { const html = await (await fetch(doc)).text();"
            " const d = new DOMParser().parseFromString(html, 'text/html');"
            " return d.getElementById(id).querySelector('h1,h2,h3').textContent; }",
            [page_, fragment],
        )
        assert heading in title, (hit, title)


# --- the landing page and the page of runner differences (issue 34) -------------------------------

#: What sticks out sideways at this width: the page itself, and each block of the article's text
#: (a paragraph, a list item, a heading) that reaches past the window or scrolls inside itself.
SIDEWAYS = """() => ({page: document.documentElement.scrollWidth, window: innerWidth,
    wide: [...document.querySelectorAll('article p, article li, article h1, article h2, article table')]
        .filter(e => e.getBoundingClientRect().right > innerWidth + 1 || e.scrollWidth > e.clientWidth + 1)
        .map(e => e.innerText.slice(0, 80))})"""
#: The sections of the landing page: each heading and the text under it, up to the next heading.
SECTIONS = """() => Object.fromEntries([...document.querySelectorAll('article section section')].map(s => [
    s.querySelector('h2').innerText.replace(/[#¶]$/, '').trim(),
    {text: [...s.children].filter(e => e.tagName === 'P').map(e => e.innerText).join('\\n'),
     links: [...s.querySelectorAll('a[href]')].map(a => a.getAttribute('href').split('#')[0])}]))"""


def no_sideways(page: Any) -> None:
    found = page.evaluate(SIDEWAYS)
    assert found["page"] <= found["window"] and found["wide"] == [], found


def test_the_landing_page_is_for_readers_and_links_the_runner_differences(
    visit: Callable[..., Any], artifacts: Path, width: int
) -> None:
    page = visit(width, "chapter/index.html")
    sections = page.evaluate(SECTIONS)
    assert list(sections) == ["这一章教什么", "按这个顺序读", "为什么可以相信这里的每一个输出"], list(sections)
    why = sections["为什么可以相信这里的每一个输出"]
    assert 3 <= why["text"].count("。") <= 4, why["text"]  # three or four sentences
    assert {"versions.html", "differences.html", "contributing.html"} <= set(why["links"]), why
    # the list of runner differences is on a page of its own, not before the first tensor
    assert page.locator("ul.snipcheck-differences").count() == 0
    no_sideways(page)
    page.screenshot(path=str(artifacts / f"landing-{width}px.png"), full_page=True)
    page.locator("article a[href='differences.html']").first.click()
    page.wait_for_url("**/differences.html")
    items = page.locator("article ul.snipcheck-differences > li")
    assert items.count() >= 5
    assert "环境变量" in page.locator("article").inner_text()  # what a run does have in common with a terminal's
    no_sideways(page)
    page.screenshot(path=str(artifacts / f"differences-{width}px.png"), full_page=True)


# --- the versions page (reader.md #7) -------------------------------------------------------------


def test_versions_page_table_reads_and_diffs_colour_both_sides(
    visit: Callable[..., Any], artifacts: Path, width: int
) -> None:
    page = visit(width, "chapter/versions.html")
    heads = page.evaluate(
        """() => [...document.querySelectorAll('table.snipcheck-versions-table th')].map(th => {
            const s = getComputedStyle(th), box = th.getBoundingClientRect();
            return {text: th.innerText, height: box.height, lineHeight: parseFloat(s.lineHeight) || 20,
                    padding: parseFloat(s.paddingTop) + parseFloat(s.paddingBottom)};
        })"""
    )
    # the verdict first (issue 34), and in view on a phone without scrolling the table sideways
    assert [h["text"] for h in heads][0] == "结论" and [h["text"] for h in heads][3] == "一致"
    for head in heads:  # one line each: no "一\\n致"
        assert head["height"] - head["padding"] < 1.6 * head["lineHeight"], head
    verdicts = page.evaluate(
        """() => [...document.querySelectorAll('table.snipcheck-versions-table tbody tr td:first-child')]
            .map(td => ({text: td.innerText, right: td.getBoundingClientRect().right, width: innerWidth}))"""
    )
    assert verdicts and all(v["right"] <= v["width"] for v in verdicts), verdicts
    assert {v["text"] for v in verdicts} <= {"本章成立", "所覆盖的部分成立", "有漂移"}, verdicts
    table = page.locator("table.snipcheck-versions-table")
    shot(table, artifacts, f"{width}px-versions-table")
    colours = page.evaluate(
        """() => ['gd', 'gi'].map(k => [...document.querySelectorAll('.snipcheck-versions-masked .highlight .' + k)]
            .map(e => getComputedStyle(e).backgroundColor))"""
    )
    removed, added = colours
    assert removed and added
    transparent = "rgba(0, 0, 0, 0)"
    assert transparent not in removed + added
    assert set(removed).isdisjoint(added)
    explanation = page.locator(".snipcheck-versions-cuda-on-cpu").inner_text()
    assert "CUDA" in explanation and "没有 GPU" in explanation and "CPU 上运行" in explanation


# --- keyboard and accessibility (issue 13 §8) -----------------------------------------------------


#: Resolves once a ``toggle`` event has been handled and an animation frame
#: has run after it: snipcheck.js makes the blocks a dropdown shows
#: keyboard-scrollable in the frame after the toggle (see OPEN_DROPDOWNS).
#: Wrapped in an object: evaluate_handle would await a promise it is given.
TOGGLE_HANDLED = """() => ({seen: new Promise(done => document.addEventListener(
    'toggle', () => requestAnimationFrame(() => done(true)), {capture: true, once: true}))})"""
#: Whether a block holds the focus, is wider than its box, and how far it is scrolled.
SCROLL_STATE = """el => ({focused: document.activeElement === el,
    scrollable: el.scrollWidth > el.clientWidth + 1, left: el.scrollLeft})"""


def test_tabs_and_dropdowns_work_from_the_keyboard(visit: Callable[..., Any], artifacts: Path) -> None:
    page = visit(1280, "chapter/burn.html")
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('.sd-tab-set')"):
            break
    tab_set = page.locator(".sd-tab-set").first
    first, second = tab_set.locator(":scope > input").all()[:2]
    assert page.evaluate("document.activeElement.id") == first.get_attribute("id")
    outline = page.evaluate("getComputedStyle(document.activeElement.nextElementSibling).outlineStyle")
    assert outline != "none"  # the focused tab shows where the keyboard is
    page.keyboard.press("ArrowRight")
    assert second.is_checked()
    contents = tab_set.locator(":scope > .sd-tab-content")
    assert not contents.nth(0).is_visible() and contents.nth(1).is_visible()
    shot(tab_set, artifacts, "keyboard-tab-burn")
    page = visit(1280, "chapter/myths.html")
    summary = page.locator("details.sd-dropdown > summary").first
    summary.focus()
    toggled = page.evaluate_handle(TOGGLE_HANDLED)  # listens before the key is pressed
    page.keyboard.press("Enter")
    page.evaluate("toggled => toggled.seen", toggled)  # the dropdown's toggle and snipcheck.js's frame after it
    assert page.evaluate("document.querySelector('details.sd-dropdown').open")
    # A block wider than its box can be scrolled from the keyboard.  One element,
    # held: the locator would be looked up again at each step.
    wide = page.locator("div.highlight > pre[tabindex='0']").first.element_handle()
    wide.focus()
    assert page.evaluate(SCROLL_STATE, wide) == {"focused": True, "scrollable": True, "left": 0}
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    # keyboard scrolling is animated: wait for it to move; if it never does, say
    # what the block's state was (focus lost, or nothing to scroll)
    try:
        page.wait_for_function("el => el.scrollLeft > 0", arg=wide, timeout=TIMEOUT_MS // 2)
    except Exception:  # playwright's TimeoutError
        pytest.fail(f"ArrowRight never scrolled the focused block: {page.evaluate(SCROLL_STATE, wide)}")


# Every page a reader can open: the chapter's, a search with results, the index.
AXE_PAGES = [*CHAPTER, "search.html?q=版本计数器", "genindex.html"]


# One test a page (not one for all ten): each is bounded by the per-test time
# limit on its own (axe on ten pages took 28 s idle and 456 s at
# SNIPCHECK_BROWSER_SLOWDOWN=10, three quarters of that limit).
@pytest.mark.parametrize("name", AXE_PAGES, ids=lambda n: n.replace("?q=版本计数器", "-query"))
@pytest.mark.parametrize(
    ("screen", "scheme"), [(1280, "light"), (390, "light"), (1280, "dark")], ids=["1280px", "390px", "1280px-dark"]
)
def test_axe_finds_no_serious_or_critical_violation_on_any_page(
    visit: Callable[..., Any], artifacts: Path, screen: int, scheme: str, name: str
) -> None:
    if not AXE.is_file():
        missing(f"axe-core is not installed at {AXE} (npm ci --prefix tests/axe)")
    page = visit(screen, f"chapter/{name}", color_scheme=scheme)
    if name.startswith("search.html"):
        wait_for_search(page)  # the whole result list, excerpts included, is checked
    open_dropdowns(page)  # and checked as the page's scripts leave the blocks they show
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    violations = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        nodes: v.nodes.slice(0, 5).map(n => [n.target.join(' '), n.failureSummary])}))"""
    )
    stem = name.split(".html")[0] + ("-query" if "?" in name else "")
    report = json.dumps(violations, ensure_ascii=False, indent=1)
    (artifacts / f"axe-{screen}px-{scheme}-{stem}.json").write_text(report, encoding="utf-8")
    assert violations == [], report[:4000]
