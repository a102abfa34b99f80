"""Sphinx builds of the small test roots under tests/roots (sphinx.testing).

Each test gets its own copy of its root, result cache and report directory
(see conftest.py).  Warnings are compared as whole texts: location, message
and ``[snipcheck.<subtype>]``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import block_kinds, directive_line, environment_label, html, plain, snipcheck_warnings
from load import Inbox
from snipcheck.model import Stamp
from snipcheck.settings import VALUES, Settings


def build_html(app) -> Path:
    app.build()
    return Path(app.outdir) / "index.html"


def snippet_div(page: Path, snippet_id: str):
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    assert div is not None, f"no rendered snippet {snippet_id}"
    return div


def output_blocks(page: Path, snippet_id: str) -> list[tuple[list[str], str]]:
    """(classes, text) of each output block of a snippet, in page order."""
    panel = snippet_div(page, snippet_id).find(class_="snipcheck-output")
    return [
        (block_kinds(div["class"]), div.find("pre").get_text())
        for div in panel.find_all("div", class_="output", recursive=False)
    ]


# --- drift -------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="drift")
def test_drift_is_a_warning_at_the_directive_with_a_unified_diff(app) -> None:
    page = build_html(app)
    index = Path(app.srcdir) / "index.md"
    line = directive_line(index, "drift/hello")
    report = Path(app.config.snipcheck_report_dir)
    assert snipcheck_warnings(app.warning.getvalue()) == [
        f"{index}:{line}: WARNING: snippet 'drift/hello': the stated output differs from the actual output:\n"
        f"--- stated (index.md:{line})\n"
        f"+++ actual ({environment_label()})\n"
        "@@ -1 +1 @@\n"
        "-hello worle\n"
        "+hello world\n"
        f"full diff: {report / 'diffs' / 'drift__hello.diff'}\n"
        "if the new output is right, record it: snipcheck record drift/hello [snipcheck.drift]"
    ]
    assert (report / "diffs" / "drift__hello.diff").read_text(encoding="utf-8").splitlines()[-2:] == [
        "-hello worle",
        "+hello world",
    ]
    # The page shows the real output and the problem, never the stale claim as if true.
    assert output_blocks(page, "drift/hello") == [(["snipcheck-stdout"], "hello world\n")]
    assert snippet_div(page, "drift/hello").find(class_="snipcheck-diff") is not None
    assert snippet_div(page, "drift/fine").find(class_="snipcheck-diff") is None


@pytest.mark.sphinx("html", testroot="drift", warningiserror=True)
def test_drift_fails_a_build_with_warnings_as_errors(app) -> None:
    app.build()
    assert app.statuscode == 1
    assert "[snipcheck.drift]" in plain(app.warning.getvalue())


def test_drift_fails_sphinx_build_W(tmp_path: Path, rootdir: Path, cache_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    args = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
        "-D", f"snipcheck_cache_dir={cache_dir}", "-D", f"snipcheck_report_dir={tmp_path / 'report'}",
        "-d", str(tmp_path / "doctrees"), str(rootdir / "test-drift"), str(tmp_path / "html"),
    ]  # fmt: skip
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    assert "WARNING: snippet 'drift/hello': the stated output differs from the actual output:" in done.stderr
    assert "[snipcheck.drift]" in done.stderr
    assert sorted(p.name for p in (rootdir / "test-drift").iterdir()) == ["conf.py", "index.md", "snippets"]


@pytest.mark.sphinx("html", testroot="drift", confoverrides={"suppress_warnings": ["snipcheck.drift"]})
def test_suppress_warnings_silences_drift(app) -> None:
    page = build_html(app)
    assert snipcheck_warnings(app.warning.getvalue()) == []
    # Silenced, not gone: the page still shows the difference.
    assert snippet_div(page, "drift/hello").find(class_="snipcheck-diff") is not None


# --- outcomes ------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="outcomes")
def test_expected_exception_not_raised_is_drift_and_unexpected_one_is_exec(app) -> None:
    page = build_html(app)
    index = Path(app.srcdir) / "index.md"
    warnings = snipcheck_warnings(app.warning.getvalue())
    assert len(warnings) == 2
    no_raise, raises = warnings
    assert no_raise == (
        f"{index}:{directive_line(index, 'outcome/no-raise')}: WARNING: snippet 'outcome/no-raise': "
        "expected the snippet to end with RuntimeError, but it exited normally (status 0) [snipcheck.drift]"
    )
    assert raises.startswith(
        f"{index}:{directive_line(index, 'outcome/raises')}: WARNING: snippet 'outcome/raises': "
        "the snippet raised ValueError: boom, but its tags expect a normal exit; fix the code, or if this "
        'is what the page means to show, add expect = "ValueError" to its tag block;'
    )
    assert raises.endswith("[snipcheck.exec]")
    # The traceback is on the page, as a terminal shows it.
    ((classes, text),) = output_blocks(page, "outcome/raises")
    assert classes == ["snipcheck-stderr", "snipcheck-traceback"]
    assert text.endswith('  File "snippets/outcome/raises.py", line 1, in <module>\n    raise ValueError("boom")\nValueError: boom\n')


# --- timeout -------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="timeout")
def test_timeout_warns_keeps_printed_output_and_the_page_builds(app) -> None:
    page = build_html(app)
    index = Path(app.srcdir) / "index.md"
    (warning,) = snipcheck_warnings(app.warning.getvalue())
    assert re.fullmatch(
        rf"{re.escape(str(index))}:{directive_line(index, 'slow/sleep')}: WARNING: snippet 'slow/sleep': "
        r"timed out after \d+\.\d s of wall-clock time, the cap of a run that waits \(10 times its timeout, "
        r"which counts CPU seconds\), and was killed with its processes; it spent that time waiting \(a sleep, "
        r"I/O, a lock, a process it started\), not computing; the output printed until then is shown; if the "
        r"wait is meant, raise 'timeout' in its tag block \(or snipcheck_timeout\): the cap grows with it "
        r"\[snipcheck\.timeout\]",
        warning,
    )
    assert output_blocks(page, "slow/sleep") == [(["snipcheck-stdout"], "started\n")]
    assert snippet_div(page, "slow/sleep").find(class_="snipcheck-killed") is not None
    assert output_blocks(page, "slow/after") == [(["snipcheck-stdout"], "after the slow one\n")]


# --- requirements ----------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="requires")
def test_unmet_requirement_is_not_run_and_labelled(app, stamp: Stamp, tmp_path: Path) -> None:
    if stamp.cuda:
        pytest.skip("this machine has CUDA: the requirement is met")
    marker = tmp_path / "gpu-snippet-ran"
    snippet = Path(app.srcdir) / "snippets" / "gpu" / "memory.py"
    snippet.write_text(snippet.read_text().replace("MARKER = None", f"MARKER = {str(marker)!r}"))
    page = build_html(app)

    assert not marker.exists()
    assert snipcheck_warnings(app.warning.getvalue()) == []
    div = snippet_div(page, "gpu/memory")
    badges = [b.get_text() for b in div.find(class_="snipcheck-badges").find_all(class_="sd-badge")]
    assert badges == ["needs cuda", "not run in this build"]
    panel = div.find(class_="snipcheck-unverified")
    assert "not verified by this build" in panel.find(class_="snipcheck-unverified-label").get_text()
    assert panel.find("pre").get_text() == "peak memory: 4096 bytes\n"
    assert "torch 2.13.0+cu128 · Python 3.11.7 · CUDA (NVIDIA H200)" in panel.find(class_="snipcheck-stated-env").get_text()
    assert output_blocks(page, "gpu/cpu-part") == [(["snipcheck-stdout"], "runs on any machine\n")]
    # Control: run by hand, the snippet does leave the marker.
    subprocess.run([sys.executable, str(snippet)], check=True, capture_output=True)
    assert marker.exists()


GIZMO_PAGE = "\n\n```{snippet} gpu/gizmo\nstated on a machine with a gizmo\n```\n"


@pytest.mark.sphinx("html", testroot="requires")
@pytest.mark.parametrize(
    ("conf", "ran"),
    [
        pytest.param({}, None, id="unknown"),
        pytest.param({"snipcheck_requirements": ["gizmo"]}, False, id="declared"),
        pytest.param({"snipcheck_requirements": ["gizmo"], "snipcheck_provides": ["gizmo"]}, True, id="provided"),
    ],
)
def test_a_project_declares_its_own_requirement_names(make_app, app_params, conf: dict, ran: bool | None) -> None:
    args, kwargs = app_params
    app = make_app(*args, **{**kwargs, "confoverrides": {**kwargs["confoverrides"], **conf}})
    src = Path(app.srcdir)
    (src / "snippets" / "gpu" / "gizmo.py").write_text(
        'print("stated on a machine with a gizmo")\n\n# /// snipcheck\n# requires = ["gizmo"]\n# ///\n'
    )
    with open(src / "index.md", "a") as page:
        page.write(GIZMO_PAGE)
    page = build_html(app)
    warnings = [w for w in snipcheck_warnings(app.warning.getvalue()) if "gizmo" in w]
    if ran is None:  # no name is built in beyond cuda, cargo and torch versions: not even the chapter's burn
        assert len(warnings) == 1 and warnings[0].endswith(
            "snippet 'gpu/gizmo' (snippets/gpu/gizmo.py): unknown requirement 'gizmo'; known: cargo, cuda, "
            "or a torch version specifier such as 'torch>=2.14'; a feature of your own that this build lacks goes "
            "in snipcheck_requirements in conf.py (and in snipcheck_provides where it is present) [snipcheck.tag]"
        ), warnings
        return
    assert warnings == []
    div = snippet_div(page, "gpu/gizmo")
    if ran:
        assert output_blocks(page, "gpu/gizmo") == [(["snipcheck-stdout"], "stated on a machine with a gizmo\n")]
    else:
        badges = [b.get_text() for b in div.find(class_="snipcheck-badges").find_all(class_="sd-badge")]
        assert badges == ["needs gizmo", "not run in this build"]


@pytest.mark.sphinx("html", testroot="requires")
def test_the_summary_says_what_an_unmet_requirement_is_and_why_it_is_unmet(make_app, app_params, stamp: Stamp) -> None:
    # Issue 34: "6 not run here (needs burn, cuda)" left a newcomer to guess what burn is and why
    # this build did not run it; the project says it once, with the name (a dict for snipcheck_requirements).
    args, kwargs = app_params
    why = "a gizmo is a device only the lab machine has (https://example.org/gizmo)"
    overrides = {**kwargs["confoverrides"], "snipcheck_requirements": {"gizmo": why}}
    app = make_app(*args, **{**kwargs, "confoverrides": overrides})
    src = Path(app.srcdir)
    (src / "snippets" / "gpu" / "gizmo.py").write_text('print("stated on a machine with a gizmo")\n\n# /// snipcheck\n# requires = ["gizmo"]\n# ///\n')
    with open(src / "index.md", "a") as page:
        page.write(GIZMO_PAGE)
    build_html(app)
    status = app.status.getvalue()
    cuda = "needs cuda (1 snippet): the snippet interpreter's torch sees no CUDA device on this machine (a GPU machine runs them: snipcheck execute --provides cuda); "
    assert f"snipcheck: not run here: {'' if stamp.cuda else cuda}needs gizmo (1 snippet): {why}\n" in status, status
    assert snipcheck_warnings(app.warning.getvalue()) == []


# --- broken placements -------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="broken")
def test_missing_file_and_bad_tag_block_warn_with_file_and_line(app) -> None:
    page = build_html(app)
    index = Path(app.srcdir) / "index.md"
    missing, tag = snipcheck_warnings(app.warning.getvalue())
    assert missing.startswith(
        f"{index}:{directive_line(index, 'broken/nowhere')}: WARNING: snippet 'broken/nowhere' not found: "
        "no file snippets/broken/nowhere.py or snippets/broken/nowhere.rs, and no snippet-code block "
    )
    assert missing.endswith("[snipcheck.missing]")
    assert tag == (
        f"{index}:{directive_line(index, 'broken/bad-tags')}: WARNING: snippet 'broken/bad-tags': unknown tag 'colour'; known tags are: "
        "depends, env, expect, memory, output-limit, refutes, requires, seed, timeout (snippets/broken/bad-tags.py:3) [snipcheck.tag]"
    )
    assert output_blocks(page, "broken/good") == [(["snipcheck-stdout"], "still rendered\n")]


def test_hints_name_the_snipcheck_command_line_not_this_repository(tmp_path: Path) -> None:
    # adoption.md #4: an outside project has no nox sessions of ours
    from snipcheck.app.cli import _parser
    from snipcheck.sources.snippets import SnippetError, load

    (tmp_path / "snippets").mkdir()
    with pytest.raises(SnippetError) as info:
        load("a/b", tmp_path / "snippets", tmp_path)
    assert "nox" not in info.value.message
    commands = re.findall(r"snipcheck (\w+) ", info.value.message)
    assert commands == ["new"]
    assert set(commands) <= set(_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


# --- what the page shows ---------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="output")
def test_captured_output_is_html_escaped(app) -> None:
    page = build_html(app)
    raw = page.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in raw
    assert "<b>bold</b>" not in raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in raw
    assert output_blocks(page, "out/markup") == [(["snipcheck-stdout"], "<script>alert(1)</script> & <b>bold</b>\n")]
    assert snipcheck_warnings(app.warning.getvalue()) == []


@pytest.mark.parametrize(
    "runner",
    [
        pytest.param("fork", marks=pytest.mark.sphinx("html", testroot="output")),
        pytest.param(
            "subprocess",
            marks=pytest.mark.sphinx("html", testroot="output", confoverrides={"snipcheck_runner": "subprocess"}),
        ),
    ],
)
def test_stdout_stderr_and_warnings_are_separate_labelled_blocks_in_order(app, runner: str) -> None:
    assert app.config.snipcheck_runner == runner
    page = build_html(app)
    assert output_blocks(page, "out/streams") == [
        (["snipcheck-stdout"], "to stdout\n"),
        (["snipcheck-stderr"], "to stderr\n"),
        (["snipcheck-stderr", "snipcheck-warning"], 'snippets/out/streams.py:5: UserWarning: careful\n  warnings.warn("careful")\n'),
        (["snipcheck-stdout"], "back to stdout\n"),
    ]
    # The page marks the blocks that may wrap on a phone: plain stdout prose, never stderr (issue 34)
    panel = snippet_div(page, "out/streams").find(class_="snipcheck-output")
    marked = ["snipcheck-wraps" in div["class"] for div in panel.find_all("div", class_="output", recursive=False)]
    assert marked == [True, False, False, True]
    # The stated output (all streams in terminal order) matches: no drift.
    assert snipcheck_warnings(app.warning.getvalue()) == []


# --- incremental builds and the cache -------------------------------------------------------


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    with Inbox() as box:
        yield box


def with_counter(app, inbox: Inbox) -> Inbox:
    """Make basic/hello send a line to ``inbox`` each time it runs (the file system is read-only to it)."""
    snippet = Path(app.srcdir) / "snippets" / "basic" / "hello.py"
    snippet.write_text(snippet.read_text().replace("COUNTER = None", f"COUNTER = {inbox.path!r}"))
    return inbox


def runs(counter: Inbox) -> int:
    return len(counter.lines())


def summary_line(app) -> str:
    (line,) = [x for x in plain(app.status.getvalue()).splitlines() if re.match(r"snipcheck: \d+ snippets", x)]
    return line


def rebuild(app, make_app, app_params, **changes):
    app.cleanup()
    args, kwargs = app_params
    again = make_app(*args, **{**kwargs, **changes})
    again.build()
    return again


@pytest.mark.sphinx("html", testroot="basic")
def test_first_build_runs_each_snippet_once(app, inbox: Inbox) -> None:
    counter = with_counter(app, inbox)
    build_html(app)
    assert runs(counter) == 1
    assert summary_line(app) == (
        "snipcheck: 2 snippets on 1 page: 2 match their stated output; this build ran 2, took 0 from the cache; "
        "of its runs 2 gave the stated output, 0 a new one"
    )
    assert snipcheck_warnings(app.warning.getvalue()) == []


@pytest.mark.sphinx("html", testroot="basic")
def test_rebuild_with_nothing_changed_runs_no_snippet(app, make_app, app_params, inbox: Inbox) -> None:
    counter = with_counter(app, inbox)
    app.build()
    second = rebuild(app, make_app, app_params)
    assert runs(counter) == 1
    assert snipcheck_warnings(second.warning.getvalue()) == []


@pytest.mark.sphinx("html", testroot="basic")
def test_rebuild_summary_does_not_claim_runs_it_did_not_do(app, make_app, app_params) -> None:
    app.build()
    second = rebuild(app, make_app, app_params)
    claimed = re.search(r"this build ran (\d+), took (\d+) from the cache", summary_line(second))
    assert claimed is None or claimed.groups() == ("0", "0"), summary_line(second)


@pytest.mark.sphinx("html", testroot="basic")
def test_fresh_environment_reuses_cached_results(app, make_app, app_params, inbox: Inbox) -> None:
    counter = with_counter(app, inbox)
    app.build()
    second = rebuild(app, make_app, app_params, freshenv=True)
    assert runs(counter) == 1
    assert summary_line(second) == "snipcheck: 2 snippets on 1 page: 2 match their stated output; this build ran 0, took 2 from the cache"


@pytest.mark.sphinx("html", testroot="basic")
def test_editing_a_snippet_file_rereads_its_page(app, make_app, app_params, inbox: Inbox) -> None:
    counter = with_counter(app, inbox)
    app.build()
    snippet = Path(app.srcdir) / "snippets" / "basic" / "hello.py"
    snippet.write_text(snippet.read_text().replace('print("hello")', 'print("hello again")'))
    second = rebuild(app, make_app, app_params)
    assert runs(counter) == 2
    page = Path(second.outdir) / "index.html"
    assert output_blocks(page, "basic/hello") == [(["snipcheck-stdout"], "hello again\n")]
    (warning,) = snipcheck_warnings(second.warning.getvalue())
    assert warning.endswith("[snipcheck.drift]")
    assert "-hello\n+hello again\n" in warning
    assert summary_line(second) == (
        "snipcheck: 2 snippets on 1 page: 1 match their stated output, 1 drift; this build ran 1, took 1 from the cache; "
        "of its runs 0 gave the stated output, 1 a new one"
    )


# --- configuration ---------------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="config")
def test_invalid_config_value_warns_and_the_default_is_used(app) -> None:
    page = build_html(app)
    default = VALUES["snipcheck_timeout"].default
    conf_py = Path(app.confdir) / "conf.py"
    assert snipcheck_warnings(app.warning.getvalue()) == [
        f"WARNING: {conf_py}: invalid snipcheck_timeout = -1: must be positive; using the default {default!r} "
        "[snipcheck.config]"
    ]
    # the command line reads the same conf.py and says the same words
    _, messages = Settings.from_conf(Path(app.confdir))
    assert messages == [f"invalid snipcheck_timeout = -1: must be positive; using the default {default!r}"]
    assert app.config.snipcheck_timeout == default
    # With a timeout of -1 s every run would be killed at once; it ran normally.
    assert output_blocks(page, "cfg/hello") == [(["snipcheck-stdout"], "hello\n")]


# --- other languages ----------------------------------------------------------------------------


@pytest.mark.sphinx("html", testroot="rust")
def test_a_rust_snippet_does_not_crash_the_build(app) -> None:
    # snipcheck.sources.snippets loads .rs files as language "rust"; whatever this
    # build can do with them (run, or warn that it cannot), the build must go on.
    page = build_html(app)
    assert output_blocks(page, "rs/python") == [(["snipcheck-stdout"], "python still works\n")]
    index = Path(app.srcdir) / "index.md"
    rust_warnings = [w for w in snipcheck_warnings(app.warning.getvalue()) if "rs/hello" in w]
    shown = snippet_div(page, "rs/hello").get_text()
    assert "hello from rust" in shown or rust_warnings
    for warning in rust_warnings:
        assert warning.startswith(f"{index}:{directive_line(index, 'rs/hello')}: WARNING: ")
