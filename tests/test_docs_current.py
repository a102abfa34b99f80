"""The repository's own docs (README.md, docs/contributing.md) say what the code does now.

They are read by people, not built against the code, so they drift silently:
the report schemas and their fields, the warning subtypes, where the build's
report goes, and what ``snipcheck new``'s starting code prints.
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
SCHEMAS = REPO / "_ext" / "snipcheck" / "schemas"


def test_the_readme_names_both_report_formats_and_every_field_of_the_verify_report() -> None:
    assert f'"schema": "{SCHEMA}"' in README
    assert f'"{BUILD_SCHEMA}"' in README
    assert re.findall(r'"snipcheck-(?:verify|build)/\d+"', README) == [f'"{SCHEMA}"', f'"{BUILD_SCHEMA}"']
    verify = json.loads((SCHEMAS / "verify-report-3.schema.json").read_text(encoding="utf-8"))
    table = dict(re.findall(r"^\| `([a-z_]+)` \| (.*) \|$", README, re.MULTILINE))
    assert set(verify["properties"]) - {"schema"} <= set(table)
    fields = set(re.findall(r"`([a-z_]+)`", table["snippets"]))
    assert fields == set(verify["$defs"]["snippet"]["properties"])


def test_the_readme_names_every_field_of_the_build_reports_snippets_and_execution_table() -> None:
    build = json.loads((SCHEMAS / "build-report.schema.json").read_text(encoding="utf-8"))
    table = dict(re.findall(r"^\| `([a-z_]+)` \(build\) \| (.*) \|$", README, re.MULTILINE))
    assert set(build["properties"]) - {"schema", "stamp", "reference"} <= set(table)
    named = set(re.findall(r"`([a-z_-]+)`", table["execution"]))
    assert set(build["properties"]["execution"]["properties"]) <= named
    assert set(build["$defs"]["row"]["properties"]) | set(build["$defs"]["row"]["properties"]["origin"]["properties"]) <= named
    assert {"origin", "output"} <= set(re.findall(r"`([a-z_]+)`", table["snippets"]))
    assert set(build["$defs"]["snippet"]["properties"]["output"]["enum"]) - {None} <= set(re.findall(r"`([a-z]+)`", table["snippets"]))


def test_the_readme_and_the_contributing_page_name_every_warning_subtype() -> None:
    sentence = re.search(r"Warnings all have type `snipcheck` and a subtype — (.*?) — ", README, re.DOTALL)
    assert sentence is not None
    assert re.findall(r"`([a-z]+)`", sentence.group(1)) == list(SUBTYPES)
    rows = re.findall(r"^\| `([a-z]+)` \|", CONTRIBUTING.split("## 构建警告")[1], re.MULTILINE)
    assert rows[: len(SUBTYPES)] == list(SUBTYPES)


def test_the_docs_name_the_build_reports_real_folder(tmp_path) -> None:
    settings, _ = Settings.from_mapping(tmp_path, {}, tmp_path / "_build" / "doctrees")
    shown = settings.report_dir.relative_to(tmp_path).as_posix()
    assert shown == "_build/doctrees/snipcheck-report"
    for text in (README, CONTRIBUTING):
        assert "_build/snipcheck/" not in text
    assert f"`{shown}/`" in README and f"`{shown}/diffs/`" in CONTRIBUTING


def test_the_contributing_page_shows_what_the_starting_code_of_snipcheck_new_prints() -> None:
    shown = re.search(r"```\{snippet\} inplace/my-example\n(.+?)\n```", CONTRIBUTING.split("### 4.")[1], re.DOTALL)
    assert shown is not None
    printed = subprocess.run([sys.executable, "-c", scaffold.PYTHON], capture_output=True, text=True, check=True)
    assert shown.group(1) == printed.stdout.rstrip("\n")


def test_the_readmes_set_up_installs_axe_core_before_the_tests() -> None:
    # Issue 34: a new user following the set-up got the accessibility tests skipped
    setup = README.split("## Set up, build, test", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", setup, re.DOTALL)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert "npm ci --prefix tests/axe --no-audit --no-fund" in commands
    assert commands.index("npm ci --prefix tests/axe --no-audit --no-fund") < commands.index("nox -s tests")
