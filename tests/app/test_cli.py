"""The command line: ``python -m snipcheck --root <project> record``.

Each test runs the real command in a subprocess on a small project in a
temporary directory, with its own result cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import snipcheck as snipcheck_package
from conftest import fresh_cache
from helpers import placements_in, snipcheck_cli

CONF = """\
extensions = ["myst_nb", "snipcheck"]
nb_execution_mode = "off"
snipcheck_source_dir = "docs"
snipcheck_cache_dir = {cache!r}
snipcheck_runner = "subprocess"  # these snippets do not use torch: start fast
"""


@pytest.fixture
def project(tmp_path: Path, probe_cache: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "snippets" / "rec").mkdir(parents=True)
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    (root / "conf.py").write_text(CONF.format(cache=str(cache)), encoding="utf-8")
    return root


def snipcheck(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return snipcheck_cli(project, *args)


def printed(project: Path, snippet: str) -> str:
    """What ``python snippets/<id>.py`` prints, as a stated output (no final newline)."""
    done = subprocess.run(
        [sys.executable, f"snippets/{snippet}.py"], cwd=project, capture_output=True, text=True, check=True
    )
    return done.stdout.removesuffix("\n")


def test_record_fills_an_empty_stated_output_from_a_real_run(project: Path) -> None:
    (project / "snippets" / "rec" / "hello.py").write_text(
        'print("hello from a real run")\nprint("  spaces kept  ")\nprint(6 * 7)\n', encoding="utf-8"
    )
    index = project / "docs" / "index.md"
    index.write_text("# Record\n\nProse.\n\n```{snippet} rec/hello\n```\n\nMore prose.\n", encoding="utf-8")

    first = snipcheck(project, "record")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "docs/index.md:5: rec/hello: recorded",
        "1 stated output(s) recorded; 0 unchanged or skipped",
    ]
    (placement,) = placements_in(index)
    assert placement.stated == printed(project, "rec/hello")
    text = index.read_text(encoding="utf-8")
    assert text.startswith("# Record\n\nProse.\n\n```{snippet} rec/hello\n")
    assert text.endswith("\n```\n\nMore prose.\n")

    second = snipcheck(project, "record")
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == ["0 stated output(s) recorded; 1 unchanged or skipped"]
    assert index.read_text(encoding="utf-8") == text


def test_record_rewrites_a_drifted_output_named_by_id_and_leaves_others(project: Path) -> None:
    (project / "snippets" / "rec" / "a.py").write_text('print("a is right")\n', encoding="utf-8")
    (project / "snippets" / "rec" / "b.py").write_text('print("b is right")\n', encoding="utf-8")
    index = project / "docs" / "index.md"
    index.write_text(
        "```{snippet} rec/a\na is wrong\n```\n\n```{snippet} rec/b\nb is wrong\n```\n", encoding="utf-8"
    )
    done = snipcheck(project, "record", "rec/b")
    assert done.returncode == 0, done.stderr
    assert [p.stated for p in placements_in(index)] == ["a is wrong", printed(project, "rec/b")]


def test_unexpected_exception_is_not_recorded_and_fails(project: Path) -> None:
    (project / "snippets" / "rec" / "raises.py").write_text('print("partial")\nraise ValueError("boom")\n', encoding="utf-8")
    (project / "snippets" / "rec" / "fine.py").write_text('print("fine")\n', encoding="utf-8")
    index = project / "docs" / "index.md"
    index.write_text("```{snippet} rec/raises\n```\n\n```{snippet} rec/fine\n```\n", encoding="utf-8")

    done = snipcheck(project, "record")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        "docs/index.md:1: rec/raises: not recorded: the snippet raised ValueError: boom, but its tags "
        "expect a normal exit; fix the code, or if this is what the page means to show, add "
        'expect = "ValueError" to its tag block'
    )  # and not "record it from a real run": this is record, refusing to
    # The failing one stays empty; the good one is still recorded.
    assert [p.stated for p in placements_in(index)] == ["", "fine"]


def test_expected_exception_is_recorded_with_its_traceback(project: Path) -> None:
    (project / "snippets" / "rec" / "expected.py").write_text(
        '# /// snipcheck\n# expect = "ValueError"\n# ///\nraise ValueError("boom")\n', encoding="utf-8"
    )
    index = project / "docs" / "index.md"
    index.write_text("```{snippet} rec/expected\n```\n", encoding="utf-8")
    done = snipcheck(project, "record")
    assert done.returncode == 0, done.stderr
    (placement,) = placements_in(index)
    assert placement.stated == (
        "Traceback (most recent call last):\n"
        '  File "snippets/rec/expected.py", line 4, in <module>\n'
        '    raise ValueError("boom")\n'
        "ValueError: boom"
    )


def test_unmet_requirement_is_left_as_is(project: Path) -> None:
    marker = project.parent / "ran.txt"
    (project / "snippets" / "rec" / "gpu.py").write_text(
        f'# /// snipcheck\n# requires = ["torch>=99"]\n# ///\nopen({str(marker)!r}, "w").write("ran")\n',
        encoding="utf-8",
    )
    index = project / "docs" / "index.md"
    index.write_text("```{snippet} rec/gpu\nstated on a machine that had it\n```\n", encoding="utf-8")
    before = index.read_bytes()
    done = snipcheck(project, "record")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "docs/index.md:1: rec/gpu: not run here (lacks torch>=99); left as is"
    assert index.read_bytes() == before
    assert not marker.exists()


def test_record_of_an_id_that_is_not_placed_fails(project: Path) -> None:
    (project / "snippets" / "rec" / "there.py").write_text('print("there")\n', encoding="utf-8")
    (project / "docs" / "index.md").write_text("# One placed\n\n```{snippet} rec/there\n```\n", encoding="utf-8")
    done = snipcheck(project, "record", "rec/nowhere")
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: snippet 'rec/nowhere' is not placed in any page under {project / 'docs'}"


@pytest.mark.parametrize("command", [["record"], ["verify"], ["record", "rec/nowhere"]])
def test_no_placement_at_all_fails_and_says_where_it_looked(project: Path, command: list[str]) -> None:
    # false-green.md #1: "0 stated output(s) recorded", exit 0, on a folder with no page placing anything
    (project / "docs" / "index.md").write_text("# Nothing placed\n", encoding="utf-8")
    done = snipcheck(project, *command)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: no snippet placed in {project / 'docs'}: Sphinx read 1 document(s) there with "
        f"{project / 'conf.py'} and found no snippet directive; give the pages' folder with --source-dir, "
        "or set snipcheck_source_dir in conf.py"
    )


def test_a_project_whose_only_script_block_placed_nothing_says_so(project: Path) -> None:
    # Found by a fresh user's try: after the error that gives the body to
    # write, the last line sent them after another cause ("found no snippet
    # directive; give the pages' folder with --source-dir").
    (project / "snippets" / "rec" / "demo.py").write_text("# %%\nprint(1)\n", encoding="utf-8")
    (project / "docs" / "index.md").write_text("# Script\n\n```{snippet-script} rec/demo\n```\n", encoding="utf-8")
    done = snipcheck(project, "record")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: no snippet placed in {project / 'docs'}: 1 snippet-script block(s) there placed none of their "
        "cells (see above); fix them, then run this again"
    )
    assert "```{snippet} rec/demo/1" in done.stderr


def record_refused(project: Path, snippet_id: str, code: str) -> subprocess.CompletedProcess[str]:
    """``record`` of a page placing only ``snippet_id`` (its code ``code``): it
    exits 1 and leaves the page as it was; returns what it printed."""
    (project / "snippets" / f"{snippet_id}.py").write_text(code, encoding="utf-8")
    page = project / "docs" / "index.md"
    page.write_text(f"# P\n\n```{{snippet}} {snippet_id}\n```\n", encoding="utf-8")
    before = page.read_bytes()
    out = snipcheck(project, "record")
    assert out.returncode == 1
    assert page.read_bytes() == before
    return out


def test_record_refuses_an_output_that_changes_from_run_to_run(project: Path) -> None:
    out = record_refused(project, "rec/clock", "import time\nprint('now:', time.time_ns())\n")
    assert "rec/clock: not recorded: its output differs between two runs of the same code" in out.stderr
    assert "-now: " in out.stderr and "+now: " in out.stderr


FRUIT = 'print({"apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"})\nprint("end")\n'


def test_record_refuses_an_output_that_depends_on_the_hash_seed(project: Path) -> None:
    # issue 23 item 3: every run has one hash secret, so a set of strings prints in one
    # order on every run; plain python varies it, and record must not accept it.
    out = record_refused(project, "rec/fruit", FRUIT)
    assert "docs/index.md:3: rec/fruit: not recorded: its output depends on the hash seed" in out.stderr
    assert "sorted(...)" in out.stderr and "wildcard" in out.stderr and "PYTHONHASHSEED=4005" in out.stderr
    assert "+{'" in out.stderr and "-{'" in out.stderr  # the diff shows the two orders
    assert "differs between two runs" not in out.stderr
    page = project / "docs" / "index.md"
    # what the message says to do works: state the varying part with a wildcard
    page.write_text("# Fruit\n\n```{snippet} rec/fruit\n{[..]}\nstart\n```\n", encoding="utf-8")
    out = snipcheck(project, "record")
    assert out.returncode == 0, out.stderr
    assert "```{snippet} rec/fruit\n{[..]}\nend\n```" in page.read_text()
    # or sort what it prints
    (project / "snippets" / "rec" / "fruit.py").write_text(FRUIT.replace("print({", "print(sorted({").replace("})", "}))"))
    page.write_text("# Fruit\n\n```{snippet} rec/fruit\n```\n", encoding="utf-8")
    out = snipcheck(project, "record")
    assert out.returncode == 0, out.stderr
    assert "['apple', 'banana', 'cherry', 'damson', 'elder', 'fig', 'grape', 'hazel']\nend" in page.read_text()


def set_order(source: str, hash_seed: int) -> str:
    """What plain python prints for ``source`` under ``PYTHONHASHSEED=hash_seed``."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONHASHSEED": str(hash_seed)}
    return subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, check=True).stdout


