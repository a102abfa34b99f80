"""Outputs compared as bytes where they were bytes (issue 33 §5).

A snippet that writes the raw bytes FF FE and one that prints the text
``\\xff\\xfe`` matched the same stated output, and ``record`` wrote the
escape text for both.  Invalid UTF-8 now reads ``\\x{ff}`` and no printed
text reads the same (:mod:`snipcheck.rawbytes`): each stated form drifts
against the other output, ``record`` writes each one's own, which reads back
through MyST and reStructuredText and matches, and the page shows them apart.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from chain_support import executor
from helpers import html, placements_in, snipcheck_cli, write_project
from hypothesis import given, settings
from hypothesis import strategies as st
from snipcheck.judge.compare import judge
from snipcheck.model import Stamp
from snipcheck.rawbytes import from_bytes, to_bytes
from snipcheck.run import make_runner
from snipcheck.sources.snippets import load
from faults_support import sphinx_build

#: What each snippet writes: the raw bytes, and the text of their escape.
BYTES = 'import sys\nsys.stdout.buffer.write(b"ok \\xff\\xfe end\\n")\n'
TEXT = 'print("ok \\\\xff\\\\xfe end")\n'
#: How each reads, stated.
BYTES_STATED = "ok \\x{ff}\\x{fe} end"
TEXT_STATED = "ok \\xff\\xfe end"


def test_raw_bytes_and_the_text_of_their_escape_read_apart() -> None:
    assert from_bytes(b"ok \xff\xfe end\n") == BYTES_STATED + "\n"
    assert from_bytes(b"ok \\xff\\xfe end\n") == TEXT_STATED + "\n"  # a bytes repr prints as itself
    assert from_bytes(b"\\x{ff}") == "\\\\x{ff}" and from_bytes(b"\\\xff") == "\\\\\\x{ff}"
    assert to_bytes(BYTES_STATED) == b"ok \xff\xfe end" and to_bytes(TEXT_STATED) == b"ok \\xff\\xfe end"


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from([b"\\", b"x", b"{", b"}", b"f", b"F", b"0", b"\xff", b"\xc3", b"\xa9", b"a", b"\n"]), max_size=12)
       .map(b"".join) | st.binary(max_size=24))  # fmt: skip
def test_every_output_reads_as_a_text_of_its_own_that_reads_back_as_it(data: bytes) -> None:
    text = from_bytes(data)
    assert to_bytes(text) == data
    text.encode("utf-8")  # a page can hold it


@pytest.mark.parametrize("kind", ["subprocess", "fork"])
def test_each_stated_form_drifts_against_the_other_output(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    for sid, code in (("b/bytes", BYTES), ("b/text", TEXT)):
        path = tmp_path / "snippets" / f"{sid}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
    try:
        raw, text = (runner.run(load(i, tmp_path / "snippets", tmp_path), timeout=30, output_limit=1 << 20) for i in ("b/bytes", "b/text"))
    finally:
        getattr(runner, "close", lambda: None)()
    snippet = load("b/bytes", tmp_path / "snippets", tmp_path)
    assert judge(snippet.tags, raw, BYTES_STATED, ()).ok and judge(snippet.tags, text, TEXT_STATED, ()).ok
    assert judge(snippet.tags, raw, TEXT_STATED, ()).status == "drift"  # text stated, bytes printed
    assert judge(snippet.tags, text, BYTES_STATED, ()).status == "drift"  # bytes stated, text printed


CONF = 'extensions = ["myst_parser", "snipcheck"]\nexclude_patterns = ["_build"]\nsnipcheck_preload = []\n'


def myst(bytes_stated: str, text_stated: str) -> str:
    return (
        f"# Bytes\n\n```{{snippet}} b/bytes\n{bytes_stated}\n```\n\n"
        f"```{{snippet-code}} b/text\n{TEXT}--- output ---\n{text_stated}\n```\n"
    )


def rst(bytes_stated: str, text_stated: str) -> str:
    cell = "".join(f"   {line}\n" for line in [*TEXT.splitlines(), "--- output ---", text_stated])
    return f"Bytes\n=====\n\n.. snippet:: b/bytes\n\n   {bytes_stated}\n\n.. snippet-code:: b/text\n\n{cell}"


@pytest.mark.parametrize(("page", "write"), [("index.md", myst), ("index.rst", rst)])
def test_the_build_drifts_record_writes_each_its_own_form_and_it_reads_back(
    page: str, write, tmp_path: Path, cache_dir: Path
) -> None:
    crossed = write(TEXT_STATED, BYTES_STATED)  # each stated as the other prints
    root = write_project(tmp_path / "p", CONF, {page: crossed}, {"b/bytes": BYTES})
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    assert built.statuscode == 1
    (raw,) = built.about("b/bytes")
    (text,) = built.about("b/text")
    assert "-ok \\xff\\xfe end" in raw and "+ok \\x{ff}\\x{fe} end" in raw, raw
    assert "-ok \\x{ff}\\x{fe} end" in text and "+ok \\xff\\xfe end" in text, text
    done = snipcheck_cli(root, "record", cache=cache_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / page).read_text() == write(BYTES_STATED, TEXT_STATED)
    assert [p.stated for p in placements_in(root / page)] == [BYTES_STATED, TEXT_STATED]
    built = sphinx_build(root, tmp_path / "build2", cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    shown = html(built.outdir / "index.html")
    assert shown.find(id="snippet-b-bytes").select_one("div.snipcheck-output").get_text().strip().endswith("\n" + BYTES_STATED)
    assert shown.find(id="snippet-b-text").select_one("div.snipcheck-output").get_text().strip().endswith("\n" + TEXT_STATED)


def test_a_result_cached_by_the_runner_before_is_not_used(stamp: Stamp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache held the raw bytes FF FE as the text ``\\xff\\xfe`` (runner
    version 5, which also ended a chain's cells where a frame said): served
    from there, they still matched the printed text's stated output."""
    import snipcheck.engine.cache

    path = tmp_path / "snippets" / "b" / "bytes.py"
    path.parent.mkdir(parents=True)
    path.write_text(BYTES)
    snippet = load("b/bytes", tmp_path / "snippets", tmp_path)
    with monkeypatch.context() as old:
        old.setattr(snipcheck.engine.cache, "RUNNER_VERSION", "5")
        ex = executor(stamp, tmp_path / "cache")
        try:
            (first,) = ex.map([snippet])
        finally:
            ex.close()
    assert first.origin == "run"
    (entry,) = (tmp_path / "cache" / "results").glob("*/*.json")
    data = json.loads(entry.read_text())
    for event in data["result"]["events"]:  # what runner 5 stored for these bytes
        event["text"] = event["text"].replace(BYTES_STATED, TEXT_STATED)
    entry.write_text(json.dumps(data))
    ex = executor(stamp, tmp_path / "cache")
    try:
        (second,) = ex.map([snippet])
    finally:
        ex.close()
    assert second.origin == "run" and second.result is not None
    assert judge(snippet.tags, second.result, BYTES_STATED, ()).ok
    assert judge(snippet.tags, second.result, TEXT_STATED, ()).status == "drift"


