"""The real chapter: it builds with -W, a one-character change to a stated output fails it,
and the built pages give a reader what reader.md says was missing.

Written for any chapter content: the snippet to break is found in the
placement index, and the character to change is one that the project's
normalizers do not mask.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from helpers import html, plain
from snipcheck.app.project import Project
from snipcheck.files import write_all
from snipcheck.judge.normalize import Normalizer, for_compare
from snipcheck.sources.placement import Placement
from snipcheck.sources.rewrite import Edit

pytestmark = pytest.mark.chapter


@pytest.fixture(scope="session")
def chapter_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One result cache for every chapter build of the session (the first build fills it)."""
    return tmp_path_factory.mktemp("chapter-cache")


def sphinx_build(project: Path, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache))
    args = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-c", ".",
        "-d", str(out / "doctrees"), "-D", f"snipcheck_report_dir={out / 'report'}",
        "docs", str(out / "html"),
    ]  # fmt: skip
    return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=1800, check=False)


@pytest.fixture(scope="session")
def chapter_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder (html, doctrees, report) of the session's chapter build."""
    return tmp_path_factory.mktemp("chapter")


@pytest.fixture(scope="session")
def chapter_build(chapter_out: Path, chapter_cache: Path) -> subprocess.CompletedProcess[str]:
    return sphinx_build(REPO, chapter_out, chapter_cache)


@pytest.fixture(scope="session")
def chapter_html(chapter_build: subprocess.CompletedProcess[str], chapter_out: Path) -> Path:
    """The built chapter's HTML directory (the build must have passed)."""
    assert chapter_build.returncode == 0, chapter_build.stderr
    return chapter_out / "html"


def test_chapter_builds_with_warnings_as_errors(chapter_build: subprocess.CompletedProcess[str]) -> None:
    assert "snipcheck." not in chapter_build.stderr, chapter_build.stderr
    assert chapter_build.returncode == 0, chapter_build.stderr
    assert re.search(r"^snipcheck: \d+ snippets", chapter_build.stdout, re.MULTILINE)
    # what "needs burn" means, for a newcomer who never heard of it (issue 34)
    assert re.search(
        r"^snipcheck: not run here: needs burn \(\d+ snippets\): burn is the deep-learning framework in Rust that "
        r"docs/burn.md compares with PyTorch \(https://burn.dev\); .*\(no crate can be downloaded\)",
        chapter_build.stdout, re.MULTILINE,
    ), chapter_build.stdout


def changed_by_one_character(body: str, normalizers: tuple[Normalizer, ...]) -> tuple[int, str] | None:
    """The first (index, new body) differing from ``body`` in one visible
    character that survives every normalizer, or ``None``."""
    for index, char in enumerate(body):
        if char.isspace():
            continue
        new = body[:index] + ("x" if char != "x" else "y") + body[index + 1 :]
        if for_compare(new, normalizers) != for_compare(body, normalizers):
            return index, new
    return None