def test_record_refuses_a_set_of_two_strings_whose_order_one_other_seed_keeps(project: Path) -> None:
    # A set of two strings keeps its order under another seed about one time in two:
    # {"cpu", "cuda"} prints alike under the build's seed and the first other one,
    # so record runs it under several seeds (OTHER_HASH_SEEDS).
    from snipcheck.run.python import HASH_SEED, OTHER_HASH_SEEDS

    source = 'print({"cpu", "cuda"})\n'
    # the premise: plain python varies it, and the first other seed misses that
    assert len({set_order(source, seed) for seed in range(8)}) == 2
    assert set_order(source, OTHER_HASH_SEEDS[0]) == set_order(source, HASH_SEED)
    (project / "snippets" / "rec" / "devices.py").write_text(source, encoding="utf-8")
    page = project / "docs" / "index.md"
    page.write_text("# Devices\n\n```{snippet} rec/devices\n```\n", encoding="utf-8")
    before = page.read_text()
    out = snipcheck(project, "record")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "docs/index.md:3: rec/devices: not recorded: its output depends on the hash seed" in out.stderr
    seed = re.search(r"under PYTHONHASHSEED=(\d+) this prints otherwise", out.stderr)
    assert seed and set_order(source, int(seed[1])) != set_order(source, HASH_SEED), out.stderr
    assert page.read_text() == before


