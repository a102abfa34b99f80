"""No false green: a passing build, verify or merge means every stated output was compared.

Cases of ``cases/false-green.md`` (numbered) that are not in test_placements
(#1), test_verify (#2, the merge checks) or the cache tests (#3, #4).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import environment_label, snipcheck_cli, write_project

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def make(root: Path, page: str, snippets: dict[str, str], conf: str = CONF) -> Path:
    return write_project(root, conf, {"docs/index.md": page}, snippets)


@pytest.fixture
def drifted(tmp_path: Path) -> Path:
    return make(
        tmp_path / "p",
        "# T\n\n```{snippet} f/ok\nfine\n```\n\n```{snippet} f/drift\nstale\n```\n",
        {"f/ok": 'print("fine")\n', "f/drift": 'print("fresh")\n'},
    )


def sphinx(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "sphinx", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.parametrize(
    "args",
    [["-b", "html", "-c", ".", "docs", "_build/html"], ["-M", "html", "docs", "_build", "-c", "."]],
    ids=["sphinx-build", "make-mode"],
)
def test_5_drift_fails_the_build_without_w(drifted: Path, tmp_path: Path, args: list[str]) -> None:
    done = sphinx(drifted, tmp_path / "cache", *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "build finished with problems" in done.stdout
    assert "ERROR: snipcheck: 1 stated output or claim do not hold" in done.stderr
    assert "  index.md:7: f/drift: drift" in done.stderr
    assert "f/ok" not in done.stderr


@pytest.mark.parametrize("strict", [[], ["-W", "--keep-going"]], ids=["plain", "W-keep-going"])
def test_the_warning_count_is_the_warnings_shown(drifted: Path, tmp_path: Path, strict: list[str]) -> None:
    # Issue 34: one drift warning, then the error that names it again for the failed build, and
    # Sphinx said "build finished with problems, 2 warnings": it counts every error as a warning.
    done = sphinx(drifted, tmp_path / "cache", *strict, "-b", "html", "-c", ".", "docs", "_build/html")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.findall(r"^\S*: WARNING: .*$", done.stderr, re.MULTILINE) == [
        f"{drifted / 'docs' / 'index.md'}:7: WARNING: snippet 'f/drift': the stated output differs from the actual output:"
    ]
    assert "ERROR: snipcheck: 1 stated output or claim do not hold" in done.stderr
    said = "build finished with problems, 1 warning" + (" (with warnings treated as errors)." if strict else ".")
    assert said in done.stdout


def test_5_a_project_may_turn_the_failure_off(drifted: Path, tmp_path: Path) -> None:
    done = sphinx(drifted, tmp_path / "cache", "-b", "html", "-c", ".", "-D", "snipcheck_fail_on_drift=0", "docs", "out")
    assert done.returncode == 0, done.stderr
    assert "WARNING: snippet 'f/drift'" in done.stderr and "ERROR" not in done.stderr


def test_5_an_incremental_build_with_nothing_changed_still_fails(drifted: Path, tmp_path: Path) -> None:
    args = ("-b", "html", "-c", ".", "docs", "_build/html")
    assert sphinx(drifted, tmp_path / "cache", *args).returncode == 1
    again = sphinx(drifted, tmp_path / "cache", *args)
    assert again.returncode == 1
    assert "f/drift: drift" in again.stderr


def flood(tmp_path: Path, printed: int, stated: str = "") -> Path:
    """A project whose snippet f/flood prints ``printed`` x's past a 1,024-byte output limit."""
    page = f"# T\n\n```{{snippet}} f/flood\n{stated}```\n"
    return make(tmp_path / "p", page, {"f/flood": f'print("x" * {printed})\n'}, CONF + "snipcheck_output_limit = 1024\n")


def refused(root: Path, cache: Path, message: str) -> None:
    """``record`` exits 1 saying only ``message`` and leaves the page's bytes as they were."""
    before = (root / "docs" / "index.md").read_bytes()
    out = snipcheck_cli(root, "record", cache=cache)
    assert out.returncode == 1
    assert out.stderr.strip() == message
    assert (root / "docs" / "index.md").read_bytes() == before