def test_an_incremental_build_after_the_runner_changed_runs_its_snippets_again(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page built by runner version 5 (the raw bytes FF FE read, stored and
    recorded as the text ``\\\\xff\\\\xfe``) stayed green in the next build of
    the same build folder: no page had changed, so none was read again and
    no snippet run again."""
    import snipcheck.engine.cache

    root = write_project(tmp_path / "p", CONF, {"index.md": myst(TEXT_STATED, TEXT_STATED)}, {"b/bytes": BYTES})
    with monkeypatch.context() as old:
        old.setattr(snipcheck.engine.cache, "RUNNER_VERSION", "5")
        sphinx_build(root, tmp_path / "build", cache_dir)  # stores b/bytes' result
        for entry in (cache_dir / "results").glob("*/*.json"):  # as runner 5 stored it
            entry.write_text(entry.read_text(encoding="utf-8").replace(json.dumps(BYTES_STATED)[1:-1], json.dumps(TEXT_STATED)[1:-1]), encoding="utf-8")
        built = sphinx_build(root, tmp_path / "build", cache_dir, freshenv=True)
        assert built.statuscode == 0 and built.warnings == [], built.warnings_text  # the build runner 5 left
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    assert built.statuscode == 1
    (raw,) = built.about("b/bytes")
    assert "+ok \\x{ff}\\x{fe} end" in raw, raw
