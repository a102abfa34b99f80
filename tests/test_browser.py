"""The published pages in a real browser (headless Chromium through Playwright).

The chapter is built once per session (into a temporary directory, with
``-W``), together with the tiny project ``tests/roots/test-browser`` whose
snippet prints markup; both are served by a local ``http.server`` on
127.0.0.1 and opened in headless Chromium.  The tests check what a reader
sees: stdout and stderr panels that look different and say which is which, a
copy button that copies the code and nothing else, captured output shown as
text (never run), no request to any other host, Chinese full-text search,
the checkpoint dropdowns, the computed reading aids and the flowchart.

Screenshots go to ``$SNIPCHECK_ARTIFACTS`` (default: a directory under
pytest's temporary directory); the session prints where.

Needs the ``playwright`` Python package and a Chromium (Debian's
``/usr/bin/chromium``, or ``$SNIPCHECK_CHROMIUM``); skipped, saying which is
missing, without them, except where ``SNIPCHECK_REQUIRE_BROWSER=1`` (CI sets
it), where a missing browser fails them.  Playwright's own browser download
is never used.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from conftest import REPO, ROOTS
from helpers import html
from snipcheck.snippets import load

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Read at import, before conftest's autouse fixture hides it from each test: a
# developer's result cache makes the session's chapter build instant.
USER_CACHE = os.environ.get("SNIPCHECK_CACHE_DIR")
TIMEOUT_MS = 20_000


def chromium_path() -> str | None:
    """The Chromium to drive: ``$SNIPCHECK_CHROMIUM``, else ``chromium`` on PATH."""
    explicit = os.environ.get("SNIPCHECK_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


# --- session fixtures: build, serve, launch ---------------------------------------


def sphinx_build(project: Path, out: Path, cache: Path) -> None:
    """Build ``project`` (its sources in ``docs/`` when it has one) into ``out`` with -W."""
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache))
    source = "docs" if (project / "docs").is_dir() else "."
    args = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-c", ".",
        "-d", str(out.parent / f"{out.name}-doctrees"), "-D", f"snipcheck_report_dir={out.parent / 'report'}",
        source, str(out),
    ]  # fmt: skip
    done = subprocess.run(
        args, cwd=project, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    assert done.returncode == 0, f"building {project} failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"


@dataclass(frozen=True)
class Site:
    """The built sites, served: ``base`` is ``http://127.0.0.1:PORT/``."""

    root: Path  # served directory: chapter/ and markup/ below it
    base: str

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def chapter(self) -> Path:
        return self.root / "chapter"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("browser-site")
    cache = Path(USER_CACHE) if USER_CACHE else tmp_path_factory.mktemp("browser-cache")
    sphinx_build(REPO, root / "chapter", cache)
    markup = tmp_path_factory.mktemp("browser-markup-src")
    shutil.copytree(ROOTS / "test-browser", markup, dirs_exist_ok=True)
    sphinx_build(markup, root / "markup", cache)
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(root, f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Path]:
    """Where screenshots go (``$SNIPCHECK_ARTIFACTS``, else a temporary
    directory); printed at the end of the session, past output capture."""
    wanted = os.environ.get("SNIPCHECK_ARTIFACTS")
    directory = Path(wanted) if wanted else tmp_path_factory.mktemp("browser-artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    yield directory
    shots = sorted(p.name for p in directory.glob("*.png"))
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nbrowser screenshots ({len(shots)}): {directory}")


def missing(reason: str) -> None:
    """Skip the browser tests, or fail them where they must run
    (``SNIPCHECK_REQUIRE_BROWSER=1``, set by ``.ci/run``)."""
    if os.environ.get("SNIPCHECK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required (SNIPCHECK_REQUIRE_BROWSER=1) but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright import sync_api
    except ImportError:
        missing("the playwright package is not installed (pip install playwright)")
    executable = chromium_path()
    if executable is None:
        missing("no Chromium found (apt-get install chromium, or set SNIPCHECK_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Tab:
    """One page in a fresh browser context, with every request it made."""

    page: Any
    requests: list[str]
    failed: list[str]
    errors: list[str]


@pytest.fixture
def tab(browser: Any, site: Site) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.base.rstrip("/"))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    opened = Tab(page, [], [], [])
    page.on("request", lambda r: opened.requests.append(r.url))
    page.on("requestfailed", lambda r: opened.failed.append(r.url))
    page.on("response", lambda r: opened.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    try:
        yield opened
    finally:
        context.close()


def shot(target: Any, artifacts: Path, name: str) -> None:
    """Screenshot a page or an element into the artifacts directory."""
    target.screenshot(path=str(artifacts / f"{name}.png"))


def snippet_selector(snippet_id: str) -> str:
    return "#snippet-" + snippet_id.replace("/", "-")


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
            const box = el.getBoundingClientRect();
            const s = getComputedStyle(el), label = getComputedStyle(el, '::before');
            return {classes: [...el.classList], background: s.backgroundColor, border: s.borderTopColor,
                    label: label.content, labelColor: label.color, visible: box.width > 0 && box.height > 0};
        })"""
    )
    stdout = [s for s in styles if "snipcheck-stdout" in s["classes"]]
    stderr = [s for s in styles if "snipcheck-stderr" in s["classes"]]
    assert stdout and stderr
    assert all(s["visible"] for s in styles)
    assert {s["label"] for s in stdout} == {'"stdout"'}
    assert all(s["label"].startswith('"stderr') for s in stderr), {s["label"] for s in stderr}
    for out in stdout:
        for err in stderr:
            assert out["background"] != err["background"], (out, err)
            assert out["labelColor"] != err["labelColor"], (out, err)
    # The anomaly snippet has both kinds of stderr: a warning and a traceback, each labelled.
    kinds = anomaly.locator(".snipcheck-output > .output").evaluate_all(
        "els => els.map(el => getComputedStyle(el, '::before').content)"
    )
    assert kinds == ['"stderr · 警告 warning"', '"stderr · 未捕获的异常 traceback"']
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
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        requests: list[str] = []
        failed: list[str] = []
        page.on("request", lambda r, seen=requests: seen.append(r.url))
        page.on("requestfailed", lambda r, bad=failed: bad.append(r.url))
        page.on(
            "response", lambda r, bad=failed: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None
        )
        page.goto(site.url(f"chapter/{name}"))
        page.wait_for_load_state("networkidle")
        # Open every dropdown and tab so that what they load is loaded too.
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_load_state("networkidle")
        if name == "inplace.html":
            shot(page, artifacts, "page-inplace-top")
        context.close()
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
    results.first.wait_for()
    page.wait_for_function("document.querySelector('#search-results p.search-summary') !== null")
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


def test_the_flowchart_is_a_local_svg_with_chinese_labels(tab: Tab, site: Site, artifacts: Path) -> None:
    page = tab.page
    page.goto(site.url("chapter/burn.html"))
    diagram = page.locator("div.graphviz object")
    data = diagram.get_attribute("data")
    assert data and data.startswith("_images/") and data.endswith(".svg"), data
    diagram.scroll_into_view_if_needed()
    page.wait_for_load_state("networkidle")
    box = diagram.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 200
    assert any(u.endswith(data) and u.startswith(site.base) for u in tab.requests)
    svg = (site.chapter / data).read_text(encoding="utf-8")
    for label in ("版本号 0 变 1", "backward 报错", "另开缓冲 16 MiB", "梯度用旧的 x"):
        assert label in svg
    # Above the first section: near the top of the page.
    assert box["y"] < page.locator("h2").first.bounding_box()["y"]
    shot(page.locator("div.graphviz").first, artifacts, "burn-flowchart")