def test_one_changed_character_in_a_stated_output_fails_the_build(
    tmp_path: Path, chapter_build: subprocess.CompletedProcess[str], chapter_cache: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("docs", "snippets"):
        shutil.copytree(REPO / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conf.py", "pyproject.toml"):
        shutil.copy2(REPO / name, project / name)
    chapter, _ = Project.load(project)
    settings = chapter.settings
    candidates = [p for p in chapter.placements() if p.stated.strip()]
    assert candidates, "the chapter places no snippet with a stated output"
    target: Placement | None = None
    for placement in candidates:
        change = changed_by_one_character(placement.stated, settings.normalizers)
        if change is not None:
            target = placement
            break
    assert target is not None and change is not None
    index, new_body = change

    # Edit that one character in the page (read back through the build's parser).
    files = chapter.rewrite([Edit(target, new_body)])
    write_all({path: new for path, (_, new) in files.items()})
    row = target.stated[:index].count("\n")

    done = sphinx_build(project, tmp_path / "out", chapter_cache)
    assert done.returncode != 0
    relative = Path(target.source).relative_to(project).as_posix()
    warning = re.compile(
        rf"^(?:\S*/)?{re.escape(relative)}:{target.line}: WARNING: snippet '{re.escape(target.snippet_id)}'"
        r"(?P<message>.*?)\[snipcheck\.(?P<subtype>\w+)\]",
        re.MULTILINE | re.DOTALL,
    )
    found = warning.search(done.stderr)
    assert found, done.stderr
    assert found["subtype"] == "drift"
    # The diff (of normalized texts) shows the edited line as stated ('-') and
    # the real one as actual ('+').
    stated_line = for_compare(new_body, settings.normalizers).split("\n")[row]
    actual_line = for_compare(target.stated, settings.normalizers).split("\n")[row]
    assert f"\n-{shown(stated_line)}\n" in found["message"]
    assert f"\n+{shown(actual_line)}\n" in found["message"]


def shown(line: str) -> str:
    """A diff line as the warning shows it: trailing blanks as middle dots."""
    stripped = line.rstrip(" \t")
    return stripped + "·" * (len(line) - len(stripped))


def test_the_pytest_plugin_checks_every_placement_of_the_chapter(
    chapter_build: subprocess.CompletedProcess[str], chapter_cache: Path, chapter_placements: list[Placement]
) -> None:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(chapter_cache))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "docs/", "-q", "-rs"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    passed = int(re.search(r"(\d+) passed", done.stdout).group(1))  # type: ignore[union-attr]
    skipped = int(m.group(1)) if (m := re.search(r"(\d+) skipped", done.stdout)) else 0
    assert passed + skipped == len(chapter_placements)
    assert passed > 30


#: Lines a build at the default verbosity must not print (adoption.md #12):
#: parser-configuration dumps, myst-nb's jupyter-cache path (no notebook is
#: executed), Sphinx's template chatter, jieba's dictionary chatter.
CHATTER = ["MdParserConfig(", "NbParserConfig(", "Using jupyter-cache", "Writing evaluated template result", "prefix dict"]


def test_the_chapter_build_prints_no_chatter(chapter_build: subprocess.CompletedProcess[str]) -> None:
    output = plain(chapter_build.stdout + chapter_build.stderr)
    assert [line for line in output.splitlines() if any(c in line for c in CHATTER)] == []


def test_a_rebuild_with_nothing_changed_is_quiet_and_writes_no_page(
    chapter_build: subprocess.CompletedProcess[str], chapter_out: Path, chapter_cache: Path
) -> None:
    """adoption.md #12: the second build of an unchanged chapter sees no
    configuration change (Sphinx would say "The configuration has changed"),
    reads and writes no page, and prints no chatter."""
    assert chapter_build.returncode == 0, chapter_build.stderr
    # the documents' pages (Sphinx writes genindex and search on every build)
    documents = [p.relative_to(REPO / "docs").with_suffix(".html") for p in (REPO / "docs").rglob("*.md")]
    pages = {chapter_out / "html" / d: (chapter_out / "html" / d).stat().st_mtime_ns for d in documents}
    assert len(pages) >= 3
    again = sphinx_build(REPO, chapter_out, chapter_cache)
    output = plain(again.stdout + again.stderr)  # Sphinx colours it where FORCE_COLOR is set
    assert again.returncode == 0, output
    assert "configuration has changed" not in output, output
    assert "updating environment: 0 added, 0 changed, 0 removed" in output, output
    assert not re.search(r"^(reading sources|writing output)\.\.\. \[", output, re.MULTILINE), output
    assert [line for line in output.splitlines() if any(c in line for c in CHATTER)] == []
    assert {p: p.stat().st_mtime_ns for p in pages} == pages


# --- what a reader meets in the built chapter (reader.md) ----------------------------------------

# A source line break left between two CJK characters (a space the author typed is theirs).
CJK_GAP = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef][ \t]*\n[ \t]*[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


#: Text a reader sees that is not in a paragraph: titles of cards, tabs and
#: admonitions, captions of diagrams and tables.
TITLES = ".sd-card-title, .sd-card-header, .sd-card-footer, .sd-tab-label, .admonition-title, figcaption, .caption-text"


def prose_blocks(page: Path) -> list[Any]:
    """Running text of a built page, one block each (paragraphs, headings,
    table cells, tight list items, card and tab titles, captions), without
    code blocks, outputs and the snippet boxes; inline code stands as a
    Latin placeholder."""
    soup = html(page)
    article = soup.find("article") or soup
    for element in article.select(".snipcheck-snippet, div.highlight, .headerlink"):
        element.decompose()
    for code in article.find_all("code"):
        code.replace_with("CODE")
    blocks = article.find_all(["p", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dt", "summary", "caption"])
    blocks += article.select(TITLES)
    return blocks + [li for li in article.find_all("li") if li.find("p") is None]


def described(page: Path) -> list[str]:
    """What a page says in attributes a reader meets: a diagram's text
    alternative (``alt``, and the fallback text inside its ``<object>``),
    tooltips and labels."""
    article = html(page).find("article")
    found = [str(e[a]) for a in ("alt", "title", "aria-label") for e in article.find_all(attrs={a: True})]
    return found + [o.get_text() for o in article.find_all("object")]


def pages(html_dir: Path) -> list[Path]:
    return [html_dir / f"{name}.html" for name in ("index", "inplace", "burn", "myths", "versions", "contributing")]


def test_no_stray_space_between_chinese_characters(chapter_html: Path) -> None:
    """reader.md #5: source lines that break between two Chinese characters."""
    versions = " ".join(b.get_text() for b in prose_blocks(chapter_html / "versions.html"))
    for joined in ("torch 自己源文件里的行号", "从不规整", "把报告（JSON）"):
        assert joined in versions, joined
    gaps = {page.name: stray_gaps(page) for page in pages(chapter_html)}
    assert {k: v for k, v in gaps.items() if v} == {}
    # The check reads card titles and diagram captions too: both are on the pages.
    burn = [b.get_text() for b in prose_blocks(chapter_html / "burn.html")]
    assert any("同一个场景" in text for text in burn)  # the diagram's caption
    cards = [b.get_text() for b in prose_blocks(chapter_html / "inplace.html")]
    assert any(text.strip() == "形态① 要梯度的叶子被就地改" for text in cards)  # a card's title


def stray_gaps(page: Path) -> list[str]:
    """Each source line break left between two CJK characters on ``page``."""
    texts = [b.get_text() for b in prose_blocks(page)] + described(page)
    return [m.group(0) for text in texts for m in CJK_GAP.finditer(text)]


def headings_and_contents(page: Path) -> list[str]:
    """The page's headings and every entry of its tables of contents (the
    site navigation and the page's own), as a reader sees them."""
    soup = html(page)
    for link in soup.select(".headerlink"):
        link.decompose()
    found = soup.select("article h1, article h2, article h3, article h4, article h5, article h6")
    found += soup.select(".sidebar-tree a, .toc-tree a, .toctree-wrapper a")
    return [" ".join(e.get_text().split()) for e in found]


def test_no_heading_or_contents_entry_is_a_lone_character(chapter_html: Path) -> None:
    """reader.md #2: the contributing entry of the contents showed a lone "图"
    (a section titled just that, now 流程图)."""
    lone = {
        page.name: [t for t in headings_and_contents(page) if len(t) < 2]
        for page in pages(chapter_html)
    }
    assert {k: v for k, v in lone.items() if v} == {}
    contributing = headings_and_contents(chapter_html / "contributing.html")
    assert "流程图" in contributing and "图" not in contributing
    # search results name sections by the same titles
    index = (chapter_html / "searchindex.js").read_text(encoding="utf-8")
    titles = json.loads(index[index.index("(") + 1 : index.rindex(")")])["alltitles"]
    assert [t for t in titles if len(t) < 2] == []


def test_snippet_ids_never_stand_in_for_prose(chapter_html: Path, chapter_placements: list[Placement]) -> None:
    """reader.md #10: "第十节 `relu-after-sigmoid`" cited a snippet by its internal id."""
    ids = [p.snippet_id for p in chapter_placements]
    names = {i.rsplit("/", 1)[1] for i in ids if "-" in i.rsplit("/", 1)[1]}
    for page in pages(chapter_html)[:4]:  # not the versions page (a report by id) nor the contributing page
        article = html(page).find("article")
        for element in article.select(".snipcheck-snippet, div.highlight"):
            element.decompose()
        text = article.get_text(" ")  # inline code included: "`relu-after-sigmoid`" was the case
        found = [i for i in ids if i in text] + [n for n in names if re.search(rf"(?<![\w/-]){n}(?![\w-])", text)]
        assert found == [], (page.name, found)


def test_the_landing_page_says_what_for_whom_in_which_order_and_why_to_trust_it(chapter_html: Path) -> None:
    """reader.md #2: the index page was a bare table of contents."""
    index = html(chapter_html / "index.html")
    text = index.find("article").get_text(" ")
    assert "写给谁" in text and "这一章教什么" in text and "按这个顺序读" in text
    assert "为什么可以相信这里的每一个输出" in text
    assert "未经本次构建验证" in text and "本次构建未运行" in text
    items = index.select("ol.snipcheck-reading-list > li")
    reading_order = ["inplace.html", "burn.html", "myths.html", "debugging.html"]
    assert [li.find("a")["href"].split("#")[0] for li in items] == reading_order
    for li in items:
        minutes = li.select_one(".snipcheck-reading-minutes").get_text()
        target = html(chapter_html / li.find("a")["href"])
        own = target.select_one(".snipcheck-reading-time strong").get_text()
        assert re.search(r"\d+", minutes)[0] == re.search(r"\d+", own)[0], (li.find("a")["href"], minutes, own)
        assert li.find("p", class_=None) is not None or len(li.find_all("p")) == 2  # one line about the page
    links = {a["href"].split("#")[0] for a in index.find("article").find_all("a", href=True)}
    assert {"versions.html", "contributing.html", "tutorial.html", "differences.html"} <= links
    # issue 34: the list of runner differences has a page of its own, linked, not the landing page's second half
    assert index.select("ul.snipcheck-differences") == []
    assert len(html(chapter_html / "differences.html").select("article ul.snipcheck-differences > li")) >= 5


def test_the_chapter_has_what_the_seeds_teach(chapter_html: Path) -> None:
    """reader.md #9: content the seeds have that the chapter had lost."""
    inplace = html(chapter_html / "inplace.html")
    text = inplace.find("article").get_text(" ")
    # the opening framing: the "sometimes" of x += 1, in the page's first paragraph of prose
    first = next(p for p in inplace.find("article").find_all("p") if not p.find_parent(class_=re.compile("snipcheck")))
    assert "有时" in first.get_text() and "x += 1" in first.get_text()
    # where this connects: real destinations
    connects = inplace.find(lambda t: t.name == "h2" and "连到哪里" in t.get_text()).find_parent("section")
    hrefs = [a["href"] for a in connects.find_all("a", href=True)]
    assert "burn.html" in hrefs and "myths.html" in hrefs
    assert any(h.endswith("notes/autograd.html#in-place-correctness-checks") for h in hrefs)
    assert any("saved" in h and "hooks" in h for h in hrefs)
    # four fixes, in order, and no "两种修法"
    fixes = inplace.find(lambda t: t.name == "h3" and "修复" in t.get_text()).find_parent("section")
    assert len(fixes.find("ol").find_all("li", recursive=False)) == 4
    assert "两种修法" not in text
    output = fixes.select_one(".snipcheck-output").get_text()
    assert [line.split(":")[0] for line in output.splitlines() if "梯度一致" in line] == [
        "① 非就地", "② 调整顺序", "③ 先 clone", "④ 关掉 inplace"
    ]
    # both usage notes of set_detect_anomaly: its cost, and that it must be on in the forward pass
    anomaly = inplace.find(lambda t: t.name == "h2" and "怎么定位" in t.get_text()).find_parent("section")
    placed = {d["id"] for d in anomaly.select(".snipcheck-snippet")}
    assert {"snippet-inplace-anomaly-cost", "snippet-inplace-anomaly-forward"} <= placed
    assert "No forward pass information available" in anomaly.get_text()
    # no stray paragraph holding nothing but inline code (was docs/inplace.md:437)
    for page in pages(chapter_html):
        for p in html(page).find("article").find_all("p"):
            if p.find_parent(["td", "th", "dl"]):
                continue  # a table cell may well hold just a name
            children = [c for c in p.children if not (isinstance(c, str) and not c.strip())]
            assert not (len(children) == 1 and getattr(children[0], "name", None) == "code"), (page.name, p)
    # myths: checkpoints, and seed 003's claim about the JIT compiler, tested
    myths = html(chapter_html / "myths.html")
    checkpoints = myths.find(lambda t: t.name == "h2" and "检查点" in t.get_text()).find_parent("section")
    assert len(checkpoints.select("details.sd-dropdown")) >= 6
    compiled = myths.find(id="snippet-myths-compile-out-of-place").find_parent(class_="snipcheck-belief")
    assert "torch.compile" in compiled.get_text() and compiled.select_one(".snipcheck-stamp") is not None
    # burn: slice_assign in place when the buffer is uniquely held, not run here, honestly labelled
    burn = html(chapter_html / "burn.html")
    slice_assign = burn.find(id="snippet-burn-slice-assign")
    assert [b.get_text() for b in slice_assign.select(".snipcheck-badges .sd-badge")] == ["需要 burn", "本次构建未运行"]
    assert slice_assign.select_one(".snipcheck-stamp") is None


def test_prose_and_output_agree(chapter_html: Path) -> None:
    """reader.md #10: the form-2 card cited w[0] = 1.0 while the output showed w[0] = 5.0."""
    inplace = html(chapter_html / "inplace.html")
    summary = inplace.find(id="snippet-inplace-forms-summary").select_one(".snipcheck-output").get_text()
    card = inplace.find(lambda t: "sd-card" in (t.get("class") or []) and "形态②" in t.get_text())
    cited = re.findall(r"w\[\d\] = [\d.]+", card.get_text())
    assert cited and all(c in summary for c in cited), (cited, summary)
    zero = inplace.find(id="snippet-inplace-zero-grad").select_one(".snipcheck-output").get_text()
    assert zero.count("版本 +1") == 2  # both in-place ways of zeroing raise the version, as the text says


def test_the_gpu_rule_leans_on_no_measurement_that_was_never_made(chapter_html: Path) -> None:
    """reader.md #11: §十's rule cited "the peak measurement of §九", which never ran."""
    inplace = html(chapter_html / "inplace.html")
    peak = inplace.find(id="snippet-inplace-cuda-peak")
    assert peak.select_one(".snipcheck-badges") is not None and peak.select_one(".snipcheck-stamp") is None
    for p in inplace.find("article").find_all("p"):
        words = p.get_text()
        if "第九节" in words and "峰值" in words:
            assert "没有运行" in words or "未运行" in words, words


def test_the_burn_page_explains_its_two_environments(chapter_html: Path) -> None:
    """reader.md #8: PyTorch 2.15.0 in the note, 2.13.0 in the tabs, rustc 1.99.0 beside 1.95.0, unexplained."""
    burn = html(chapter_html / "burn.html")
    note = burn.select_one(".admonition.important").get_text(" ")
    stated = {n.get_text() for n in burn.select(".snipcheck-stated-env")}
    assert len(stated) == 1, stated  # every external output names the same environment
    (external,) = stated
    for part in ("burn 0.22.1", "rustc 1.99.0", "Apple M2 Max", "macOS 27"):
        assert part in external and part in note, part
    reference = burn.select_one(".snipcheck-environment").get_text(" ")
    assert "torch 2.13.0" in reference and "torch 2.13.0" in note  # what ran here
    assert "PyTorch 2.15.0" in note and "版本差异" in note  # what ran there, and where it was checked
    # the rustc of this build is named by the environment box, never typed into the note
    here = re.search(r"rustc \d+\.\d+\.\d+", reference)[0]
    assert here not in note or here == "rustc 1.99.0"


def _panels(html_dir: Path) -> dict[str, list[str]]:
    """Each built page's output panels and environment stamps, as HTML, with the
    stamp's origin ("result from the cache", a run's duration) left out: the
    one build ran them, the other took them from the merge."""
    found = {}
    for page in sorted(p for p in html_dir.rglob("*.html") if not p.relative_to(html_dir).parts[0].startswith("_")):
        soup = html(page)
        for stamp in soup.select("p.snipcheck-stamp"):
            parts = stamp.get_text().split(" · ")
            stamp.string = " · ".join(p for p in parts if not re.fullmatch(r"\d+\.\d\d s|result from the cache|缓存的运行结果", p))
        found[page.relative_to(html_dir).as_posix()] = [
            str(node) for node in soup.select("div.snipcheck-output, p.snipcheck-stamp")
        ]
    return found


def _timings_masked(panels: dict[str, list[str]]) -> dict[str, list[str]]:
    """``panels`` with every decimal fraction replaced: a snippet that prints
    how long something took prints another time on every run (its stated
    output says so with a wildcard), so two builds agree on all but those."""
    return {page: [re.sub(r"\d+\.\d+", "<t>", p) for p in found] for page, found in panels.items()}


def test_the_chapter_on_four_shards_merged_builds_running_nothing_into_the_pages_of_one_machine(
    tmp_path: Path, chapter_html: Path
) -> None:
    """issue 24: the chapter, as four local shards, their merge and a build
    with ``snipcheck_execute = "merged"``: the build runs nothing and its
    pages show what the one-machine build shows."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("docs", "snippets"):
        shutil.copytree(REPO / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conf.py", "pyproject.toml", "snipcheck-timings.json"):
        shutil.copy2(REPO / name, project / name)
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    cli = [sys.executable, "-m", "snipcheck", "--root", str(project), "execute"]
    shards = [
        subprocess.Popen(
            [*cli, "--shard", f"{k}/4", "--out", str(tmp_path / f"shard-{k}")], cwd=project, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for k in range(1, 5)
    ]  # fmt: skip
    for k, proc in enumerate(shards, start=1):
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, out + err
        assert out.startswith(f"shard {k}/4: "), out
    cache = tmp_path / "merged-cache"
    merged = subprocess.run(
        [*cli, "--merge", *(str(tmp_path / f"shard-{k}") for k in range(1, 5)), "--not-run", "cuda", "--not-run", "burn"],
        cwd=project, env={**env, "SNIPCHECK_CACHE_DIR": str(cache)}, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert merged.returncode == 0, merged.stdout + merged.stderr
    out = tmp_path / "out"
    args = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-c", ".", "-d", str(out / "doctrees"),
        "-D", f"snipcheck_report_dir={out / 'report'}", "-D", "snipcheck_execute=merged", "docs", str(out / "html"),
    ]  # fmt: skip
    final = subprocess.run(
        args, cwd=project, env={**env, "SNIPCHECK_CACHE_DIR": str(cache)}, capture_output=True, text=True, timeout=900,
        check=False,
    )  # fmt: skip
    assert final.returncode == 0, final.stdout + final.stderr
    assert "; this build ran 0, took " in final.stdout and "0 runnable snippets without a result" in final.stdout
    report = json.loads((out / "report" / "report.json").read_text())
    assert report["execution"]["runs"] == 0
    single, sharded = _panels(chapter_html), _panels(out / "html")
    assert sum(map(len, single.values())) > 120, single.keys()  # the panels were found
    assert _timings_masked(sharded) == _timings_masked(single)
    differing = [(page, a) for page in single for a, b in zip(single[page], sharded[page]) if a != b]
    assert len(differing) <= 3, differing  # only the chapter's few timings differ at all


_CLOCKS = {  # a call that reads a clock, in each language's code
    "py": re.compile(
        r"\b(?:time\.(?:time|perf_counter|thread_time|process_time|monotonic)(?:_ns)?\(|timeit\.|"
        r"datetime\.now\(|datetime\.datetime\.now\(|benchmark\.Timer\()"
    ),
    "rs": re.compile(r"\b(?:Instant|SystemTime)::now\("),
}


def test_no_stated_output_rests_on_a_clock(chapter_placements: list[Placement]) -> None:
    """A snippet that reads a clock prints something that changes with the
    machine's load: its stated output must match that part with a wildcard
    (``[..]``), never state a figure or a comparison of times.  A compare of
    two timings ("the compiled one is nearer in-place") passed idle and
    flipped beside the CI's other builds: a flaky red."""
    project, _ = Project.load(REPO)
    readers = []
    for placement in chapter_placements:
        snippet = project.snippet(placement)
        clock = _CLOCKS.get(Path(snippet.path).suffix.lstrip("."))
        if placement.stated and clock is not None and clock.search(snippet.source):
            readers.append(placement.snippet_id)
            assert "[..]" in placement.stated, (
                f"{placement.source}:{placement.line}: snippet {placement.snippet_id!r} reads a clock, and its stated "
                "output has no [..] for what the clock gives: print no figure or comparison of times, or match it with [..]"
            )
    assert readers == ["debugging/fix"], readers  # the one that prints a time, with [..]
