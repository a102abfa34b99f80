"""Reading aids: the reading-time estimate and resume points (snipcheck_chapter/reading.py).

The test root ``test-reading`` is built so that every count is known: a title
and three headings (2 + 3 × 3 Chinese characters), paragraphs of 700, 1,400
and 350 characters, and one snippet with 2 code lines that prints 20 lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import html, snipcheck_warnings
from snipcheck_chapter.reading import RATES, Counts, lines, minutes, prose

# --- the formula ---------------------------------------------------------------


def test_prose_counts_cjk_characters_and_latin_words_not_punctuation() -> None:
    assert prose("就地操作，版本计数器。") == Counts(cjk=9)
    assert prose("调用 x.add_(1) 之后 set_detect_anomaly 打印 UserWarning") == Counts(cjk=6, words=4)
    assert prose("“”（）——……") == Counts()


def test_lines_counts_non_blank_lines() -> None:
    assert lines("a = 1\n\n  \nprint(a)\n") == 2
    assert lines("") == 0


def test_the_stated_rates() -> None:
    # The rates the contributing page documents.
    assert (RATES.cjk_per_minute, RATES.words_per_minute) == (350.0, 200.0)
    assert (RATES.seconds_per_code_line, RATES.seconds_per_output_line) == (5.0, 3.0)
    assert Counts(cjk=350).seconds() == 60.0
    assert Counts(words=200).seconds() == 60.0
    assert Counts(code_lines=12).seconds() == 60.0
    assert Counts(output_lines=20).seconds() == 60.0
    assert Counts(cjk=175, words=100, code_lines=6, output_lines=10).seconds() == 30.0 + 30.0 + 30.0 + 30.0


def test_minutes_round_to_the_nearest_and_are_at_least_one() -> None:
    assert [minutes(s) for s in (0, 10, 89, 90, 150, 151)] == [1, 1, 1, 2, 2, 3]


# --- the built page --------------------------------------------------------------

# Counts of the test root (see the module docstring).
CJK = 2 + 3 * 3 + 700 + 1400 + 350
TOTAL = Counts(cjk=CJK, code_lines=2, output_lines=20)
BEFORE_FIRST_STOP = Counts(cjk=2 + 3 + 700, code_lines=2, output_lines=20)


@pytest.mark.sphinx("html", testroot="reading")
def test_reading_time_is_computed_from_the_page(app) -> None:
    app.build()
    assert snipcheck_warnings(app.warning.getvalue()) == []
    page = html(Path(app.outdir) / "index.html")
    line = page.find(class_="snipcheck-reading-time")
    assert line is not None
    assert line.get_text("", strip=True) == (
        f"阅读时间约 {minutes(TOTAL.seconds())} 分钟"
        f"（本页正文 {CJK} 个汉字，代码 2 行，输出 20 行；构建时按页面内容估算，怎么估算的）"
    )
    assert minutes(TOTAL.seconds()) == 8  # 2,461 characters ≈ 7.0 min, 10 s of code, 60 s of output
    # The line links to the section that explains the estimate (its label).
    assert line.find("a")["href"] == "about.html#snipcheck-reading-time"
    # Placed where the directive is: right under the title.
    assert page.find("h1").find_next(class_="snipcheck-reading-time") is line


@pytest.mark.sphinx("html", testroot="reading")
def test_resume_points_count_minutes_read_and_left_and_link_the_sections_left(app) -> None:
    app.build()
    page = html(Path(app.outdir) / "index.html")
    first, last = page.find_all(class_="snipcheck-resume")
    read = minutes(BEFORE_FIRST_STOP.seconds())
    left = minutes((TOTAL - BEFORE_FIRST_STOP).seconds())
    assert (read, left) == (3, 5)
    paragraphs = [p.get_text("", strip=True) for p in first.find_all("p")]
    assert paragraphs == [
        "读到这里可以停",
        "第一部分讲完了。",  # the author's own text, kept
        f"已经读了约 {read} 分钟，后面还有约 {left} 分钟：「第二节」·「第三节」。",
        "回来的时候不用重读，直接从「第二节」接着看。",
    ]
    sections = {
        h.get_text("", strip=True).rstrip("#¶"): h.find_parent("section")["id"] for h in page.find_all("h2")
    }
    links = [(a.get_text(), a["href"]) for a in first.find_all("a")]
    assert links == [
        ("「第二节」", "#" + sections["第二节"]),
        ("「第三节」", "#" + sections["第三节"]),
        ("「第二节」", "#" + sections["第二节"]),
    ]
    # Inside the section it closes, after the snippet.
    assert first.find_parent("section")["id"] == sections["第一节"]
    assert [p.get_text("", strip=True) for p in last.find_all("p")] == [
        "读到这里可以停",
        f"已经读了约 {minutes(TOTAL.seconds())} 分钟，本页到这里就读完了。",
    ]


@pytest.mark.sphinx("html", testroot="reading", copy_test_root=True)
def test_an_edited_page_gets_new_numbers_on_the_next_build(app) -> None:
    app.build()
    index = Path(app.srcdir) / "index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("读" * 1400, "读" * 3500), encoding="utf-8")
    app.build()
    page = html(Path(app.outdir) / "index.html")
    total = TOTAL + Counts(cjk=2100)
    assert (
        f"阅读时间约 {minutes(total.seconds())} 分钟" in page.find(class_="snipcheck-reading-time").get_text()
    )
    first = page.find(class_="snipcheck-resume")
    left = minutes((total - BEFORE_FIRST_STOP).seconds())
    assert f"后面还有约 {left} 分钟" in first.get_text()
    assert left == 11


# --- the reading list (snipcheck_chapter/reading_list.py) ------------------------------------------


def listed(page: Path) -> list[tuple[str, str, str]]:
    """``(link, minutes, description)`` per item of the page's reading list."""
    soup = html(page)
    return [
        (li.find("a")["href"], li.select_one(".snipcheck-reading-minutes").get_text(), li.find_all("p")[-1].get_text())
        for li in soup.select("ol.snipcheck-reading-list > li")
    ]


@pytest.mark.sphinx("html", testroot="reading-list", copy_test_root=True)
def test_the_reading_list_gives_each_page_its_own_reading_time_and_follows_edits(app) -> None:
    app.build()
    out = Path(app.outdir)
    assert snipcheck_warnings(app.warning.getvalue()) == []
    assert listed(out / "order.html") == [
        ("a.html", "约 2 分钟", "第一页，先读。"),  # 1 + 700 characters
        ("b.html", "约 5 分钟", "第二页， 接着读。"),  # 1 + 1,750 characters
    ]
    assert "全部读完约 7 分钟。" in html(out / "order.html").get_text()
    for name, minutes_ in (("a", 2), ("b", 5)):
        own = html(out / f"{name}.html").select_one(".snipcheck-reading-time strong").get_text()
        assert own == f"阅读时间约 {minutes_} 分钟"
    # An edit to a listed page changes the list on the next (incremental) build.
    page = Path(app.srcdir) / "a.md"
    page.write_text(page.read_text(encoding="utf-8").replace("读" * 700, "读" * 2100), encoding="utf-8")
    app.build()
    assert listed(out / "order.html")[0][:2] == ("a.html", "约 6 分钟")
