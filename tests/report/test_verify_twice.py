"""A verify report holds nothing that changes between two runs of unchanged code (issue 34).

The committed reports (``docs/_reports/*.json``) are rewritten by every
``nox -s verify -- X``; the guide promises (guide/report.rst, "The verify
report"; guide/develop.rst) that a run that changes nothing leaves them
byte-identical.  A small project (not the chapter: it runs in a
few seconds) holds what varies from run to run: a time under a stated
``[..]``, a varying number of lines under a stated ``...``, a torch-style log
line (date, time, process id) and a memory address, both masked by
compare-only normalizers, and a drifted snippet whose diff shows a line a
``[..]`` accepts.  Verify runs twice without the cache, as on a fresh clone,
into two files: they must be equal byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import snipcheck_cli

SNIPPETS = {
    "timing": (
        "import time\n"
        "print(f'took {time.perf_counter_ns() % 10**9} ns')\n"
        "print('done')\n"
    ),
    "lines": (
        "import random\n"
        "print('start')\n"
        "for _ in range(random.randint(1, 6)):\n"
        "    print(random.random())\n"
        "print('end')\n"
    ),
    "log": (
        "import datetime, os, sys, time\n"
        "now = datetime.datetime.now()\n"
        "pid = os.getpid() + time.perf_counter_ns() % 1000\n"
        "sys.stderr.write(now.strftime('W%m%d %H:%M:%S.%f') + f' {pid} torch/utils/cpp_extension.py:183] a log line\\n')\n"
        "sys.stderr.flush()\n"
        "print(object())\n"
    ),
    "drift": (
        "import time\n"
        "print(f'took {time.perf_counter_ns() % 10**9} ns')\n"
        "print('new value')\n"
    ),
}

PAGE = """# Things that vary

```{snippet} v/timing
took [..] ns
done
```

```{snippet} v/lines
start
...
end
```

```{snippet} v/log
W1201 20:31:19.251000 22 torch/utils/cpp_extension.py:183] a log line
<object object at 0x7f3a2c1b9e50>
```

```{snippet} v/drift
took [..] ns
old value
```
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("twice") / "project"
    (root / "docs").mkdir(parents=True)
    (root / "snippets" / "v").mkdir(parents=True)
    for name, code in SNIPPETS.items():
        (root / "snippets" / "v" / f"{name}.py").write_text(code)
    (root / "docs" / "index.md").write_text(PAGE)
    (root / "conf.py").write_text(
        'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_source_dir = "docs"\n'
        f'snipcheck_runner = "subprocess"\nsnipcheck_python = "{sys.executable}"\n'
    )
    return root


def _verify(project: Path, name: str) -> dict[str, object]:
    out = snipcheck_cli(project, "verify", "--no-cache", "-q", "--json", name, cache=project / ".cache")
    assert out.returncode == 1, out.stdout + out.stderr  # v/drift drifts; the others hold
    return json.loads((project / name).read_text(encoding="utf-8"))


def test_two_verify_runs_of_unchanged_code_write_the_same_bytes(project: Path) -> None:
    first = _verify(project, "first.json")
    second = _verify(project, "second.json")
    assert (project / "first.json").read_bytes() == (project / "second.json").read_bytes(), (
        json.dumps(first, ensure_ascii=False, indent=1) + "\n---\n" + json.dumps(second, ensure_ascii=False, indent=1)
    )
    # and a third run into the first file leaves it as it was
    before = (project / "first.json").stat().st_mtime_ns
    _verify(project, "first.json")
    assert (project / "first.json").stat().st_mtime_ns == before


def test_what_varies_is_written_as_the_pages_wildcards_write_it(project: Path) -> None:
    report = _verify(project, "shown.json")
    by_id = {s["id"]: s for s in report["snippets"]}  # type: ignore[attr-defined]
    assert [by_id[i]["status"] for i in ("v/timing", "v/lines", "v/log", "v/drift")] == [
        "unchanged", "unchanged", "unchanged", "drifted",
    ]  # fmt: skip
    assert by_id["v/timing"]["actual"] == "took [..] ns\ndone"
    assert by_id["v/lines"]["actual"] == "start\n...\nend"
    assert by_id["v/log"]["actual"] == (
        "W[..] torch/utils/cpp_extension.py:183] a log line\n<object object at 0x[..]>"
    )
    assert by_id["v/log"]["masked"] == ["memory-addresses", "torch-log-prefix"]
    assert by_id["v/drift"]["actual"] == "took [..] ns\nnew value"
    assert by_id["v/drift"]["diff"] == (
        "--- stated (docs/index.md:19)\n"
        f"+++ actual ({_label(report)})\n"
        "@@ -1,2 +1,2 @@\n"
        "\\ matched by stated line 1: took [..] ns\n"
        " took [..] ns\n"
        "-old value\n"
        "+new value"
    )
    # the environment-wide lines come from those diffs: none here, one snippet drifted
    assert report["environment_wide"] == []


def _label(report: dict[str, object]) -> str:
    stamp = report["stamp"]
    assert isinstance(stamp, dict)
    from snipcheck.model import Stamp

    return Stamp(**stamp).label()


def test_accept_from_the_report_keeps_the_wildcard_and_writes_the_new_line(project: Path) -> None:
    report = project / "accept.json"
    _verify(project, report.name)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)
    page = project / "docs" / "index.md"
    original = page.read_text()
    try:
        out = snipcheck_cli(project, "accept", "--report", report.name, "--no-cache", cache=project / ".cache")
        assert out.returncode == 0, out.stdout + out.stderr
        assert page.read_text() == original.replace("took [..] ns\nold value", "took [..] ns\nnew value")
    finally:
        page.write_text(original)


# --- the steady form, line by line ----------------------------------------------------------------


def test_a_line_a_wildcard_no_longer_accepts_stays_as_it_ran() -> None:
    from snipcheck.judge.normalize import resolve
    from snipcheck.report.steady import actual

    normalizers = resolve(["memory-addresses"])
    # the [..] line still matches: written as stated; the changed line is kept as printed
    assert actual("took [..] ns\nold", "took 123 ns\nnew", normalizers) == "took [..] ns\nnew"
    assert actual("took [..] ns\nold", "took 12 s\nold", normalizers) == "took 12 s\nold"
    # a ... whose neighbours both changed anchors nothing: its lines stay as printed
    assert actual("a\n...\nb", "x\n1\n2\ny", normalizers) == "x\n1\n2\ny"
    assert actual("a\n...\nb", "a\n1\n2\ny", normalizers) == "a\n...\ny"
    # an address masked by memory-addresses, with or without a wildcard of the page's
    assert actual("<A at 0x7f3a2c1b9e50>", "<A at 0x7f0769464180>", normalizers) == "<A at 0x[..]>"


def test_the_seconds_of_a_timed_out_run_are_masked_in_its_problem() -> None:
    from snipcheck.report.steady import problem

    said = "timed out after 2.1 s and was killed with its process group; make it faster"
    assert problem(said) == "timed out after [..] s and was killed with its process group; make it faster"
    assert problem("exited with status 3") == "exited with status 3"
