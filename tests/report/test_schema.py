"""The published JSON Schemas of snipcheck's reports (issue 12 §12).

``snipcheck/schemas/verify-report-3.schema.json`` describes what ``snipcheck
verify --json`` and ``merge --json`` write (``"schema": "snipcheck-verify/3"``),
``snipcheck/schemas/build-report.schema.json`` the ``report.json`` every build
writes.  Both refuse unknown fields and require every field, so the real
reports validated here (from a verify run on a small project holding every
status, its shards and their merge, from ``sphinx.testing`` builds of test
roots, and the committed ``docs/_reports``) fail as soon as the code renames,
adds or drops a field without the schema following.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import REPO
from snipcheck.report.verify import SCHEMA
from snipcheck.sphinxext.summary import BUILD_SCHEMA as BUILD_FORMAT

VERIFY_SCHEMA = "verify-report-3.schema.json"
BUILD_SCHEMA = "build-report.schema.json"
REPORTS = sorted((REPO / "docs" / "_reports").glob("*.json"))


def schema(name: str) -> dict[str, Any]:
    """A schema as the installed package ships it (``snipcheck/schemas/``)."""
    return json.loads((files("snipcheck") / "schemas" / name).read_text(encoding="utf-8"))


def problems(report: Any, name: str) -> list[str]:
    """Every way ``report`` breaks schema ``name`` (empty when it is valid)."""
    validator = jsonschema.Draft202012Validator(schema(name))
    return sorted(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(report)
    )


@pytest.mark.parametrize("name", [VERIFY_SCHEMA, BUILD_SCHEMA])
def test_the_schemas_are_valid_draft_2020_12(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(name))


def test_the_verify_schema_names_the_schema_verify_writes() -> None:
    assert schema(VERIFY_SCHEMA)["properties"]["schema"] == {
        "const": SCHEMA,
        "description": "The format and its version.",
    }


def test_the_build_schema_names_the_schema_the_build_writes() -> None:
    assert BUILD_FORMAT == "snipcheck-build/3"
    assert schema(BUILD_SCHEMA)["properties"]["schema"] == {
        "const": BUILD_FORMAT,
        "description": "The format and its version.",
    }
    assert "schema" in schema(BUILD_SCHEMA)["required"]


# --- verify reports of a real run ----------------------------------------------------------------

PAGE = """\
Statuses
========

.. snippet:: s/unchanged

.. snippet:: s/wide-1

.. snippet:: s/wide-2

.. snippet:: s/drifted

.. snippet:: s/failing

.. snippet:: s/not-run

.. snippet:: s/error
"""

RECORDED = {
    "unchanged": "print(object())\n",  # an address: unchanged, with a masked difference
    "wide-1": 'print("one")\n',
    "wide-2": 'print("two")\n',
    "drifted": 'print("three")\n',
    "failing": 'print("fine")\n',
    "not-run": 'print("needs burn")\n\n# /// snipcheck\n# requires = ["burn"]\n# ///\n',
    "error": 'print("soon gone")\n',
}
# After recording: one line new in three snippets (environment-wide), a real
# change, an exception the tags do not expect, a snippet file removed.
CHANGED = {
    "wide-1": 'print("one")\nprint("NEW WARNING AT START-UP")\n',
    "wide-2": 'print("two")\nprint("NEW WARNING AT START-UP")\n',
    "drifted": 'print("3")\nprint("NEW WARNING AT START-UP")\n',
    "failing": 'raise SystemExit("no longer fine")\n',
}


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "-c", str(root), *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Reports of a real verify run: whole, and in two shards (and the project's folder, ``root``)."""
    root = tmp_path_factory.mktemp("schema") / "project"
    (root / "snippets" / "s").mkdir(parents=True)
    (root / "conf.py").write_text(
        'extensions = ["snipcheck"]\nsnipcheck_runner = "subprocess"\nsnipcheck_preload = []\n'
        'snipcheck_requirements = ["burn"]\n'
    )
    (root / "index.rst").write_text(PAGE)
    for name, code in RECORDED.items():
        (root / "snippets" / "s" / f"{name}.py").write_text(code)
    out = _cli(root, "record")
    assert out.returncode == 0, out.stdout + out.stderr
    for name, code in CHANGED.items():
        (root / "snippets" / "s" / f"{name}.py").write_text(code)
    (root / "snippets" / "s" / "error.py").unlink()
    reports = {}
    for label, args in {
        "whole": ["--json", "whole.json"],
        "shard1": ["--shard", "1/2", "--json", "shard1.json"],
        "shard2": ["--shard", "2/2", "--json", "shard2.json"],
    }.items():
        out = _cli(root, "verify", "--no-cache", *args)  # a fresh run: another address to mask
        assert out.returncode in (0, 1), out.stdout + out.stderr
        reports[label] = json.loads((root / f"{label}.json").read_text(encoding="utf-8"))
    reports["root"] = root
    return reports


@pytest.fixture(scope="module")
def merged(verified: dict[str, Any]) -> dict[str, Any]:
    """The two shard reports merged by ``snipcheck merge``."""
    root = verified["root"]
    out = _cli(root, "merge", "shard1.json", "shard2.json", "--json", "merged.json")
    assert out.returncode == 1, out.stdout + out.stderr
    return json.loads((root / "merged.json").read_text(encoding="utf-8"))