def test_6_a_run_stopped_for_its_output_is_never_recorded_and_says_so(tmp_path: Path) -> None:
    # Issue 23 item 4: a run whose output passes its limit by 1 MiB more is
    # stopped there; `record` refuses it, saying it was stopped, and `run`
    # says how it ended.
    root = flood(tmp_path, 3_000_000)
    refused(
        root, tmp_path / "cache",
        "docs/index.md:3: f/flood: not recorded: its output passed the output limit of 1,024 bytes by 1,048,576 "
        "more, so the run was stopped there: how much more it would have printed, and how it would have ended, "
        "is unknown; print less, or raise the limit for this snippet in its tag block (output-limit = 4194304 or more)",
    )  # fmt: skip
    run = snipcheck_cli(root, "run", "f/flood", cache=tmp_path / "cache")
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[-2] == "[snipcheck: output limit of 1,024 bytes reached; stopped after 1,048,576 more bytes]"
    assert lines[-1].startswith("── stopped: its output passed the output limit of 1,024 bytes by 1,048,576 (status 1) · ")


@pytest.mark.parametrize("printed", [5000, 3_000_000])
def test_6_verify_never_calls_a_truncated_output_unchanged(tmp_path: Path, printed: int) -> None:
    # Was: a stated output ending with the marker line verified "unchanged",
    # where the build warns snipcheck.truncated (what was cut was not checked).
    from snipcheck.judge.compare import truncation_marker

    stopped = printed > 1024 + (1 << 20)
    dropped = (1 << 20) if stopped else printed + 1 - 1024
    stated = "x" * 1024 + "\n" + truncation_marker(dropped, 1024, stopped)
    root = flood(tmp_path, printed, stated)
    out = snipcheck_cli(root, "verify", "--json", "r.json", cache=tmp_path / "cache")
    assert out.returncode == 1, out.stdout + out.stderr
    (report,) = json.loads((root / "r.json").read_text())["snippets"]
    assert report["status"] == "failing"
    assert report["diff"] == ""  # the stated output is what the run kept: only the limit fails it
    assert report["problems"][-1].startswith("its output " + ("passed" if stopped else "reached"))


