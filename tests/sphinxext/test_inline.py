"""Code written in the page (``snippet-code``): same isolation, record, checks and plugin as a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOTS
from helpers import html, placements_in, snipcheck_cli
from faults_support import sphinx_build


@pytest.fixture
def inline(tmp_path: Path) -> Path:
    root = tmp_path / "inline"
    shutil.copytree(ROOTS / "test-inline", root)
    return root


def test_record_fills_the_outputs_of_code_written_in_pages(inline: Path, cache_dir: Path) -> None:
    out = snipcheck_cli(inline, "record", cache=cache_dir)
    assert out.returncode == 1  # clash/both cannot be loaded
    assert "page.md:21: snippet 'clash/both' has its code both in the page (line 18) and in snippets/clash/both.py" in out.stderr
    assert [p.stated for p in placements_in(inline / "index.rst")] == [
        "hello from rst",
        "before\nTraceback (most recent call last):\n"
        '  File "inline/rst-raises.py", line 5, in <module>\n    1 / 0\n    ~~^~~\nZeroDivisionError: division by zero',
    ]
    (md_hello, _) = placements_in(inline / "page.md")
    assert md_hello.stated == "hello from MyST inline/md-hello.py"


def test_the_build_shows_the_code_where_it_is_written_and_checks_it(inline: Path, tmp_path: Path, cache_dir: Path) -> None:
    assert snipcheck_cli(inline, "record", cache=cache_dir).returncode == 1
    (inline / "snippets" / "clash" / "both.py").unlink()
    assert snipcheck_cli(inline, "record", "clash/both", cache=cache_dir).returncode == 0
    built = sphinx_build(inline, tmp_path / "build", cache_dir)
    assert [w for w in built.warnings if "inline/orphan" not in w] == [], built.warnings_text
    (orphan,) = built.warnings
    assert orphan.endswith(
        "page.md:14: WARNING: snippet 'inline/orphan': its code is written here, but no snippet directive in this "
        "page places its output, so it never runs; add one after the code [snipcheck.missing]"
    )
    page = html(built.outdir / "index.html")
    code = page.find(id="snippet-code-inline-rst-raises")
    assert [n.get_text() for n in code.select(".linenos")] == ["4", "5"]  # the tag block is not shown
    output = page.find(id="snippet-inline-rst-raises")
    assert output.find("div", class_="highlight") is None or "greeting" not in output.get_text()
    assert 'File "inline/rst-raises.py", line 5' in output.get_text()
    report = json.loads((tmp_path / "build" / "report" / "report.json").read_text())
    assert {r["snippet_id"]: r["status"] for r in report["snippets"]} == {
        "inline/rst-hello": "ok", "inline/rst-raises": "ok", "inline/md-hello": "ok", "clash/both": "ok",
    }  # fmt: skip


def test_an_edited_output_of_inline_code_drifts(inline: Path, tmp_path: Path, cache_dir: Path) -> None:
    (inline / "snippets" / "clash" / "both.py").unlink()
    assert snipcheck_cli(inline, "record", cache=cache_dir).returncode == 0
    page = inline / "page.md"
    page.write_text(page.read_text().replace('print("hello from MyST", sys.argv[0])', 'print("changed")'))
    built = sphinx_build(inline, tmp_path / "build", cache_dir)
    assert built.statuscode == 1
    (drift,) = built.about("inline/md-hello")
    assert "-hello from MyST inline/md-hello.py\n+changed" in drift
    done = snipcheck_cli(inline, "verify", cache=cache_dir)
    assert done.returncode == 1 and "inline/md-hello" in done.stdout


def test_a_myst_parser_project_builds_after_a_myst_nb_project_in_the_same_process(
    inline: Path, tmp_path: Path, cache_dir: Path
) -> None:
    """CI failure: Sphinx merges myst-nb's ``.md`` parser into the shared default
    ``source_suffix`` (sphinx-doc/sphinx#11795); the next project in the process
    (a test run, the pytest plugin) then asked for a parser it never loaded."""
    basic = tmp_path / "basic"
    shutil.copytree(ROOTS / "test-basic", basic)
    sphinx_build(basic, tmp_path / "nb", cache_dir)  # myst_nb, source_suffix unset
    (inline / "snippets" / "clash" / "both.py").unlink()
    built = sphinx_build(inline, tmp_path / "parser", cache_dir)  # myst_parser, source_suffix unset
    assert (built.outdir / "page.html").is_file(), built.warnings_text


@pytest.mark.parametrize("directive", ["snippet", "snippet-code"])
@pytest.mark.parametrize("parser", ["myst_parser", "myst_nb"])
def test_a_snippet_without_an_id_is_told_the_syntax_of_its_own_page(
    tmp_path: Path, cache_dir: Path, parser: str, directive: str
) -> None:
    """adoption.md #4, #5: code written as the body of ``.. snippet::`` gave
    a MyST fence as the example on an ``.rst`` page; ``snippet-code`` gave
    docutils' "1 argument(s) required"."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(f'extensions = [{parser!r}, "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_preload = []\n')
    (src / "index.rst").write_text(
        f"Index\n=====\n\n.. toctree::\n\n   page\n\n.. {directive}::\n\n   print('code in the body')\n"
    )
    (src / "page.md").write_text(f"# Page\n\n```{{{directive}}}\nprint('code in the body')\n```\n")
    built = sphinx_build(src, tmp_path / "build", cache_dir)
    assert [w.split(": WARNING: ")[0].rsplit("/", 1)[-1] for w in built.warnings] == ["index.rst:8", "page.md:3"]
    rst, md = (w.split(": WARNING: ")[1] for w in built.warnings)
    assert rst == (
        f"{directive} directive without a snippet id: write the id after the directive name, "
        f"e.g. .. {directive}:: my/example [snipcheck.tag]"
    )
    assert md == (
        f"{directive} directive without a snippet id: write the id after the directive name, "
        f"e.g. ```{{{directive}}} my/example [snipcheck.tag]"
    )
