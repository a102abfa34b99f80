"""What captured output looks like on the page (issue 23, items 4 to 6).

One page (tests/roots/test-output-page) places snippets that write partial
lines to stdout and stderr in turn, every kind of control character, a
malformed escape sequence and a 5,000-character word.  The page must show
the terminal's lines (one line begun on stdout and ended on stderr is one
line, its parts still told apart), never emit a control character raw (they
are shown as Python escapes, colours are interpreted), and keep every output
searchable without giving any search language a giant word to stem.  HTML,
text and LaTeX builders all render it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import block_kinds, html

#: Every control character a page must never hold raw (C0 but \t and \n, DEL, C1, the separators).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
CONTROLS = (
    "nul\\x00 esc\\x1b bel\\x07 bs\\x08 del\\x7f csi\\x9b ff\\x0c vt\\x0b nel\\x85 ls\\u2028 ps\\u2029 end\n"
)


def panel_blocks(page: Path, snippet_id: str) -> list[tuple[str, list[str], str, list[tuple[str, str]]]]:
    """``(label, snipcheck classes, text, parts)`` of each block of a snippet's
    output panel; ``parts`` are the ``(class, text)`` of a mixed block's parts."""
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    panel = div.find(class_="snipcheck-output")
    out = []
    label = ""
    for child in panel.find_all(recursive=False):
        classes = child.get("class", [])
        if "snipcheck-output-label" in classes:
            label = child.get_text()
        elif "output" in classes:
            pre = child.find("pre")
            parts = [
                (" ".join(span["class"]), span.get_text())
                for span in pre.find_all("span", class_=lambda c: bool(c) and c.startswith("snipcheck-part"))
            ]
            out.append((label, block_kinds(classes), pre.get_text(), parts))
    return out


def problem_diff(page: Path, snippet_id: str) -> str:
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    return div.find(class_="snipcheck-diff").find("pre").get_text()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, probe_cache: Path) -> Path:
    """The test root built once with the html, text and latex builders; the output folder."""
    import shutil
    import subprocess
    import sys

    from conftest import ROOTS, fresh_cache

    tmp = tmp_path_factory.mktemp("output-page")
    src = tmp / "src"
    shutil.copytree(ROOTS / "test-output-page", src)
    cache = fresh_cache(tmp / "cache", probe_cache)
    for builder in ("html", "text", "latex"):
        done = subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", builder, "-q", "-d", str(tmp / "doctrees"),
             "-D", f"snipcheck_cache_dir={cache}", "-D", f"snipcheck_report_dir={tmp / 'report'}",
             str(src), str(tmp / builder)],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
    return tmp


# --- item 5: the terminal's lines ---------------------------------------------------------------


def test_a_line_begun_on_stdout_and_ended_on_stderr_is_one_line_of_one_block(built: Path) -> None:
    # Was: three blocks, stdout "a", stderr "b", stdout "c", where a terminal
    # (and `snipcheck run`, and the stated output) shows one line "abc".
    assert panel_blocks(built / "html" / "index.html", "page/mixed") == [
        (
            "stdout + stderr",
            ["snipcheck-mixed"],
            "abc\n",
            [("snipcheck-part-stdout", "a"), ("snipcheck-part-stderr", "b"), ("snipcheck-part-stdout", "c\n")],
        )
    ]


def test_whole_lines_around_mixed_lines_keep_their_own_blocks(built: Path) -> None:
    warning = "snippets/page/mixed-lines.py:8: UserWarning: careful\n"
    assert panel_blocks(built / "html" / "index.html", "page/mixed-lines") == [
        ("stdout", ["snipcheck-stdout"], "first whole line\n", []),
        (
            "stdout + stderr + stderr · warning",
            ["snipcheck-mixed"],
            "out0 err0\nout1 err1\nout2 err2\nhalf " + warning,
            [
                *[pair for n in range(3) for pair in (("snipcheck-part-stdout", f"out{n} "), ("snipcheck-part-stderr", f"err{n}\n"))],
                ("snipcheck-part-stdout", "half "),
                ("snipcheck-part-stderr snipcheck-part-warning", warning),
            ],
        ),
        ("stderr · warning", ["snipcheck-stderr", "snipcheck-warning"], '  warnings.warn("careful")\n', []),
        ("stderr", ["snipcheck-stderr"], "last whole line\n", []),
    ]


