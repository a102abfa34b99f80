"""The English guide for outside users (``guide/``, issue 12 §12).

The guide is a Sphinx project of its own whose examples are snippets.  It is
built once per module with ``-W``, execution on, into a temporary folder, and
its reference page must define every name the extension offers: each config
value of :data:`snipcheck.settings.VALUES` (with its real default), each tag
key of :data:`snipcheck.sources.tags.KNOWN_KEYS`, each warning subtype of
:data:`snipcheck.sphinxext.log.SUBTYPES`, each CLI command and option of
:func:`snipcheck.app.cli._parser`, each directive, directive option and role the
extension registers, and each normalizer of
:data:`snipcheck.judge.normalize.REGISTRY`.  A name missing from the page, or one the
extension gains without a line in the guide, fails here, so the guide cannot
go stale silently.  "Defined" means an anchor made by a definition directive
(``confval``, ``tagkey``, ``subtype``, ``command``, ``option``,
``rst:directive``, ``rst:directive:option``, ``rst:role``, ``normalizer``),
not a passing mention.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from bs4 import BeautifulSoup
from conftest import REPO
from noxfile_support import noxfile, session  # noqa: F401  (the noxfile under a recording stand-in)
from snipcheck import settings
from snipcheck.app import cli
from snipcheck.judge import normalize
from snipcheck.sources import tags
from snipcheck.sphinxext import log

GUIDE = REPO / "guide"
SCHEMAS = REPO / "_ext" / "snipcheck" / "schemas"
PAGES = [
    "index",
    "quickstart-rst",
    "quickstart-myst",
    "reference",
    "cli",
    "pytest",
    "ci",
    "report",
    "normalizers",
    "files",
    "scripts",
    "shards",
    "wildcards",
    "figures",
    "develop",
]


def _env() -> dict[str, str]:
    """This environment without a developer's cache override: the build keeps its cache in its doctree folder."""
    return {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """The guide built with ``sphinx-build -W`` (execution on) into a temporary folder."""
    out = tmp_path_factory.mktemp("guide")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
         "-d", str(out / "doctrees"), str(GUIDE), str(out / "html")],
        capture_output=True, text=True, timeout=900, check=False, env=_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]
    return {
        "html": out / "html",
        "doctrees": out / "doctrees",
        "stdout": result.stdout,
        "stderr": result.stderr,
    }


@pytest.fixture(scope="module")
def reference(built: dict[str, Path | str]) -> BeautifulSoup:
    html = Path(built["html"]) / "reference.html"
    return BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")


def _anchors(soup: BeautifulSoup) -> set[str]:
    """Ids of the definitions on a page: the ``<dt id=...>`` of Sphinx's object
    descriptions, and the ids inside them (an option's other spellings)."""
    return {tag["id"] for tag in soup.select("dt.sig[id], dt.sig [id]")}


def _missing(anchors: set[str], wanted: dict[str, str]) -> list[str]:
    """The names in ``wanted`` (name → anchor) whose anchor is not on the page."""
    return sorted(name for name, anchor in wanted.items() if anchor not in anchors)


def test_the_guide_builds_with_W_and_runs_every_snippet(built: dict[str, Path | str]) -> None:
    html = Path(built["html"])
    for page in PAGES:
        assert (html / f"{page}.html").is_file(), page
    report = json.loads(
        (Path(built["doctrees"]) / "snipcheck-report" / "report.json").read_text(encoding="utf-8")
    )
    statuses = {r["snippet_id"]: r["status"] for r in report["snippets"]}
    assert statuses and set(statuses.values()) == {"ok"}, statuses
    # every snippet file of the guide is placed, or a script whose cells are (and so ran and matched)
    files = {
        p.relative_to(GUIDE / "snippets").with_suffix("").as_posix()
        for p in (GUIDE / "snippets").rglob("*.py")
        if not p.name.startswith("_")
    }
    scripts = {i.rpartition("/")[0] for i in statuses}  # a snippet-script's cells are <script>/<cell>
    assert files <= set(statuses) | scripts, sorted(files - set(statuses) - scripts)
    # both markups, each a real page in its markup
    assert (GUIDE / "quickstart-rst.rst").is_file() and (GUIDE / "quickstart-myst.md").is_file()
    summary = str(built["stdout"]) + str(built["stderr"])
    assert f"snipcheck: {len(statuses)} snippets on" in summary
    # plain Python: no example imports torch
    sources = {p.name: p.read_text(encoding="utf-8") for p in (GUIDE / "snippets").rglob("*.py")}
    assert [
        name for name, text in sources.items() if re.search(r"^\s*(import|from) torch\b", text, re.MULTILINE)
    ] == []


def test_the_guide_is_english_and_loads_no_chapter_extension(built: dict[str, Path | str]) -> None:
    conf = (GUIDE / "conf.py").read_text(encoding="utf-8")
    assert 'language = "en"' in conf
    assert "snipcheck_chapter" not in conf
    for page in PAGES:
        text = (Path(built["html"]) / f"{page}.html").read_text(encoding="utf-8")
        assert not [ch for ch in text if "\u4e00" <= ch <= "\u9fff"], page


def test_every_config_value_is_documented_with_its_default(reference: BeautifulSoup) -> None:
    anchors = _anchors(reference)
    assert _missing(anchors, {name: f"confval-{name}" for name in settings.VALUES}) == []
    wrong = {}
    for name, decl in settings.VALUES.items():
        dd = reference.find(id=f"confval-{name}").find_next_sibling("dd")
        fields = {
            dt.get_text(" ", strip=True).rstrip(" :"): dt.find_next_sibling("dd").get_text(" ", strip=True)
            for dt in dd.select(":scope > dl.field-list > dt")
        }
        stated = ast.literal_eval(fields["Default"])
        if stated != decl.default:
            wrong[name] = ("default", stated, decl.default)
        # "Re-reads pages" exactly for the values declared with rebuild="env"
        if ("Re-reads pages" in dd.get_text(" ")) != (decl.rebuild == "env"):
            wrong[name] = ("rebuild", decl.rebuild)
    assert wrong == {}, "the reference says otherwise than settings.VALUES"


