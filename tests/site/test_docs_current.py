"""The repository's own docs say what the code does now, and the README stays a short map.

README.md, the guide's pages (``guide/*.rst``) and docs/contributing.md are
read by people, not built against the code, so they drift silently: the
report schemas and their fields (the guide's Reports page), the warning
subtypes (its Reference page), where the build's report goes (its page on
files), the set-up steps (the README) and what ``snipcheck new``'s starting
code prints (the contributing page).  The README holds no reference of its
own (issue 35): it stays short, and every guide page it links is a page of
the guide.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from conftest import REPO
from snipcheck.app import scaffold
from snipcheck.report.verify import SCHEMA
from snipcheck.settings import Settings
from snipcheck.sphinxext.log import SUBTYPES
from snipcheck.sphinxext.summary import BUILD_SCHEMA

README = (REPO / "README.md").read_text(encoding="utf-8")
CONTRIBUTING = (REPO / "docs" / "contributing.md").read_text(encoding="utf-8")
GUIDE = REPO / "guide"
REPORT = (GUIDE / "report.rst").read_text(encoding="utf-8")
REFERENCE = (GUIDE / "reference.rst").read_text(encoding="utf-8")
FILES = (GUIDE / "files.rst").read_text(encoding="utf-8")
SCHEMAS = REPO / "_ext" / "snipcheck" / "schemas"

#: The most lines the README may have: a page of what it is, the set-up, a map
#: and links; anything longer is reference, which belongs in the guide.
README_MOST_LINES = 120


def section(page: str, title: str) -> str:
    """The text of the reST section ``title`` of ``page`` (its subsections
    included), up to the next heading underlined as it is, or as the page's title."""
    lines = page.splitlines()
    start = lines.index(title)
    ends = {lines[start + 1][0], "="}
    for i in range(start + 2, len(lines) - 1):
        heading, under = lines[i], lines[i + 1]
        if heading[:1].isalnum() and len(under) >= len(heading) and set(under) in ({c} for c in ends):
            return "\n".join(lines[start:i])
    return "\n".join(lines[start:])


def field_tables(text: str) -> list[dict[str, str]]:
    """Each reST simple table of ``text`` whose columns are ``field`` and
    ``meaning``, in order: each field's name (the literal in the first column)
    → its meaning (the second column, continuation lines joined)."""
    lines = text.splitlines()
    tables = []
    for i in range(len(lines) - 2):
        border = re.fullmatch(r"(=+)(\s+)=+", lines[i])
        if not border or lines[i + 1].split() != ["field", "meaning"] or lines[i + 2] != lines[i]:
            continue
        column = len(border.group(1)) + len(border.group(2))
        rows: dict[str, str] = {}
        name = ""
        for line in lines[i + 3 :]:
            if line == lines[i]:
                break
            if line[:column].strip():
                name = line[:column].strip().strip("`")
                rows[name] = line[column:].strip()
            else:
                rows[name] += " " + line[column:].strip()
        tables.append(rows)
    return tables


def test_the_report_page_names_both_report_formats_and_every_field_of_the_verify_report() -> None:
    assert f'"schema": "{SCHEMA}"' in REPORT
    assert f'"{BUILD_SCHEMA}"' in REPORT
    verify_tables = field_tables(section(REPORT, "The verify report"))
    build_tables = field_tables(section(REPORT, "The build report"))
    tables_text = "\n".join(meaning for rows in verify_tables + build_tables for meaning in rows.values())
    assert re.findall(r'"snipcheck-(?:verify|build)/\d+"', tables_text) == [
        f'"{SCHEMA}"',
        f'"{BUILD_SCHEMA}"',
    ]
    verify = json.loads((SCHEMAS / "verify-report-3.schema.json").read_text(encoding="utf-8"))
    table, entry = verify_tables  # the report's fields, then each entry of its "snippets"
    assert set(verify["properties"]) - {"schema"} <= set(table)
    fields = set(entry)
    assert fields == set(verify["$defs"]["snippet"]["properties"])