# --- snipcheck new (adoption.md #4) -------------------------------------------------


def quickstart(root: Path, conf: str, pages: dict[str, str]) -> Path:
    """A project laid out as sphinx-quickstart lays one out (conf.py beside the pages
    unless ``snipcheck_source_dir`` says otherwise), with the pages given."""
    root.mkdir(parents=True)
    (root / "conf.py").write_text(conf, encoding="utf-8")
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_new_in_an_rst_project_prints_an_rst_directive_that_record_then_fills(tmp_path: Path, probe_cache: Path) -> None:
    cache = fresh_cache(tmp_path / "cache", probe_cache)
    root = quickstart(
        tmp_path / "rst",
        f'project = "outside"\nextensions = ["snipcheck"]\nsnipcheck_cache_dir = {str(cache)!r}\n',
        {"index.rst": "Outside\n=======\n\nProse.\n"},
    )
    done = snipcheck(root, "new", "tutorial/first")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "created snippets/tutorial/first.py",
        "paste this into a page where the code belongs:",
        "",
        ".. snippet:: tutorial/first",
        "",
        "then fill in its output from a real run: snipcheck record tutorial/first",
    ]
    code = (root / "snippets" / "tutorial" / "first.py").read_text(encoding="utf-8")
    assert "torch" not in code  # an outside project need not have torch
    page = root / "index.rst"
    page.write_text(page.read_text(encoding="utf-8") + "\n" + done.stdout.splitlines()[3] + "\n", encoding="utf-8")
    recorded = snipcheck(root, "record", "tutorial/first")
    assert recorded.returncode == 0, recorded.stderr
    (placement,) = placements_in(page)
    assert placement.stated == printed(root, "tutorial/first")
    assert placement.stated  # the template prints something to record


