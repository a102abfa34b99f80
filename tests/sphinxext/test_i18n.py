"""Every label snipcheck puts on a page goes through sphinx.locale (issue 12 #3).

English is the default; ``locale/zh_CN`` translates every label.  The test
root ``test-i18n`` is an English project with every kind of label (stdout,
a warning and a traceback, a drift box, a snippet not run here, a claim, a
refuted-claim badge, the environment box, the reading aids); it is built as
it is and with ``language = "zh_CN"``, by the HTML, text and LaTeX builders.
"""

from __future__ import annotations

import ast
import re
import shutil
from io import BytesIO
from pathlib import Path

import pytest
import snipcheck
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po
from helpers import html
from i18n_support import NAMES, UI, ui_text  # noqa: F401 - what the tests here and test_cases_reader share
from snipcheck.sphinxext.i18n import LOCALE_DIR, MESSAGE_CATALOG

PACKAGE = Path(snipcheck.__file__).parent
#: This site's own features (``_ext/snipcheck_chapter``): their labels have a catalog of
#: their own (``snipcheck_chapter``, not in the wheel), as have the Furo theme's labels.
CHAPTER = PACKAGE.parent / "snipcheck_chapter"
CHAPTER_CATALOG = "snipcheck_chapter"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
def labels_in_code(package: Path = PACKAGE) -> dict[str, str]:
    """Every ``_("...")`` literal in ``package`` (snipcheck, or the chapter's
    package): msgid -> where."""
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_":
                (arg,) = node.args
                assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), (
                    f"{path}:{node.lineno}: _() of a non-literal: no catalog can list it"
                )
                found.setdefault(arg.value, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    if package != PACKAGE:
        return found
    # the documented differences of a run, which the snipcheck-differences directive translates
    from snipcheck.run import DIFFERENCES

    for name, text in DIFFERENCES.items():
        found.setdefault(name, "run/__init__.py DIFFERENCES")
        found.setdefault(text, "run/__init__.py DIFFERENCES")
    return found


def locale_dir(domain: str) -> Path:
    return CHAPTER / "locale" if domain in ("furo", CHAPTER_CATALOG) else LOCALE_DIR


def catalog(domain: str, language: str = "zh_CN"):
    with open(locale_dir(domain) / language / "LC_MESSAGES" / f"{domain}.po", "rb") as po:
        return read_po(po)


@pytest.mark.parametrize(("domain", "package"), [(MESSAGE_CATALOG, PACKAGE), (CHAPTER_CATALOG, CHAPTER)])
def test_every_label_in_the_code_has_a_chinese_translation(domain: str, package: Path) -> None:
    """Each package's labels in its own catalog, and nothing else there: the
    wheel's catalog holds no label of this site's features."""
    labels = labels_in_code(package)
    assert len(labels) > 40
    translated = {m.id: m.string for m in catalog(domain) if m.id}
    missing = {msgid: where for msgid, where in labels.items() if not translated.get(msgid)}
    assert missing == {}, "labels without a zh_CN translation"
    unused = set(translated) - set(labels)
    assert unused == set(), "catalog entries no code uses"


@pytest.mark.parametrize("domain", [MESSAGE_CATALOG, CHAPTER_CATALOG])
def test_translations_keep_every_placeholder(domain: str) -> None:
    for message in catalog(domain):
        if message.id:
            fields = sorted(re.findall(r"\{[^}]*\}", message.id))
            assert sorted(re.findall(r"\{[^}]*\}", message.string)) == fields, message.id


def test_no_chinese_string_in_the_code_that_renders_pages() -> None:
    """Page text comes from the catalog: no literal in one language in the
    rendering code (docstrings and comments aside)."""
    offenders = []
    for path in sorted([*(PACKAGE / "sphinxext").glob("*.py"), *CHAPTER.glob("*.py")]):
        if path.name == "cjk.py":
            continue  # its character ranges are CJK by definition, and no page text
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            literal = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            if literal and CJK.search(node.value):
                offenders.append(f"{path.name}:{node.lineno}: {node.value[:40]!r}")
    assert offenders == []


@pytest.mark.parametrize("domain", ["snipcheck", CHAPTER_CATALOG, "furo"])
def test_the_committed_mo_files_are_compiled_from_their_po_files(domain: str) -> None:
    """``pybabel compile -d _ext/snipcheck/locale -D DOMAIN`` after editing a .po."""
    compiled = BytesIO()
    write_mo(compiled, catalog(domain))
    compiled.seek(0)
    fresh = {m.id: m.string for m in read_mo(compiled) if m.id}
    with open(locale_dir(domain) / "zh_CN" / "LC_MESSAGES" / f"{domain}.mo", "rb") as mo:
        committed = {m.id: m.string for m in read_mo(mo) if m.id}
    assert committed == fresh


@pytest.mark.sphinx("html", testroot="i18n")
def test_an_english_project_page_holds_no_chinese(app) -> None:
    app.build()
    for page in sorted(Path(app.outdir).glob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert not CJK.search(text), f"{page.name}: {CJK.findall(text)[:10]}"
    index = html(Path(app.outdir) / "index.html")
    labels = [p.get_text() for p in index.select(".snipcheck-output-label")]
    assert labels == ["stdout", "stderr · warning", "stdout", "stderr · uncaught exception", "stdout", "stdout"]
    assert index.select_one(".snipcheck-environment .admonition-title").get_text() == (
        "Where the outputs on this page come from"
    )
    problem = index.select_one(".caution")
    assert "The stated output differs from the actual output of this build." in problem.get_text()
    assert "--- stated (index.md:" in problem.get_text() and "+++ actual (torch " in problem.get_text()


@pytest.mark.sphinx(
    "html", testroot="i18n", confoverrides={"snipcheck_execute": False, "snipcheck_reference": "torch 2.13.0"}
)
def test_the_environment_box_of_any_project_speaks_of_its_pages_not_of_a_chapter(app) -> None:
    app.build()
    box = html(Path(app.outdir) / "index.html").select_one(".snipcheck-environment").get_text()
    assert "This build did not execute code: the outputs below are the ones the page source states." in box
    assert "The outputs stated in the page source are for the reference environment torch 2.13.0;" in box
    assert "chapter" not in box


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_page_states_how_a_run_differs_from_plain_python(make_app, rootdir, tmp_path: Path, language: str) -> None:
    # runner.md / issue 11: the documented differences are on the page, in its language
    from snipcheck.run import DIFFERENCES

    srcdir = tmp_path / "src"
    shutil.copytree(rootdir / "test-i18n", srcdir)
    app = make_app("html", srcdir=srcdir, confoverrides={"language": language})
    app.build()
    items = html(Path(app.outdir) / "differences.html").select("ul.snipcheck-differences > li")
    assert len(items) == len(DIFFERENCES)
    names = [li.find("strong").get_text() for li in items]
    if language == "en":
        assert names == list(DIFFERENCES)
        assert items[0].get_text().replace("\u2019", "'") == f"process ids: {DIFFERENCES['process ids']}"  # smart quotes
    else:
        assert names[:3] == ["进程号", "stdout 与 stderr", "内存上限"]
        assert items[2].get_text().startswith("内存上限：这次运行里每个进程的软 RLIMIT_DATA")


@pytest.mark.sphinx("html", testroot="i18n", confoverrides={"language": "zh_CN"})
def test_a_chinese_page_holds_no_english_ui_the_drift_box_included(app) -> None:
    app.build()
    index = html(Path(app.outdir) / "index.html")
    text = ui_text(index)
    for phrase in ("标准输出 stdout", "标准错误 stderr · 警告", "标准错误 stderr · 未捕获的异常", "需要 cuda",
                   "本次构建未运行", "本页的输出从哪里来", "常见说法 · 实测推翻", "本次构建发现的问题",
                   "陈述的输出与本次构建的实际输出不一致", "--- 陈述的输出（index.md:", "+++ 实际输出（torch ",
                   "阅读时间约", "读到这里可以停"):  # fmt: skip
        assert phrase in text, phrase
    # Words only: not parts of hex ids, not upper-case names (CUDA_VISIBLE_DEVICES)
    english = {w for w in re.findall(r"(?<![0-9A-Za-z])[A-Za-z]{3,}(?![0-9A-Za-z])", text) if w not in NAMES and not w.isupper()}
    assert english == set(), english
    claim = index.select_one("a.snipcheck-claim")
    assert claim["title"] == "取自代码片段 i18n/stdout 的实际输出，本次构建已核对"


@pytest.mark.sphinx("text", testroot="i18n", confoverrides={"language": "zh_CN"})
def test_the_text_builder_gets_the_same_chinese_labels(app) -> None:
    app.build()
    text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
    for phrase in ("标准输出 stdout", "标准错误 stderr · 未捕获的异常", "需要 cuda", "本次构建未运行",
                   "本页的输出从哪里来", "常见说法 · 实测推翻", "阅读时间约"):  # fmt: skip
        assert phrase in text, phrase


@pytest.mark.sphinx("text", testroot="i18n")
def test_the_text_builder_gets_english_labels_by_default(app) -> None:
    app.build()
    text = (Path(app.outdir) / "index.txt").read_text(encoding="utf-8")
    assert "stderr · uncaught exception" in text and "not run in this build" in text
    assert not CJK.search(text)


@pytest.mark.sphinx("latex", testroot="i18n", confoverrides={"language": "zh_CN"})
def test_the_latex_builder_gets_the_same_chinese_labels(app) -> None:
    app.build()
    (tex,) = Path(app.outdir).glob("*.tex")
    text = tex.read_text(encoding="utf-8")
    for phrase in ("标准输出 stdout", "本次构建未运行", "本页的输出从哪里来", "常见说法 · 实测推翻"):
        assert phrase in text, phrase


@pytest.mark.sphinx("latex", testroot="i18n")
def test_the_latex_builder_of_an_english_project_holds_no_chinese(app) -> None:
    app.build()
    (tex,) = Path(app.outdir).glob("*.tex")
    text = tex.read_text(encoding="utf-8")
    for phrase in ("stderr · uncaught exception", "not run in this build", "Where the outputs on this page come from"):
        assert phrase in text, phrase
    assert not CJK.search(text), CJK.findall(text)[:10]
