"""Rust snippets (issue 4): compile errors, panics tagged or not, on the test-rustcases root.

Each snippet is built with cargo (offline, std only) and run like a Python one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import html, snipcheck_warnings

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (a Rust toolchain)")


@pytest.fixture
def built(app, tmp_path: Path):  # noqa: ANN001, ANN201
    # State the tagged panic's output from a real run first, as a contributor would.
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "record-cache"))
    out = subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(app.srcdir), "--docs", str(app.srcdir), "record", "rs/panics"],
        env=env, capture_output=True, text=True, check=False,
    )
    assert "rs/panics: recorded" in out.stdout, out.stdout + out.stderr
    app.build()
    return app, snipcheck_warnings(app.warning.getvalue())


@pytest.mark.sphinx("html", testroot="rustcases")
def test_a_compile_error_is_a_located_exec_warning_shown_as_rustc_prints_it(built) -> None:  # noqa: ANN001
    app, warnings = built
    (broken,) = [w for w in warnings if "'rs/broken'" in w and "[snipcheck.exec]" in w]
    assert broken.startswith(f"{app.srcdir / 'index.md'}:3: WARNING: snippet 'rs/broken': ")
    assert "compile error: error[E0308]: mismatched types" in broken
    page = html(Path(app.outdir) / "index.html")
    shown = page.find(id="snippet-rs-broken").get_text()
    assert "--> snippets/rs/broken.rs:2:18" in shown  # rustc's own message, naming the snippet file


@pytest.mark.sphinx("html", testroot="rustcases")
def test_the_page_still_builds_around_failing_rust_snippets(built) -> None:  # noqa: ANN001
    app, warnings = built
    assert not [w for w in warnings if "'rs/fine'" in w]
    page = html(Path(app.outdir) / "index.html")
    assert "still here" in page.find(id="snippet-rs-fine").find(class_="snipcheck-output").get_text()
    assert "rustc " in page.find(id="snippet-rs-fine").find(class_="snipcheck-stamp").get_text()


@pytest.mark.sphinx("html", testroot="rustcases")
def test_a_tagged_panic_passes_and_an_untagged_one_is_reported(built) -> None:  # noqa: ANN001
    app, warnings = built
    assert not [w for w in warnings if "'rs/panics'" in w]
    (surprise,) = [w for w in warnings if "'rs/surprise'" in w and "[snipcheck.exec]" in w]
    assert "raised panic: attempt to divide by zero" in surprise
    assert 'add expect = "panic" to its tag block' in surprise
    page = html(Path(app.outdir) / "index.html")
    out = page.find(id="snippet-rs-panics").find(class_="snipcheck-output").get_text()
    assert "about to index" in out and "index out of bounds" in out