def test_new_in_a_myst_project_prints_a_fence_the_source_dir_and_the_configured_record_command(tmp_path: Path) -> None:
    root = quickstart(
        tmp_path / "md",
        'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_source_dir = "pages"\n'
        'snipcheck_record_command = "make record ID={id}"\n',
        {"pages/index.md": "# Home\n", "pages/guide/start.md": "# Start\n"},
    )
    done = snipcheck(root, "new", "guide/hello", "--expect", "ValueError")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "created snippets/guide/hello.py",
        "paste this into a page under pages/ where the code belongs:",
        "",
        "```{snippet} guide/hello",
        "```",
        "",
        "then fill in its output from a real run: make record ID=guide/hello",
    ]
    assert "nox" not in done.stdout
    assert 'expect = "ValueError"' in (root / "snippets" / "guide" / "hello.py").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Bad Id!"], "snippet id"),
        (["ok/one", "--expect", "not an exception"], "expect"),
        (["ok/one", "--requires", "no-such-thing"], "no-such-thing"),
        (["ok/taken"], "already exists"),
    ],
)
def test_new_with_bad_input_exits_2_names_what_is_wrong_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """A new user found ``new`` exiting 1 (drift, "not recorded") for a bad id: it is bad input, 2."""
    root = quickstart(tmp_path / "rst", 'extensions = ["snipcheck"]\n', {"index.rst": "Home\n====\n"})
    (root / "snippets" / "ok").mkdir(parents=True)
    (root / "snippets" / "ok" / "taken.py").write_text("print('mine')\n", encoding="utf-8")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = snipcheck(root, "new", *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: ") and message in done.stderr, done.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    assert (root / "snippets" / "ok" / "taken.py").read_text(encoding="utf-8") == "print('mine')\n"


@pytest.mark.parametrize(
    ("pages", "markup"),
    [
        ({"index.rst": "", "README.md": "", "notes/a.md": ""}, "rst"),  # the root document decides
        ({"index.md": "", "a.rst": "", "b.rst": ""}, "myst"),
        ({"a.md": "", "b.md": "", "c.rst": "", "_build/x.rst": "", "_build/y.rst": ""}, "myst"),  # _build holds no pages
        ({}, "rst"),  # Sphinx's own default
    ],
)
def test_the_page_markup_is_that_of_the_projects_pages(tmp_path: Path, pages: dict[str, str], markup: str) -> None:
    from snipcheck.app.scaffold import page_markup

    for name, text in pages.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert page_markup(tmp_path) == markup


# --- the command line itself (adoption.md #6) ----------------------------------------------

COMMANDS = ["run", "record", "verify", "merge", "accept", "review", "new", "normalizers"]


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m snipcheck ARGS`` in ``cwd``, colour settings of this environment
    left out, ``env`` added."""
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "SNIPCHECK_CACHE_DIR")}
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", *args],
        cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    done = cli("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"snipcheck {snipcheck_package.__version__}\n", "")


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS)])
def test_help_names_the_program_snipcheck_and_shows_no_rest_markup(tmp_path: Path, command: list[str]) -> None:
    done = cli(*command, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(" ".join(["usage: snipcheck", *command]))
    assert "python -m" not in done.stdout and "__main__" not in done.stdout
    for markup in ("``", ":param", ":func:", ":class:", ":mod:", ".. "):
        assert markup not in done.stdout, markup


def test_help_lists_every_exit_status_the_command_line_uses(tmp_path: Path) -> None:
    """A new user found 130 (Ctrl-C) missing from ``--help``."""
    from snipcheck.app.cli.session import INTERRUPTED

    done = cli("--help", cwd=tmp_path)
    epilog = " ".join(done.stdout.split("Exit status:", 1)[1].split())
    for status in (0, 1, 2, INTERRUPTED):
        assert f"{status} " in epilog, status
    assert "interrupted" in epilog


def test_normalizers_are_listed_as_plain_text_without_rest_markup(tmp_path: Path) -> None:
    from snipcheck.judge.normalize import REGISTRY

    done = cli("normalizers", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(REGISTRY)
    for markup in ("``", ":func:", ":class:", ":mod:", ":data:"):
        assert markup not in done.stdout, markup
    assert lines[list(REGISTRY).index("memory-addresses")].endswith(
        'Memory addresses in object reprs such as "<object object at 0x7f3a2c1b9e50>" become "0x..."; other hex numbers stay.'
    )


def test_options_are_accepted_after_the_command(project: Path) -> None:
    (project / "snippets" / "rec" / "other.py").write_text('print("from the other folder")\n', encoding="utf-8")
    (project / "docs" / "index.md").write_text("```{snippet} rec/other\nstale\n```\n", encoding="utf-8")
    other = project / "other"
    other.mkdir()
    (other / "index.md").write_text("```{snippet} rec/other\n```\n", encoding="utf-8")
    done = cli("record", "--docs", ".", cwd=other)  # conf.py is not here: give it after the command too
    assert done.returncode == 2
    assert done.stderr.startswith("error: no conf.py in .; give the directory that holds conf.py with --conf-dir")
    done = cli("record", "--docs", ".", "--root", str(project), cwd=other)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["index.md:1: rec/other: recorded", "1 stated output(s) recorded; 0 unchanged or skipped"]
    # (placements_in reads the project's own source folder, docs/)
    assert (other / "index.md").read_text() == f"```{{snippet}} rec/other\n{printed(project, 'rec/other')}\n```\n"
    assert [p.stated for p in placements_in(project / "docs" / "index.md")] == ["stale"]  # not the folder read


@pytest.fixture
def drifted(project: Path) -> Path:
    """``project`` with one snippet whose stated output drifted."""
    (project / "snippets" / "rec" / "d.py").write_text('print("actual words")\n', encoding="utf-8")
    (project / "docs" / "index.md").write_text("```{snippet} rec/d\nstated words\n```\n", encoding="utf-8")
    return project


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False), ({"NO_COLOR": "1"}, False)],
)
def test_no_color_and_force_color(drifted: Path, env: dict[str, str], coloured: bool) -> None:
    done = cli("verify", cwd=drifted, **env)
    assert done.returncode == 1, done.stderr
    assert "drifted" in done.stdout and "+actual words" in done.stdout
    assert ("\x1b[" in done.stdout) is coloured
    if coloured:
        assert "\x1b[33mdrifted" in done.stdout and "\x1b[0m" in done.stdout


@pytest.fixture
def mixed(project: Path) -> Path:
    """``project`` with an empty stated output, one not run here, and one that fails."""
    snippets = project / "snippets" / "rec"
    (snippets / "fills.py").write_text('print("filled")\n', encoding="utf-8")
    (snippets / "later.py").write_text('# /// snipcheck\n# requires = ["torch>=99"]\n# ///\nprint(1)\n', encoding="utf-8")
    (snippets / "raises.py").write_text('raise ValueError("boom")\n', encoding="utf-8")
    (project / "docs" / "index.md").write_text(
        "```{snippet} rec/fills\n```\n\n```{snippet} rec/later\nstated\n```\n\n```{snippet} rec/raises\n```\n",
        encoding="utf-8",
    )
    return project


@pytest.mark.parametrize("quiet", [[], ["-q"], ["-qq"]])
def test_quiet_record_prints_less_and_errors_always(mixed: Path, quiet: list[str]) -> None:
    done = cli("record", *quiet, cwd=mixed)
    assert done.returncode == 1
    assert done.stdout.splitlines() == {
        0: [
            "docs/index.md:4: rec/later: not run here (lacks torch>=99); left as is",
            "docs/index.md:1: rec/fills: recorded",
            "1 stated output(s) recorded; 2 unchanged or skipped",
        ],
        1: ["1 stated output(s) recorded; 2 unchanged or skipped"],
        2: [],
    }[len(quiet) and len(quiet[0]) - 1]
    assert done.stderr.startswith("docs/index.md:8: rec/raises: not recorded: the snippet raised ValueError: boom")
    assert [p.stated for p in placements_in(mixed / "docs" / "index.md")] == ["filled", "stated", ""]


@pytest.mark.parametrize("quiet", [[], ["-q"], ["-qq"]])
def test_quiet_verify_prints_less_and_with_qq_only_what_does_not_hold(drifted: Path, quiet: list[str]) -> None:
    (drifted / "snippets" / "rec" / "ok.py").write_text('print("fine")\n', encoding="utf-8")
    page = drifted / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n```{snippet} rec/ok\nfine\n```\n", encoding="utf-8")
    done = cli("verify", *quiet, "--json", "report.json", cwd=drifted)
    assert done.returncode == 1, done.stdout + done.stderr
    problems = [
        "  drifted    rec/d   docs/index.md:1",
        "      --- stated (docs/index.md:1)",
    ]
    if quiet == ["-qq"]:
        assert done.stdout == ""
        assert done.stderr.splitlines()[:2] == problems, done.stderr
        assert "+actual words" in done.stderr
        assert "rec/ok" not in done.stderr and "unchanged" not in done.stderr and "JSON report" not in done.stderr
    else:
        lines = done.stdout.splitlines()
        assert lines[0].startswith("snipcheck verify on ") and problems[0] in lines
        assert "  unchanged  rec/ok  docs/index.md:5" in lines
        assert lines[-2:] == [
            "DRIFT in the project: 1 unchanged, 1 drifted, 0 failing, 0 not run, 0 error", "JSON report: report.json"
        ]
        if quiet:
            assert done.stderr == ""  # -q: no progress line
    assert (drifted / "report.json").is_file()
    # a run that holds says nothing at all with -qq
    page.write_text("```{snippet} rec/ok\nfine\n```\n", encoding="utf-8")
    done = cli("verify", *quiet, cwd=drifted)
    assert done.returncode == 0, done.stdout + done.stderr
    if quiet == ["-qq"]:
        assert (done.stdout, done.stderr) == ("", "")


@pytest.mark.parametrize(("flags", "shown"), [(["-qq"], False), ([], False), (["-v"], True)])
def test_the_runners_news_shows_with_v_only_whatever_conf_py_did_to_the_root_logger(
    project: Path, flags: list[str], shown: bool
) -> None:
    # a conf.py (or a theme it imports: a11y_pygments does) that configures the root logger at INFO
    conf = project / "conf.py"
    conf.write_text(
        "import logging\nlogging.basicConfig(level=logging.INFO)\n"
        + conf.read_text(encoding="utf-8").replace('snipcheck_runner = "subprocess"', "snipcheck_fork_min_runs = 0")
        + "snipcheck_preload = []\n",
        encoding="utf-8",
    )
    (project / "snippets" / "rec" / "a.py").write_text('print("a")\n', encoding="utf-8")
    (project / "docs" / "index.md").write_text("```{snippet} rec/a\na\n```\n", encoding="utf-8")
    done = cli("verify", *flags, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("snipcheck: fork runner ready (preloaded nothing)") == (1 if shown else 0), done.stderr
    assert "INFO" not in done.stderr
    if flags == ["-qq"]:
        assert (done.stdout, done.stderr) == ("", "")


def test_verbose_says_where_snippets_run_and_whether_each_ran_or_came_from_the_cache(project: Path) -> None:
    (project / "snippets" / "rec" / "a.py").write_text('print("a")\n', encoding="utf-8")
    (project / "docs" / "index.md").write_text("```{snippet} rec/a\n```\n", encoding="utf-8")
    first = cli("record", "-v", cwd=project)
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    assert lines[0].startswith("snippets run on ") and lines[0].endswith(f"subprocess runner); result cache: {project.parent / 'cache'}")
    assert sys.executable in lines[0]
    assert re.fullmatch(r"docs/index\.md:1: rec/a: ran in \d+\.\d\d s", lines[1]), lines
    assert len(lines) == 2, lines
    assert first.stdout.splitlines() == ["docs/index.md:1: rec/a: recorded", "1 stated output(s) recorded; 0 unchanged or skipped"]
    again = cli("verify", "-v", cwd=project)
    assert again.returncode == 0, again.stderr
    assert re.search(r"^docs/index\.md:1: rec/a: from the cache \(its run took \d+\.\d\d s\)$", again.stderr, re.MULTILINE)
    plain = cli("verify", cwd=project)
    assert plain.stdout == again.stdout  # -v adds to stderr only
    assert "from the cache" not in plain.stderr and "snippets run on" not in plain.stderr


BROKEN_DIRECTIVE = """\
from docutils.parsers.rst import Directive

extensions = ["snipcheck"]


class Broken(Directive):
    def run(self):
        raise ValueError("a bug in this directive")


def setup(app):
    app.add_directive("broken", Broken)
"""


@pytest.mark.parametrize(
    ("conf", "pages", "args", "expected"),
    [
        pytest.param(
            'extensions = ["snipcheck"]\nsettings = {}\nsnipcheck_timeout = settings["timeout"]\n',
            {"index.rst": "Home\n====\n"}, ["verify"],
            "{root}/conf.py:3: running conf.py raised KeyError: 'timeout'; fix conf.py (Sphinx runs the same file)",
            id="conf.py-raises",
        ),
        pytest.param(
            BROKEN_DIRECTIVE, {"index.rst": "Home\n====\n\n.. toctree::\n\n   other\n", "other.rst": "Other\n=====\n\n.. broken::\n"},
            ["record"],
            "Sphinx cannot read {root} with {root}/conf.py: ValueError: a bug in this directive while reading "
            "{root}/other.rst (raised by an extension or a directive)",
            id="directive-raises",
        ),
        pytest.param(
            'extensions = ["snipcheck"]\n', {"index.rst": "Home\n====\n"}, ["--source-dir", "index.rst", "verify"],
            "the source directory {root}/index.rst is not a directory; give the pages' folder with --source-dir",
            id="source-dir-a-file",
        ),
    ],
)
def test_a_project_the_command_line_cannot_read_is_told_in_one_line_naming_the_file(
    tmp_path: Path, conf: str, pages: dict[str, str], args: list[str], expected: str
) -> None:
    """A new user got raw tracebacks (exit status 1) for a conf.py that raised
    and for an extension's directive that raised, which did not name the page."""
    root = quickstart(tmp_path / "p", conf, pages).resolve()
    done = snipcheck(root, *args)
    assert (done.returncode, done.stderr.strip()) == (2, "error: " + expected.format(root=root))
    assert "Traceback" not in done.stdout + done.stderr
