"""A verify report file that is damaged, foreign or of another schema gets one
clear line (issue 23 item 10): the file, the key at fault, what was found and
the schema the file says it has; ``merge``, ``accept --report`` and
``review --report`` refuse it with exit status 2 and write nothing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import snipcheck_cli
from snipcheck.model import Stamp
from snipcheck.report import read as report_file
from snipcheck.report.verify import IN_MEMORY, Report, SnippetReport

GOOD = Report(
    Stamp("3.11.7", "2.13.0+cpu", "CPU", "Linux x86_64"),
    "torch 2.13.0",
    (1, 1),
    (SnippetReport("f/a", "docs/t.md", 3, "drifted", diff="-old\n+new", stated="old", actual="new"),),
    total=1,
    fingerprint="0123456789abcdef",
).to_json()
WHY = "(schema snipcheck-verify/3; was it written by `snipcheck verify`?)"


def without(*path: str | int) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    *parents, last = path
    target: Any = data
    for key in parents:
        target = target[key]
    del target[last]
    return data


def with_value(value: object, *path: str | int) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    *parents, last = path
    target: Any = data
    for key in parents:
        target = target[key]
    target[last] = value
    return data


REQUIRED = [("stamp",), ("reference",), ("shard",), ("snippets",), ("environment_wide",), ("stamp", "python"),
            ("stamp", "torch"), ("stamp", "device"), ("stamp", "platform"), ("shard", "index"), ("shard", "count"),
            ("snippets", 0, "id"), ("snippets", 0, "doc"), ("snippets", 0, "line"), ("snippets", 0, "status")]  # fmt: skip


def shown(path: tuple[str | int, ...]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else ("." if out else "") + key
    return out


@pytest.mark.parametrize("path", REQUIRED, ids=shown)
def test_every_required_key_that_is_missing_is_named(tmp_path: Path, path: tuple[str | int, ...]) -> None:
    # Was: "x.json is not a snipcheck verify report: 'stamp'" (a KeyError's text).
    report = tmp_path / "x.json"
    report.write_text(json.dumps(without(*path)))
    with pytest.raises(report_file.ReportError) as caught:
        report_file.read(report)
    assert str(caught.value) == f"{report}: not a complete snipcheck verify report: key {shown(path)!r} is missing {WHY}"


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (("stamp",), "3.11", 'key \'stamp\' holds "3.11", not an object'),
        (("shard", "index"), "1", 'key \'shard.index\' holds "1", not an integer'),
        (("shard", "count"), True, "key 'shard.count' holds true, not an integer"),
        (("shard", "index"), 0, "key 'shard.index' holds 0, not 1 or more"),
        (("shard",), {"index": 3, "count": 2}, "key 'shard' says shard 3 of 2"),
        (("snippets",), {"f/a": 1}, 'key \'snippets\' holds {"f/a": 1}, not a list'),
        (("snippets", 0), "f/a", 'key \'snippets[0]\' holds "f/a", not an object'),
        (("snippets", 0, "status"), "weird", 'key \'snippets[0].status\' holds "weird", not one of unchanged, '
         "drifted, failing, not-run, error"),
        (("snippets", 0, "line"), "3", 'key \'snippets[0].line\' holds "3", not an integer'),
        (("snippets", 0, "actual"), 42, "key 'snippets[0].actual' holds 42, not a string or null"),
        (("snippets", 0, "problems"), "oops", 'key \'snippets[0].problems\' holds "oops", not a list of strings'),
        (("snippets", 0, "colour"), "red", "key 'snippets[0].colour' is not part of the format"),
        (("stamp", "torch"), 2.13, "key 'stamp.torch' holds 2.13, not a string or null"),
        (("environment_wide",), [{"sign": "*", "text": "x", "snippets": []}],
         'key \'environment_wide[0].sign\' holds "*", not one of +, -'),
        (("total",), -1, "key 'total' holds -1, a negative number"),
    ],
    ids=lambda v: None if isinstance(v, str) and "holds" in v else str(v)[:30],
)
def test_a_key_of_the_wrong_type_or_value_is_named_with_what_it_holds(
    tmp_path: Path, path: tuple[str | int, ...], value: object, said: str
) -> None:
    report = tmp_path / "x.json"
    report.write_text(json.dumps(with_value(value, *path)))
    with pytest.raises(report_file.ReportError) as caught:
        report_file.read(report)
    assert str(caught.value) == f"{report}: not a valid snipcheck verify report: {said} {WHY}"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "the file is empty, so not a verify report (`snipcheck verify --json FILE` writes one)"),
        (b"  \n", "the file is empty, so not a verify report (`snipcheck verify --json FILE` writes one)"),
        (b'{"schema": ', "not JSON (Expecting value: line 1 column 12 (char 11)), so not a verify report; "
         "write it again with `snipcheck verify --json`"),
        (b"\xff{}", "not a verify report: not UTF-8 text (byte 0: invalid start byte)"),
        (b"[1, 2]", "not a snipcheck verify report: it holds a JSON list, where a report holds an object (a verify "
         'report is the JSON object `snipcheck verify --json FILE` writes, with "schema": "snipcheck-verify/3")'),
        (json.dumps(without("schema")).encode(), "not a snipcheck verify report: it has no 'schema' key (a verify "
         'report is the JSON object `snipcheck verify --json FILE` writes, with "schema": "snipcheck-verify/3")'),
        (json.dumps(with_value("snipcheck-verify/4", "schema")).encode(), 'a report of schema "snipcheck-verify/4", '
         "which this snipcheck cannot read (it reads snipcheck-verify/3, snipcheck-verify/2 and snipcheck-verify/1); verify again with "
         "this snipcheck, or use the snipcheck that wrote it"),
        (b'{"schema": "snipcheck-build/1", "snippets": []}', "not a verify report but the build's report.json "
         "(written by sphinx-build) (schema snipcheck-build/1); give the file `snipcheck verify --json FILE` writes"),
    ],
    ids=["empty", "blank", "invalid-json", "not-utf8", "list", "no-schema", "newer-schema", "build-report"],
)
def test_a_file_that_is_no_verify_report_says_what_it_is(tmp_path: Path, content: bytes, said: str) -> None:
    report = tmp_path / "x.json"
    report.write_bytes(content)
    with pytest.raises(report_file.ReportError) as caught:
        report_file.read(report)
    assert str(caught.value) == f"{report}: {said}"


def test_an_older_report_without_the_later_optional_keys_is_still_read(tmp_path: Path) -> None:
    old = copy.deepcopy(GOOD)
    old["schema"] = "snipcheck-verify/1"
    for key in ("total", "fingerprint", "counts", "holds"):
        del old[key]
    for key in ("problems", "missing", "masked", "masked_diff", "env_wide_only"):
        del old["snippets"][0][key]
    del old["stamp"]["rustc"]
    report = tmp_path / "old.json"
    report.write_text(json.dumps(old))
    assert report_file.read(report).snippets[0].status == "drifted"


@pytest.mark.parametrize(("schema", "as_run"), [("snipcheck-verify/1", "new"), ("snipcheck-verify/2", "new"), ("snipcheck-verify/3", None)])
def test_the_outputs_of_a_report_before_3_are_as_they_ran(tmp_path: Path, schema: str, as_run: str | None) -> None:
    # /3 writes what varies from run to run as [..] (snipcheck.report.steady): accepting from it
    # writes its actual output only where no such mask is left; /1 and /2 hold outputs as they ran
    report = tmp_path / "r.json"
    report.write_text(json.dumps(with_value(schema, "schema")))
    read = report_file.read(report).snippets[0]
    assert (read.actual, read.run_actual, read.output) == ("new", as_run, "new")


PAGE = "# T\n\n```{snippet} f/a\nold\n```\n"
CONF = 'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_source_dir = "docs"\nsnipcheck_runner = "subprocess"\n'


@pytest.mark.parametrize("command", [["merge"], ["accept", "--report"], ["review", "--report"]])
def test_merge_accept_and_review_refuse_it_in_one_line_with_status_2_and_write_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "docs" / "index.md").write_text(PAGE)
    report = tmp_path / "x.json"
    report.write_text(json.dumps(without("stamp")))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    out = snipcheck_cli(root, *command, str(report), *(["--force"] if command[0] != "merge" else []), cache=tmp_path / "c")
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == ""
    prefix = "error: cannot merge: " if command == ["merge"] else "error: "
    assert out.stderr == f"{prefix}{report}: not a complete snipcheck verify report: key 'stamp' is missing {WHY}\n"
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_damaged_review_state_file_is_named_with_what_is_wrong(tmp_path: Path) -> None:
    from snipcheck.app.review import Review

    state = tmp_path / "review.json"
    state.write_text(json.dumps({"schema": "snipcheck-review/1", "report": without("shard"), "decisions": {}}))
    with pytest.raises(ValueError, match="^") as caught:
        Review.load(state)
    assert str(caught.value) == (
        f"{state} (the report under review): not a complete snipcheck verify report: key 'shard' is missing {WHY}; "
        f"remove {state} to start the review afresh"
    )
    state.write_text("{")
    with pytest.raises(ValueError, match="is not a snipcheck review state file .*; remove it to start afresh"):
        Review.load(state)


def test_the_checked_keys_are_the_fields_the_report_is_built_from() -> None:
    # A field added to SnippetReport or Stamp without its check here would
    # make every report that holds it "not part of the format".
    import dataclasses

    from snipcheck.model import Stamp as StampFields

    fields = {f.name for f in dataclasses.fields(SnippetReport)} - set(IN_MEMORY)
    assert set(report_file._SNIPPET) == fields
    assert set(report_file._STAMP) == {f.name for f in dataclasses.fields(StampFields)}
