"""New examples of the kind of ``shared/cases/reader.md``: English UI on Chinese pages.

Walked again after the layered layout (reader.md's own cases are in
tests/site/test_chapter.py, test_browser_reader.py, test_cjk.py and, for the
labels, test_i18n.py, which builds the ``i18n`` root once with execution on).
These are the states of a Chinese page that test does not build: a page of a
build that executed nothing (``snipcheck_execute = False``, the environment box
and the "not executed" labels), and a rebuild whose outputs come from the
result cache (the stamp under each output says so).  Neither may show an
English word of snipcheck's own.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers import html
from i18n_support import NAMES, ui_text


def english_words(text: str) -> set[str]:
    """Words of three letters or more that are not names kept in any language (as test_i18n counts them)."""
    words = re.findall(r"(?<![0-9A-Za-z])[A-Za-z]{3,}(?![0-9A-Za-z])", text)
    return {w for w in words if w not in NAMES and not w.isupper()}


@pytest.mark.sphinx(
    "html", testroot="i18n", confoverrides={"language": "zh_CN", "snipcheck_execute": False, "snipcheck_reference": "torch 2.13.0"}
)
def test_a_chinese_page_of_a_build_that_executed_nothing_holds_no_english_ui(app) -> None:
    app.build()
    index = html(Path(app.outdir) / "index.html")
    text = ui_text(index)
    assert english_words(text) == set(), text
    box = index.select_one(".snipcheck-environment").get_text()
    assert "This build did not execute code" not in box
    assert "本次构建未执行代码" in text, text


def test_the_stamp_of_a_cached_result_on_a_chinese_page_is_chinese(make_app, rootdir: Path, tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(rootdir / "test-i18n", srcdir)
    stamps = []
    for _ in range(2):  # a run, then a fresh environment whose results come from the cache
        app = make_app("html", srcdir=srcdir, freshenv=True, confoverrides={"language": "zh_CN"})
        app.build()
        index = html(Path(app.outdir) / "index.html")
        stamps.append(" ".join(index.select_one(".snipcheck-stamp").get_text().split()))
        assert english_words(ui_text(index)) == set(), ui_text(index)
    ran, cached = stamps
    assert "缓存的运行结果" in cached and "缓存的运行结果" not in ran, (ran, cached)
    assert "cache" not in cached, cached