def test_every_tag_key_is_documented(reference: BeautifulSoup) -> None:
    assert _missing(_anchors(reference), {key: f"tagkey-{key}" for key in tags.KNOWN_KEYS}) == []


def test_every_warning_subtype_is_documented(reference: BeautifulSoup) -> None:
    wanted = {subtype: f"subtype-snipcheck.{subtype}" for subtype in log.SUBTYPES}
    assert _missing(_anchors(reference), wanted) == []
    assert "suppress_warnings" in reference.get_text()


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_cli_command_and_option_is_documented(reference: BeautifulSoup) -> None:
    anchors = _anchors(reference)
    commands = _commands()
    assert _missing(anchors, {name: f"command-{name}" for name in commands}) == []
    common = {s for a in cli._common(defaults=True)._actions for s in a.option_strings}
    wanted = {}
    for name, parser in commands.items():
        for action in parser._actions:
            if not action.option_strings:  # a positional: documented as "arg-METAVAR"
                metavar = action.metavar or action.dest.upper()
                wanted[f"{name} {metavar}"] = f"cmdoption-snipcheck-{name}-arg-{metavar}"
            for option in action.option_strings:
                if option in common or option in ("-h", "--help"):
                    wanted[option] = f"cmdoption-snipcheck-{option.lstrip('-')}"
                else:
                    wanted[f"{name} {option}"] = f"cmdoption-snipcheck-{name}-{option.lstrip('-')}"
    assert _missing(anchors, wanted) == []
    assert "cmdoption-snipcheck-version" in anchors


def _registered() -> tuple[dict[str, list[str]], list[str]]:
    """Directives (name → option names) and roles that ``snipcheck``'s setup registers."""
    import snipcheck.sphinxext as ext

    app = mock.MagicMock()
    app.config.overrides = {}
    ext.setup(app)
    directives = {
        c.args[0]: sorted(getattr(c.args[1], "option_spec", None) or {})
        for c in app.add_directive.call_args_list
    }
    roles = [c.args[0] for c in app.add_role.call_args_list]
    return directives, roles


def test_every_directive_option_and_role_is_documented(reference: BeautifulSoup) -> None:
    directives, roles = _registered()
    assert {"snippet", "snippet-code", "refuted-claim", "snipcheck-environment"} <= set(directives)
    wanted = {f"directive {d}": f"directive-{d}" for d in directives}
    wanted |= {
        f"{d} :{o}:": f"directive-option-{d}-{o}" for d, options in directives.items() for o in options
    }
    wanted |= {f"role {r}": f"role-{r}" for r in roles}
    assert _missing(_anchors(reference), wanted) == []


def test_every_directive_shows_both_markups(reference: BeautifulSoup) -> None:
    directives, _ = _registered()
    for name in directives:
        dt = reference.find(id=f"directive-{name}")
        assert dt is not None, f"directive {name} is not documented"
        body = dt.find_next_sibling("dd")
        blocks = [
            b.get_text() for b in body.select(":scope > div.highlight-rst, :scope > div.highlight-markdown")
        ]
        assert any(f".. {name}::" in b for b in blocks), f"{name}: no reStructuredText syntax"
        assert any(f"```{{{name}}}" in b for b in blocks), f"{name}: no MyST syntax"


def test_every_normalizer_is_documented(reference: BeautifulSoup) -> None:
    assert _missing(_anchors(reference), {n: f"normalizer-{n}" for n in normalize.REGISTRY}) == []


def test_the_report_page_names_every_field_of_both_schemas(built: dict[str, Path | str]) -> None:
    page = BeautifulSoup((Path(built["html"]) / "report.html").read_text(encoding="utf-8"), "html.parser")
    literals = {code.get_text() for code in page.select("table code")}

    def fields(schema: dict) -> set[str]:
        found = set()
        for key, value in schema.items():
            if key == "properties":
                found |= set(value)
            if isinstance(value, dict):
                found |= fields(value)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        found |= fields(item)
        return found

    for name in ("verify-report-3.schema.json", "build-report.schema.json"):
        schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
        assert fields(schema) - literals == set(), name
        # the page links the schema file for download
        assert any(a.get("href", "").endswith(name) for a in page.select("a.download")), name


def test_the_record_command_the_guide_names_runs_from_the_repository_root(
    built: dict[str, Path | str],
) -> None:
    """``python -m snipcheck -c guide record`` (the guide's snipcheck_record_command): a
    relative conf dir; with the build's cache, it finds nothing left to record."""
    env = dict(_env(), SNIPCHECK_CACHE_DIR=str(Path(built["doctrees"]) / "snipcheck-cache"))
    result = subprocess.run(
        [sys.executable, "-m", "snipcheck", "-c", "guide", "record", "--dry-run"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 stated output(s) would change" in result.stdout


def test_nox_session_guide_builds_it_into_build_guide_in_the_reference_environment(noxfile) -> None:  # noqa: F811
    guide = session(noxfile, "guide")
    args, kwargs = guide.calls[-1]
    assert Path(args[0]).name == "sphinx-build"
    assert args[1:] == [
        "-W",
        "--keep-going",
        "-b",
        "html",
        "-d",
        "_build/guide-doctrees",
        "guide",
        "_build/guide",
    ]
    assert Path(kwargs["env"]["VIRTUAL_ENV"]).name == f"torch-{noxfile.reference_torch()}"