def test_the_report_page_names_every_field_of_the_build_reports_snippets_and_execution_table() -> None:
    build = json.loads((SCHEMAS / "build-report.schema.json").read_text(encoding="utf-8"))
    table, execution, rows, entry = field_tables(section(REPORT, "The build report"))
    assert set(build["properties"]) - {"schema", "stamp", "reference"} <= set(table)
    named = (
        set(execution)
        | set(rows)
        | set(re.findall(r"`([a-z_-]+)`", " ".join([*execution.values(), *rows.values()])))
    )
    assert set(build["properties"]["execution"]["properties"]) <= named
    assert (
        set(build["$defs"]["row"]["properties"])
        | set(build["$defs"]["row"]["properties"]["origin"]["properties"])
        <= named
    )
    assert {"origin", "output"} <= set(entry)
    assert set(build["$defs"]["snippet"]["properties"]["output"]["enum"]) - {None} <= set(
        re.findall(r"`([a-z]+)`", entry["output"])
    )


def test_the_reference_and_the_contributing_page_name_every_warning_subtype() -> None:
    listed = section(REFERENCE, "Warning subtypes")
    assert re.findall(r"^\.\. subtype:: snipcheck\.([a-z]+)$", listed, re.MULTILINE) == list(SUBTYPES)
    rows = re.findall(r"^\| `([a-z]+)` \|", CONTRIBUTING.split("## 构建警告")[1], re.MULTILINE)
    assert rows[: len(SUBTYPES)] == list(SUBTYPES)


def test_the_docs_name_the_build_reports_real_folder(tmp_path) -> None:
    settings, _ = Settings.from_mapping(tmp_path, {}, tmp_path / "_build" / "doctrees")
    shown = settings.report_dir.relative_to(tmp_path).as_posix()
    assert shown == "_build/doctrees/snipcheck-report"
    for text in (README, CONTRIBUTING, FILES, REPORT):
        assert "_build/snipcheck/" not in text
    assert f"`{shown}/`" in FILES and f"`{shown}/diffs/`" in CONTRIBUTING


def test_the_contributing_page_shows_what_the_starting_code_of_snipcheck_new_prints() -> None:
    shown = re.search(
        r"```\{snippet\} inplace/my-example\n(.+?)\n```", CONTRIBUTING.split("### 4.")[1], re.DOTALL
    )
    assert shown is not None
    printed = subprocess.run(
        [sys.executable, "-c", scaffold.PYTHON], capture_output=True, text=True, check=True
    )
    assert shown.group(1) == printed.stdout.rstrip("\n")


def test_the_readmes_set_up_installs_axe_core_before_the_tests() -> None:
    # Issue 34: a new user following the set-up got the accessibility tests skipped
    setup = README.split("## Set up, build, test", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", setup, re.DOTALL)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert "npm ci --prefix tests/axe --no-audit --no-fund" in commands
    assert commands.index("npm ci --prefix tests/axe --no-audit --no-fund") < commands.index("nox -s tests")


def test_the_readme_stays_short() -> None:
    # Issue 35: the README had grown to 479 lines, most of it reference that the guide has
    lines = README.splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines; move reference into guide/"


def _guide_pages() -> set[str]:
    """The pages of the guide's table of contents (``guide/index.rst``), by file name."""
    index = (GUIDE / "index.rst").read_text(encoding="utf-8")
    toctree = index.split(".. toctree::", 1)[1]
    names = [
        line.strip()
        for line in toctree.splitlines()[1:]
        if line.startswith("   ") and not line.strip().startswith(":")
    ]
    files = {}
    for name in names:
        (found,) = [p.name for p in GUIDE.glob(f"{name}.*") if p.suffix in (".rst", ".md")]
        files[name] = found
    return {"index.rst", *files.values()}


def test_every_guide_link_in_the_readme_is_a_page_of_the_guide_and_every_page_is_linked() -> None:
    links = re.findall(r"\]\((guide/[^)\s]*)\)", README)
    assert links, "the README links no page of the guide"
    pages = _guide_pages()
    linked = set()
    for link in links:
        path = link.split("#", 1)[0]
        assert (REPO / path).is_file(), f"README links {link}: no such file"
        name = path.removeprefix("guide/")
        assert name in pages, f"README links {link}, which is not a page of the guide's table of contents"
        linked.add(name)
    assert pages - {"index.rst"} <= linked, (
        f"guide pages the README does not link: {sorted(pages - linked - {'index.rst'})}"
    )