def test_a_real_verify_report_holds_every_status_and_validates(verified: dict[str, Any]) -> None:
    report = verified["whole"]
    statuses = {s["id"]: s["status"] for s in report["snippets"]}
    assert statuses == {
        "s/unchanged": "unchanged", "s/wide-1": "drifted", "s/wide-2": "drifted", "s/drifted": "drifted",
        "s/failing": "failing", "s/not-run": "not-run", "s/error": "error",
    }  # fmt: skip
    by_id = {s["id"]: s for s in report["snippets"]}
    # the address differs on every run: masked, and no difference a committed report keeps
    assert by_id["s/unchanged"]["masked"] == ["memory-addresses"] and by_id["s/unchanged"]["masked_diff"] == ""
    assert by_id["s/unchanged"]["actual"].startswith("<object object at 0x[..]>")
    assert by_id["s/not-run"]["missing"] == ["burn"] and by_id["s/not-run"]["actual"] is None
    assert [c["text"] for c in report["environment_wide"]] == ["NEW WARNING AT START-UP"]
    assert by_id["s/wide-1"]["env_wide_only"] and not by_id["s/drifted"]["env_wide_only"]
    assert report["holds"] is False
    assert problems(report, VERIFY_SCHEMA) == []


@pytest.mark.parametrize("label", ["shard1", "shard2"])
def test_shard_reports_validate(verified: dict[str, Any], label: str) -> None:
    assert verified[label]["shard"] == {"index": int(label[-1]), "count": 2}
    assert problems(verified[label], VERIFY_SCHEMA) == []


def test_the_merged_report_validates(merged: dict[str, Any]) -> None:
    assert merged["shard"] == {"index": 1, "count": 1} and len(merged["snippets"]) == 7
    assert problems(merged, VERIFY_SCHEMA) == []


def _rename(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return {new if key == old else key: value for key, value in data.items()}


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        ("report", "environment_wide", "environmentWide"),
        ("report", "holds", "ok"),
        ("stamp", "torch", "pytorch"),
        ("counts", "not-run", "not_run"),
        ("snippet", "masked_diff", "maskedDiff"),
        ("snippet", "id", "snippet_id"),
    ],
)
def test_a_renamed_verify_report_field_fails_validation(
    verified: dict[str, Any], where: str, old: str, new: str
) -> None:
    report = copy.deepcopy(verified["whole"])
    if where == "report":
        report = _rename(report, old, new)
    elif where == "snippet":
        report["snippets"][0] = _rename(report["snippets"][0], old, new)
    else:
        report[where] = _rename(report[where], old, new)
    found = problems(report, VERIFY_SCHEMA)
    assert any(f"'{old}' is a required property" in p for p in found), found
    assert any(f"('{new}' was unexpected)" in p for p in found), found


def test_another_schema_version_fails_validation(verified: dict[str, Any]) -> None:
    report = dict(verified["whole"], schema="snipcheck-verify/2")
    assert problems(report, VERIFY_SCHEMA) == ["schema: 'snipcheck-verify/3' was expected"]


@pytest.mark.parametrize("path", REPORTS, ids=[p.name for p in REPORTS])
def test_the_committed_reports_validate(path: Path) -> None:
    """Only files that say they are ``snipcheck-verify/3``: older ``/2`` and ``/1``
    files are read by snipcheck for the versions page, but the published schema is /3's."""
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("schema") != SCHEMA:
        pytest.skip(
            f"{path.name} is a {report.get('schema')} report (not {SCHEMA}); regenerate it with verify"
        )
    assert problems(report, VERIFY_SCHEMA) == []


# --- build reports ---------------------------------------------------------------------------------


def _build_report(app: Any) -> dict[str, Any]:
    app.build()
    return json.loads((Path(app.config.snipcheck_report_dir) / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("statuses",),
    [
        pytest.param({"ok"}, marks=pytest.mark.sphinx("html", testroot="basic"), id="basic"),
        pytest.param({"ok", "drift"}, marks=pytest.mark.sphinx("html", testroot="drift"), id="drift"),
        pytest.param({"ok", "not-run"}, marks=pytest.mark.sphinx("html", testroot="requires"), id="requires"),
        pytest.param({"drift", "exec"}, marks=pytest.mark.sphinx("html", testroot="outcomes"), id="outcomes"),
        pytest.param(
            {"off"},
            marks=pytest.mark.sphinx("html", testroot="basic", confoverrides={"snipcheck_execute": False}),
            id="execution-off",
        ),
    ],
)
def test_the_build_report_validates(app: Any, statuses: set[str]) -> None:
    report = _build_report(app)
    assert report["schema"] == BUILD_FORMAT  # like the verify report's, the first field
    assert next(iter(report)) == "schema"
    assert {s["status"] for s in report["snippets"]} == statuses
    assert problems(report, BUILD_SCHEMA) == []


@pytest.mark.sphinx("html", testroot="drift")
@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        ("report", "snippets", "placements"),
        ("report", "schema", "format"),
        ("stamp", "env", "environment"),
        ("snippet", "snippet_id", "id"),
    ],
)
def test_a_renamed_build_report_field_fails_validation(app: Any, where: str, old: str, new: str) -> None:
    report = _build_report(app)
    assert report["stamp"] is not None
    if where == "report":
        report = _rename(report, old, new)
    elif where == "snippet":
        report["snippets"][0] = _rename(report["snippets"][0], old, new)
    else:
        report[where] = _rename(report[where], old, new)
    found = problems(report, BUILD_SCHEMA)
    assert any(
        f"'{old}' is a required property" in p or "is not valid under any of the given schemas" in p
        for p in found
    ), found
