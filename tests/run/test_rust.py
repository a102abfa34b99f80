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
from helpers import html, snipcheck_cli, snipcheck_warnings
from faults_support import sphinx_build

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (a Rust toolchain)")


@pytest.fixture
def built(app, tmp_path: Path):
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
def test_a_compile_error_is_a_located_exec_warning_shown_as_rustc_prints_it(built) -> None:
    app, warnings = built
    (broken,) = [w for w in warnings if "'rs/broken'" in w and "[snipcheck.exec]" in w]
    assert broken.startswith(f"{app.srcdir / 'index.md'}:3: WARNING: snippet 'rs/broken': ")
    assert "compile error: error[E0308]: mismatched types" in broken
    page = html(Path(app.outdir) / "index.html")
    shown = page.find(id="snippet-rs-broken").get_text()
    assert "--> snippets/rs/broken.rs:2:18" in shown  # rustc's own message, naming the snippet file


@pytest.mark.sphinx("html", testroot="rustcases")
def test_the_page_still_builds_around_failing_rust_snippets(built) -> None:
    app, warnings = built
    assert not [w for w in warnings if "'rs/fine'" in w]
    page = html(Path(app.outdir) / "index.html")
    assert "still here" in page.find(id="snippet-rs-fine").find(class_="snipcheck-output").get_text()
    assert "rustc " in page.find(id="snippet-rs-fine").find(class_="snipcheck-stamp").get_text()


@pytest.mark.sphinx("html", testroot="rustcases")
def test_a_tagged_panic_passes_and_an_untagged_one_is_reported(built) -> None:
    app, warnings = built
    assert not [w for w in warnings if "'rs/panics'" in w]
    (surprise,) = [w for w in warnings if "'rs/surprise'" in w and "[snipcheck.exec]" in w]
    assert "raised panic: attempt to divide by zero" in surprise
    assert 'add expect = "panic" to its tag block' in surprise
    page = html(Path(app.outdir) / "index.html")
    out = page.find(id="snippet-rs-panics").find(class_="snipcheck-output").get_text()
    assert "about to index" in out and "index out of bounds" in out


def rust_project(root: Path) -> Path:
    """An ``.rst`` project with no snippets yet (Rust needs no preload)."""
    (root / "snippets").mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["snipcheck"]\nsnipcheck_preload = []\n')
    return root


def test_rust_code_written_in_the_page_is_recorded_built_and_checked(tmp_path: Path) -> None:
    root = rust_project(tmp_path / "p")
    code = '.. snippet-code:: rs/inline\n   :language: rust\n\n   fn main() {\n       println!("{}", 6 * 7);\n   }\n'
    (root / "index.rst").write_text(f"Inline Rust\n===========\n\n{code}\n.. snippet:: rs/inline\n")
    cache = tmp_path / "cache"
    recorded = snipcheck_cli(root, "record", "rs/inline", cache=cache)
    assert "rs/inline: recorded" in recorded.stdout, recorded.stdout + recorded.stderr
    assert "\n.. snippet:: rs/inline\n\n   42\n" in (root / "index.rst").read_text()
    built = sphinx_build(root, tmp_path / "b", cache)
    assert built.statuscode == 0, built.warnings_text
    page = html(built.outdir / "index.html").get_text()
    assert 'println!("{}", 6 * 7);' in page and "42" in page
    # the stated output is compared with a real build and run of the Rust code
    (root / "index.rst").write_text((root / "index.rst").read_text().replace("   42\n", "   43\n"))
    drifted = sphinx_build(root, tmp_path / "b", cache)
    assert drifted.statuscode == 1
    assert "snippet 'rs/inline': the stated output differs" in drifted.warnings_text


def test_new_rust_scaffolds_a_rust_snippet_that_record_fills(tmp_path: Path) -> None:
    root = rust_project(tmp_path / "p")
    (root / "index.rst").write_text("Scaffold\n========\n")
    made = snipcheck_cli(root, "new", "rs/first", "--rust")
    assert made.returncode == 0, made.stderr
    source = root / "snippets" / "rs" / "first.rs"
    assert source.is_file() and "fn main()" in source.read_text()
    assert ".. snippet:: rs/first" in made.stdout  # the page's own markup, to paste
    (root / "index.rst").write_text("Scaffold\n========\n\n.. snippet:: rs/first\n")
    recorded = snipcheck_cli(root, "record", "rs/first", cache=tmp_path / "cache")
    assert "rs/first: recorded" in recorded.stdout, recorded.stdout + recorded.stderr
    built = sphinx_build(root, tmp_path / "b", tmp_path / "cache")
    assert built.statuscode == 0, built.warnings_text
