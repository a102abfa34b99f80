"""Chinese search (sphinxext/search_zh.py): section entries for the dictionary's
terms, and the work-around for Sphinx 9.0's unbound ``ChineseStemmer``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import html
from snipcheck_chapter.search_zh import fixed_chinese, terms


def search_index(outdir: Path) -> dict:
    text = (outdir / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def section_ids(page: Path) -> dict[str, str]:
    return {
        h.get_text("", strip=True).rstrip("¶#"): h.find_parent("section")["id"]
        for h in html(page).find_all(["h1", "h2", "h3"])
        if h.find_parent("section") is not None
    }


def test_terms_are_the_dictionary_words_longest_first(tmp_path: Path) -> None:
    path = tmp_path / "dict.txt"
    path.write_text("就地操作 20 n\n\n版本计数器 20 n\n视图\n", encoding="utf-8")
    assert terms(path) == ("版本计数器", "就地操作", "视图")
    assert terms(tmp_path / "missing.txt") == ()


@pytest.mark.sphinx("html", testroot="search")
def test_sections_whose_titles_hold_a_term_get_an_index_entry_for_it(app) -> None:
    app.build()
    outdir = Path(app.outdir)
    ids = section_ids(outdir / "index.html")
    index = search_index(outdir)
    assert index["indexentries"] == {
        "就地操作": [[0, ids["就地操作"], 1]],
        "版本计数器": [[0, ids["二、版本计数器：怎么知道你改过"], 1]],
    }
    # The general index lists the terms too.
    assert "版本计数器" in (outdir / "genindex.html").read_text(encoding="utf-8")


@pytest.mark.sphinx("html", testroot="search")
def test_a_relative_dictionary_is_found_from_any_working_directory(app, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = Path.cwd()
    os.chdir(elsewhere)
    try:
        app.build()
    finally:
        os.chdir(before)
    assert app.config.html_search_options["dict"] == str(Path(app.confdir) / "userdict.txt")
    assert "版本计数器" in search_index(Path(app.outdir))["indexentries"]


@pytest.mark.sphinx("html", testroot="search")
def test_the_search_page_binds_a_stemmer_that_exists(app) -> None:
    app.build()
    data = (Path(app.outdir) / "_static" / "language_data.js").read_text(encoding="utf-8")
    bound = data.rsplit("window.Stemmer = ", 1)[1].split(";")[0]
    assert f"var {bound}=" in data.replace(" ", "") or f"{bound}=function" in data.replace(" ", "")


def test_the_work_around_only_applies_where_sphinx_binds_the_wrong_name() -> None:
    from sphinx.search.zh import SearchChinese

    fixed = fixed_chinese()
    if fixed is None:  # a Sphinx without the defect: nothing to do
        return
    assert issubclass(fixed, SearchChinese)
    assert fixed.js_stemmer_code.endswith("window.Stemmer = EnglishStemmer;")


@pytest.mark.sphinx("html", testroot="search", freshenv=False)
def test_a_rebuild_that_writes_no_page_keeps_the_entries(app, make_app, app_params) -> None:
    app.build()
    outdir = Path(app.outdir)
    first = search_index(outdir)["indexentries"]
    assert first
    args, kwargs = app_params
    again = make_app(*args, **{**kwargs, "freshenv": False})
    again.build()  # nothing changed: no page is written, the search index is
    assert search_index(outdir)["indexentries"] == first  # still dumped
