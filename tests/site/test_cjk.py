"""No stray space where a line of Chinese text breaks in the source
(snipcheck_chapter.cjk; reader.md #5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import html
from snipcheck_chapter.cjk import join_text, joins


def test_a_break_between_two_cjk_characters_is_removed() -> None:
    assert join_text("torch 自己源文件里的\n行号") == "torch 自己源文件里的行号"
    assert join_text("从不\n  规整") == "从不规整"  # the continuation line's indent goes too
    assert join_text("把报告\n（JSON）") == "把报告（JSON）"  # fullwidth punctuation is CJK


def test_a_break_next_to_latin_text_or_between_symbols_alone_is_kept() -> None:
    assert join_text("中文后面接\nEnglish") == "中文后面接\nEnglish"
    assert join_text("English\n中文") == "English\n中文"
    assert join_text("one\ntwo") == "one\ntwo"
    assert join_text("“\n”") == "“\n”"  # quotes on both sides: no CJK character proper
    assert join_text("한국어\n문장") == "한국어\n문장"  # Korean separates words with spaces


def test_quotes_dashes_and_circled_numbers_join_next_to_a_cjk_character() -> None:
    assert joins("态", "③") and joins("”", "里") and joins("字", "—")
    assert not joins("a", "③")


@pytest.mark.sphinx("html", testroot="cjk")
def test_the_built_page_has_no_stray_space_and_keeps_every_other_break(app) -> None:
    app.build()
    page = html(Path(app.outdir) / "index.html")
    texts = [p.get_text() for p in page.select("article p, article li")] or [
        p.get_text() for p in page.select("p, li")
    ]
    assert "torch 自己源文件里的行号，代码片段自己的行号从不规整。" in texts
    assert "把报告（JSON）提交到仓库。" in texts
    # two equal "\n" text nodes in one paragraph: the right one is joined, the other kept
    assert "维护者用\nnox 跑一遍，报告生成：哪个版本变了。" in texts
    # across inline markup: **粗体** then a new line
    assert "粗体接着写，还有“引号”里的字，以及形态③。" in texts
    assert "中文后面接\nEnglish words\nstay apart, and English\nwords keep their space." in texts
    assert "列表里的一项" in texts
    # inline code is never changed; the break after it (Latin on the left) is kept
    assert "行内代码 x\n后面的字，a b 不变。" in texts
    assert [p.get_text() for p in page.select("pre")] == ["代码块里的\n换行不动\n"]
    assert "한국어\n문장" in texts
