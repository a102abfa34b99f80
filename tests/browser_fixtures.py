"""Fixtures of the browser tests (a pytest plugin: ``tests/conftest.py`` loads it).

The chapter is built once per session (into a temporary directory, with
``-W``), together with the tiny project ``tests/roots/test-browser`` whose
snippet prints markup; both are served by a local ``http.server`` on
127.0.0.1 and opened in headless Chromium.  ``tests/site/test_browser.py`` and
``tests/site/test_browser_reader.py`` share the one build, server and browser.

Screenshots go to ``$SNIPCHECK_ARTIFACTS`` (default: a directory under
pytest's temporary directory); the session prints where.

Needs the ``playwright`` Python package and a Chromium (Debian's
``/usr/bin/chromium``, or ``$SNIPCHECK_CHROMIUM``); skipped, saying which is
missing, without them, except where ``SNIPCHECK_REQUIRE_BROWSER=1`` (CI sets
it), where a missing browser fails them.  Playwright's own browser download
is never used.

``SNIPCHECK_BROWSER_SLOWDOWN=N`` (off by default) runs every page as a
loaded machine would, only more so: Chromium's CPU throttled N times
(DevTools' ``Emulation.setCPUThrottlingRate``) and every page timer
(``setTimeout``, ``setInterval``) firing N times later; ``=C,T`` sets the
two apart (``=1,100``: timers 100 times late, the CPU at full speed).  A
test that passes only because a step was quick fails under it; the tests
wait for conditions (an element, an event, a finished search), never for
time, so they pass.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, ROOTS

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
# What one Playwright step (a navigation, a wait for a condition, a click) may take
# before it counts as hung.  Loading inplace.html takes about 1 s idle and 7.5 s
# with SNIPCHECK_BROWSER_SLOWDOWN=10; 20 s (the former limit) was exceeded there
# once a test held four other pages open.  A step that takes a minute is a hang.
TIMEOUT_MS = 60_000

#: The marks of every browser test module (``pytestmark``): the ``browser``
#: marker, and pytest-timeout's limit (pyproject.toml's) on the test's own
#: steps only.  The session fixtures build the chapter and the markup project
#: (87 s from a fresh clone on a loaded two-core machine: every snippet runs)
#: and launch Chromium; counted against whichever test comes first, they made
#: its limit depend on the cache and on the machine's load.  They are bounded
#: by their own limits: the build's ``timeout=1800``, Playwright's 3 minutes
#: for the launch.
BROWSER_MARKS = [pytest.mark.browser, pytest.mark.timeout(func_only=True)]


def slowdown(setting: str | None) -> tuple[float, float]:
    """``SNIPCHECK_BROWSER_SLOWDOWN`` read as (CPU, timers) factors: ``"10"``
    is (10, 10), ``"1,100"`` is (1, 100), unset is (1, 1).

    :raises ValueError: for anything else, or a factor below 1.
    """
    if not setting:
        return 1.0, 1.0
    wrong = ValueError(f"SNIPCHECK_BROWSER_SLOWDOWN={setting!r}: give N or CPU,TIMERS, each a number >= 1")
    try:
        parts = [float(part) for part in setting.split(",")]
    except ValueError:
        raise wrong from None
    if len(parts) not in (1, 2) or not all(part >= 1 for part in parts):  # NaN fails >= too
        raise wrong
    return parts[0], parts[-1]


CPU_SLOWDOWN, TIMER_SLOWDOWN = slowdown(os.environ.get("SNIPCHECK_BROWSER_SLOWDOWN"))
# Every page timer fires TIMER_SLOWDOWN times later (a delay of 0 as late as one of 1 ms).
LATE_TIMERS = """(() => {
    const factor = %r, timeout = window.setTimeout, interval = window.setInterval;
    const late = delay => Math.max(Number(delay) || 0, 1) * factor;
    window.setTimeout = (handler, delay, ...args) => timeout(handler, late(delay), ...args);
    window.setInterval = (handler, delay, ...args) => interval(handler, late(delay), ...args);
})();"""


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
    directory); printed at the end of the session, past output capture,
    with the figures the tests measured (:data:`TIMINGS`: recorded, never
    asserted, since they depend on the machine)."""
    wanted = os.environ.get("SNIPCHECK_ARTIFACTS")
    directory = Path(wanted) if wanted else tmp_path_factory.mktemp("browser-artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / TIMINGS).unlink(missing_ok=True)  # this session's figures only
    yield directory
    shots = sorted(p.name for p in directory.glob("*.png"))
    timings = directory / TIMINGS
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nbrowser screenshots ({len(shots)}): {directory}")
        if timings.is_file():
            print(f"search, time to the finished result list ({timings}):")
            for line in timings.read_text(encoding="utf-8").splitlines():
                print(f"  {line}")


#: The file under the artifacts directory where the search test writes the
#: time from navigation to its finished result list, one line a query.
TIMINGS = "search-timings.txt"


def record_timing(artifacts: Path, line: str) -> None:
    """Append one measured figure to :data:`TIMINGS` (printed at the end of the session)."""
    with open(artifacts / TIMINGS, "a", encoding="utf-8") as log:
        log.write(line + "\n")


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
        # Playwright's own launch limit (3 minutes): a first launch on a fresh
        # machine may build its font cache first.
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
    opened = open_tab(browser, site, 1280)
    try:
        yield opened
    finally:
        opened.page.context.close()


def shot(target: Any, artifacts: Path, name: str) -> None:
    """Screenshot a page or an element into the artifacts directory."""
    target.screenshot(path=str(artifacts / f"{name}.png"))


def snippet_selector(snippet_id: str) -> str:
    return "#snippet-" + snippet_id.replace("/", "-")


def open_tab(browser: Any, site: Site, width: int, height: int = 900, **options: Any) -> Tab:
    """A page in a fresh context ``width`` × ``height`` CSS pixels wide
    (close it with ``tab.page.context.close()``); the ``tab`` fixture is this at 1280."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN", **options)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.base.rstrip("/"))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    if CPU_SLOWDOWN > 1:
        page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    if TIMER_SLOWDOWN > 1:
        page.add_init_script(LATE_TIMERS % TIMER_SLOWDOWN)
    opened = Tab(page, [], [], [])
    page.on("request", lambda r: opened.requests.append(r.url))
    page.on("requestfailed", lambda r: opened.failed.append(r.url))
    page.on("response", lambda r: opened.failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    return opened


# --- waiting for the page, never for time ------------------------------------------

#: Opens every closed ``<details>`` of the page and resolves (to how many it
#: opened) once each one's ``toggle`` event has been handled and an animation
#: frame has run after the last: snipcheck.js makes the blocks a dropdown
#: showed keyboard-scrollable in the frame after that ``toggle`` (its listener
#: was added before this one, so its frame comes first).
OPEN_DROPDOWNS = """() => new Promise(done => {
    const closed = [...document.querySelectorAll('details:not([open])')];
    if (!closed.length) return done(0);
    let left = closed.length;
    const seen = event => {
        if (!closed.includes(event.target) || --left) return;
        document.removeEventListener('toggle', seen, true);
        requestAnimationFrame(() => done(closed.length));
    };
    document.addEventListener('toggle', seen, true);
    closed.forEach(d => d.open = true);
})"""


def open_dropdowns(page: Any) -> int:
    """Open every dropdown of ``page`` and wait until the page's scripts have
    seen them open (:data:`OPEN_DROPDOWNS`); returns how many were closed."""
    return int(page.evaluate(OPEN_DROPDOWNS))


#: True once Sphinx's search page has listed every result: searchtools.js
#: makes the summary paragraph (empty) at once, adds one result every 5 ms
#: (a timer) and writes the summary after the last.
SEARCH_LISTED = "() => !!document.querySelector('#search-results p.search-summary')?.innerText"
#: True once every listed result has its excerpt (each one arrives with its own fetch).
SEARCH_EXCERPTS = """() => [...document.querySelectorAll('#search-results ul.search > li')]
    .every(li => li.querySelector('p.context'))"""


def wait_for_search(page: Any, excerpts: bool = True) -> None:
    """Wait until the search page has listed every result (:data:`SEARCH_LISTED`)
    and, with ``excerpts``, until each has its excerpt (:data:`SEARCH_EXCERPTS`)."""
    page.wait_for_function(SEARCH_LISTED)
    if excerpts:
        page.wait_for_function(SEARCH_EXCERPTS)