def test_6_a_truncated_output_is_never_recorded(tmp_path: Path) -> None:
    root = flood(tmp_path, 5000)
    refused(
        root, tmp_path / "cache",
        "docs/index.md:3: f/flood: not recorded: its output reached the output limit of 1,024 bytes and "
        "3,977 more bytes were not shown or checked; print less, or raise the limit for this snippet with "
        "output-limit = 8192 in its tag block",
    )  # fmt: skip
    # following the advice works: the tag exists, raises the limit for this snippet and re-runs it
    (root / "snippets" / "f" / "flood.py").write_text('print("x" * 5000)\n\n# /// snipcheck\n# output-limit = 8192\n# ///\n')
    out = snipcheck_cli(root, "record", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "1 stated output(s) recorded; 0 unchanged or skipped"
    assert (root / "docs" / "index.md").read_text() == "# T\n\n```{snippet} f/flood\n" + "x" * 5000 + "\n```\n"
    assert snipcheck_cli(root, "verify", cache=tmp_path / "cache").returncode == 0


def test_7_verify_with_nothing_drifted_leaves_its_committed_report_untouched(tmp_path: Path) -> None:
    root = make(
        tmp_path / "p",
        "# T\n\n```{snippet} f/a\na\n```\n\n```{snippet} f/b\nb\n```\n",
        {"f/a": 'print("a")\n', "f/b": 'import time\ntime.sleep(0.05)\nprint("b")\n'},
    )
    report = root / "docs" / "_reports" / "torch.json"
    first = snipcheck_cli(root, "verify", "--json", str(report), cache=tmp_path / "cache-1")
    assert first.returncode == 0, first.stdout + first.stderr
    data = report.read_bytes()
    stat = report.stat()
    assert b'"duration"' not in data and b'"origin"' not in data
    # a fresh cache: every snippet runs again, with other timings
    second = snipcheck_cli(root, "verify", "--json", str(report), cache=tmp_path / "cache-2")
    assert second.returncode == 0, second.stdout + second.stderr
    assert report.read_bytes() == data
    assert report.stat().st_mtime_ns == stat.st_mtime_ns
    assert json.loads(data)["total"] == 2
    assert "env" not in json.loads(data)["stamp"]  # the environment id differs from machine to machine


LOGGING = (
    "import os, time\n"
    "stamp = time.strftime('%m%d %H:%M:%S', time.gmtime()) + f'.{time.time_ns() // 1000 % 1000000:06d}'\n"
    "print(f'W{stamp} {os.getpid()} torch/utils/cpp_extension.py:{183 + os.getpid() % 7}] no CUDA runtime')\n"
    "print('TAIL')\n"
)


def test_7_a_drifted_output_that_differs_only_in_masked_text_leaves_the_report_untouched(tmp_path: Path) -> None:
    # torch logs with the time and its process id (torch 2.14.1 on a CPU does, at torch.compile):
    # a report that drifts the same way twice keeps the text it has
    root = make(
        tmp_path / "p",
        "# T\n\n```{snippet} f/log\nstale\n```\n\n```{snippet} f/a\na\n```\n",
        {"f/log": LOGGING.replace("TAIL", "x"), "f/a": 'print("a")\n'},
    )
    (root / "conf.py").write_text(CONF + "snipcheck_fork_min_runs = 0\n")
    report = root / "docs" / "_reports" / "torch.json"
    first = snipcheck_cli(root, "verify", "--json", str(report), cache=tmp_path / "cache-1")
    assert first.returncode == 1, first.stdout + first.stderr
    data = report.read_bytes()
    assert json.loads(data)["counts"]["drifted"] == 1
    for n in (2, 3):
        again = snipcheck_cli(root, "verify", "--json", str(report), cache=tmp_path / f"cache-{n}")
        assert again.returncode == 1
        assert report.read_bytes() == data
    # a real change is still written
    (root / "snippets" / "f" / "log.py").write_text(LOGGING.replace("TAIL", "y"))
    changed = snipcheck_cli(root, "verify", "--json", str(report), cache=tmp_path / "cache-4")
    assert changed.returncode == 1
    assert report.read_bytes() != data
    assert '"actual": "W' in report.read_text() and "\\ny\"" in report.read_text()


@pytest.mark.parametrize("runner", ["subprocess", "fork"])
def test_8_the_run_directory_has_a_stable_name_so_record_blames_nobody(tmp_path: Path, runner: str) -> None:
    code = (
        "import os, pathlib, tempfile\n"
        "print(os.getcwd())\n"
        "print(pathlib.Path.cwd() / 'out.csv')\n"
        "print(os.path.expanduser('~'), tempfile.gettempdir())\n"
    )
    root = make(tmp_path / "p", "# T\n\n```{snippet} f/cwd\n```\n", {"f/cwd": code})
    (root / "conf.py").write_text(CONF.replace('"subprocess"', repr(runner)) + "snipcheck_fork_min_runs = 0\n")
    out = snipcheck_cli(root, "record", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "deterministic" not in out.stdout + out.stderr
    page = (root / "docs" / "index.md").read_text()
    assert page == "# T\n\n```{snippet} f/cwd\n[CWD]\nout.csv\nhome tmp\n```\n"
    build = sphinx(root, tmp_path / "cache-2", "-b", "html", "-c", ".", "docs", "_build/html")
    assert build.returncode == 0, build.stderr


def test_9_every_output_panel_and_the_box_name_the_environment_of_the_run(tmp_path: Path) -> None:
    from bs4 import BeautifulSoup

    page = "# T\n\n```{snipcheck-environment}\n```\n\n```{snippet} f/a\na\n```\n"
    root = make(tmp_path / "p", page, {"f/a": 'print("a")\n'})
    named = environment_label()
    stamps = []
    for _ in range(2):  # a run, then the same result from the cache
        out = sphinx(root, tmp_path / "cache", "-b", "html", "-c", ".", "-E", "docs", "_build/html")
        assert out.returncode == 0, out.stderr
        soup = BeautifulSoup((root / "_build" / "html" / "index.html").read_text(), "html.parser")
        stamps.append(" ".join(soup.find(class_="snipcheck-stamp").get_text().split()))
        box = " ".join(soup.find(class_="snipcheck-environment").get_text().split())
        assert f"ran during the build, their output captured as it was, in: {named}" in box
    ran, cached = stamps
    assert re.fullmatch(re.escape(named) + r" · \d+\.\d\d s · snippets/f/a\.py", ran), ran
    assert re.fullmatch(re.escape(named) + r" · \d+\.\d\d s · result from the cache · snippets/f/a\.py", cached), cached


def test_9_a_chain_of_cells_in_the_page_names_its_environment_once_and_the_page_not_a_file(tmp_path: Path) -> None:
    # Issue 24 §2: every cell of a chain carried the whole environment, and a
    # cell written in the page named "c/one.py", a file no reader can open.
    from bs4 import BeautifulSoup

    cells = "".join(f"```{{snippet-code}} c/{n}\nprint({n!r})\n```\n\n```{{snippet}} c/{n}\n{n}\n```\n\n" for n in ("one", "two"))
    page = f"# T\n\n```{{snippet}} f/a\na\n```\n\n```{{snippet-chain}} c\n```\n\n{cells}"
    root = make(tmp_path / "p", page, {"f/a": 'print("a")\n'})
    out = sphinx(root, tmp_path / "cache", "-b", "html", "-c", ".", "docs", "_build/html")
    assert out.returncode == 0, out.stderr
    soup = BeautifulSoup((root / "_build" / "html" / "index.html").read_text(), "html.parser")
    alone, one, two = (" ".join(p.get_text().split()) for p in soup.select(".snipcheck-stamp"))
    lines = [n for n, text in enumerate((root / "docs" / "index.md").read_text().splitlines(), 1) if text.startswith("```{snippet} c/")]
    assert re.fullmatch(re.escape(environment_label()) + rf" · \d+\.\d\d s · index\.md:{lines[0]}", one), one
    assert re.fullmatch(rf"\d+\.\d\d s · index\.md:{lines[1]}", two), two  # the process the first stamp names
    assert re.fullmatch(re.escape(environment_label()) + r" · \d+\.\d\d s · snippets/f/a\.py", alone), alone


def test_1_record_without_a_source_folder_fails_and_says_where_it_looked(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "conf.py").write_text(CONF)
    out = snipcheck_cli(root, "record", cache=tmp_path / "cache")
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"error: the source directory {root / 'docs'} does not exist; give the pages' folder with --source-dir"
    )


@pytest.mark.parametrize(
    ("layout", "build_dir"),
    [("plain", "_build"), ("separate", "build")],
    ids=["conf-beside-pages", "sphinx-quickstart-sep"],
)
def test_cache_and_reports_go_where_make_clean_removes_them(tmp_path: Path, layout: str, build_dir: str) -> None:
    # adoption.md #7: with --sep, the cache and report landed inside source/ and survived `make clean`
    top = tmp_path / "project"
    src = top / "source" if layout == "separate" else top
    src.mkdir(parents=True)
    (top / "Makefile").write_text(f"SPHINXBUILD   ?= sphinx-build\nSOURCEDIR     = {'source' if layout == 'separate' else '.'}\nBUILDDIR      = {build_dir}\n")
    (src / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_runner = "subprocess"\nsnipcheck_preload = []\n')
    (src / "index.md").write_text("# T\n\n```{snippet} f/a\nstale\n```\n")
    (src / "snippets" / "f").mkdir(parents=True)
    (src / "snippets" / "f" / "a.py").write_text('print("fresh")\n')
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", "html", str(src), str(top / build_dir)],
        cwd=top, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    doctrees = top / build_dir / "doctrees"
    assert (doctrees / "snipcheck-cache" / "results").is_dir()
    assert (doctrees / "snipcheck-report" / "diffs" / "f__a.diff").is_file()
    assert re.search(r"full diff: \S*snipcheck-report/diffs/f__a\.diff\n", done.stderr), done.stderr
    # the command line finds the same cache: record reuses the build's run
    out = subprocess.run(
        [sys.executable, "-m", "snipcheck", "-c", str(src), "record"], cwd=top, env=env,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    made = {p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file()}
    assert {p for p in made if not p.startswith(build_dir + "/")} == {
        f"{'source/' if layout == 'separate' else ''}{name}" for name in ("conf.py", "index.md", "snippets/f/a.py")
    } | {"Makefile"}