def test_the_mixed_block_scrolls_like_every_output_block(built: Path) -> None:
    # snipcheck.js and the stylesheet find output blocks as div.highlight > pre.
    div = html(built / "html" / "index.html").find(id="snippet-page-mixed")
    assert div.select("div.snipcheck-mixed > div.highlight > pre")


def test_text_and_latex_show_the_terminal_lines_too(built: Path) -> None:
    text = (built / "text" / "index.txt").read_text(encoding="utf-8")
    assert re.search(r"^ +abc$", text, re.MULTILINE), text
    assert re.search(r"^ +half snippets/page/mixed-lines\.py:8: UserWarning: careful$", text, re.MULTILINE)
    latex = next((built / "latex").glob("*.tex")).read_text(encoding="utf-8")
    assert r"\DUrole{snipcheck-part-stdout}{a}\DUrole{snipcheck-part-stderr}{b}" in latex


# --- item 6: no control character raw ---------------------------------------------------------


def test_no_page_holds_a_raw_control_character(built: Path) -> None:
    # Was: raw ESC around "red" and NUL lost from the panel, and raw ESC in the problem box.
    for path in [built / "html" / "index.html", built / "html" / "searchindex.js", built / "text" / "index.txt",
                 *(built / "latex").glob("*.tex")]:  # fmt: skip
        found = RAW.findall(path.read_text(encoding="utf-8"))
        assert found == [], (path.name, found)


def test_colours_are_interpreted_and_a_nul_is_shown_as_an_escape(built: Path) -> None:
    page = built / "html" / "index.html"
    shown = "red\nnul\\x00x\n"
    assert panel_blocks(page, "page/colours") == [("stdout", ["snipcheck-stdout"], shown, [])]
    div = html(page).find(id="snippet-page-colours")
    assert div.find(class_="snipcheck-output").find("span", class_="-Color-Red").get_text() == "red"
    assert problem_diff(page, "page/colours").endswith("+red\n+nul\\x00x\n")


def test_colours_are_interpreted_in_a_line_that_mixes_streams_too(built: Path) -> None:
    page = built / "html" / "index.html"
    assert panel_blocks(page, "page/mixed-colours") == [
        ("stdout + stderr", ["snipcheck-mixed"], "ok failed\n",
         [("snipcheck-part-stdout", "ok "), ("snipcheck-part-stderr", "failed\n")]),
    ]  # fmt: skip
    div = html(page).find(id="snippet-page-mixed-colours")
    assert div.find(class_="snipcheck-part-stdout").find("span", class_="-Color-Green").get_text() == "ok"
    assert div.find(class_="snipcheck-part-stderr").find("span", class_="-Color-Red").get_text() == "failed"
    text = (built / "text" / "index.txt").read_text(encoding="utf-8")
    assert re.search(r"^ +ok failed$", text, re.MULTILINE), text


def test_every_control_character_is_shown_as_its_escape_in_the_panel_and_the_diff(built: Path) -> None:
    page = built / "html" / "index.html"
    assert panel_blocks(page, "page/controls") == [("stdout", ["snipcheck-stdout"], CONTROLS, [])]
    assert problem_diff(page, "page/controls").endswith("+" + CONTROLS)
    text = (built / "text" / "index.txt").read_text(encoding="utf-8")
    assert CONTROLS.strip() in text


def test_a_malformed_escape_sequence_shows_its_esc_in_the_panel_and_the_problem_box(built: Path) -> None:
    page = built / "html" / "index.html"
    assert panel_blocks(page, "page/bad-csi") == [("stdout", ["snipcheck-stdout"], "c\\x1b\n", [])]
    assert problem_diff(page, "page/bad-csi").endswith("-c\n+c\\x1b\n")


# --- item 4: searchable, without a giant word for the stemmer ----------------------------------


def test_a_giant_word_never_reaches_the_search_index_and_the_rest_stays_searchable(built: Path) -> None:
    # Was: the 5,000-character word was a term of the index (a 1,000,000-
    # character one took Snowball's stemmer two minutes).
    text = (built / "html" / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(text[text.index("(") + 1 : text.rindex(")")])["terms"]
    assert max(len(term) for term in terms) <= 100
    assert {"needl", "haystack", "red", "fail"} <= set(terms)  # stemmed by the English search; no colour codes
    # The page still shows the whole word, in the panel and in the diff.
    page = built / "html" / "index.html"
    assert panel_blocks(page, "page/long") == [("stdout", ["snipcheck-stdout"], f"needle {'y' * 5000} haystack\n", [])]
    assert f"+needle {'y' * 5000} haystack" in problem_diff(page, "page/long")
