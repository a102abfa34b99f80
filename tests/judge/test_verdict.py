"""The one check step (issue 35): :mod:`snipcheck.judge.verdict` decides what a
placed snippet's outcome means, and every front end only words its verdict.

The build (:data:`snipcheck.sphinxext.results.WORDS`), ``verify``
(:data:`snipcheck.report.verify.WORDS`) and the pytest plugin
(:data:`snipcheck.app.pytest_plugin.OUTCOMES`) each map every
:class:`~snipcheck.judge.verdict.Status` to their own words through one table,
and agree on what passes: a cell stopped by an earlier cell of its chain
fails in all of them (it was "not-run" in the build and "failing" in verify).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from helpers import snipcheck_cli
from snipcheck.app.pytest_plugin import OUTCOMES
from snipcheck.engine.cache import ResultCache
from snipcheck.engine.execute import Executor, ExecutorConfig
from snipcheck.judge.compare import terminal_text
from snipcheck.judge.verdict import Finding, Status, check, environment_wide
from snipcheck.model import Event, ExceptionInfo, Figure, Outcome, RunResult, Snippet, Stamp, Tags
from snipcheck.report import verify
from snipcheck.sources.chains import attach
from snipcheck.sources.placement import Placement
from snipcheck.sources.snippets import load
from snipcheck.sphinxext import results
from snipcheck.sphinxext.collector import PROBLEMS

STAMP = Stamp(python="3.11.7", torch="2.13.0+cpu", device="CPU", platform="Linux x86_64")
SCHEMAS = Path(__file__).resolve().parents[2] / "_ext" / "snipcheck" / "schemas"
FIGURE = Figure("png", b"not decoded: no stated image to compare with", width=4, height=3)


def ran(*text: str, status: int | None = 0, exception: ExceptionInfo | None = None, timed_out: bool = False,
        truncated: int = 0, figures: tuple[Figure, ...] = ()) -> Outcome:  # fmt: skip
    events = [Event("stdout", "text", t) for t in text]
    events += [Event("stdout", "figure", f.placeholder(n) + "\n") for n, f in enumerate(figures, start=1)]
    result = RunResult(tuple(events), status, None, exception, 0.25, timed_out, truncated, STAMP, "subprocess",
                       output_limit=16, figures=figures)  # fmt: skip
    return Outcome(result, "run")


CUT = ran("0123456789abcdef", truncated=5)
#: (tags, outcome, stated) → the verdict, one case (at least) per status, and the order of the questions.
CASES = {
    "ok": (Tags(), ran("hi\n"), "hi", Status.OK),
    "drift": (Tags(), ran("hello\n"), "hi", Status.DRIFT),
    "nothing stated yet": (Tags(), ran("hi\n"), "", Status.DRIFT),
    "a figure without its stated image": (
        Tags(),
        ran(figures=(FIGURE,)),
        "[figure 1: 4×3 PNG]",
        Status.FIGURES,
    ),
    "text and a figure differ": (Tags(), ran("x\n", figures=(FIGURE,)), "[figure 1: 4×3 PNG]", Status.DRIFT),
    "cut, the rest as stated": (Tags(), CUT, terminal_text(CUT.result), Status.TRUNCATED),  # type: ignore[arg-type]
    "cut and drifted": (Tags(), CUT, "something else", Status.TRUNCATED),
    "expected exception missing": (Tags(expect="ValueError"), ran("hi\n"), "hi", Status.ENDED_WRONG),
    "expected exception missing, cut": (Tags(expect="ValueError"), CUT, "", Status.ENDED_WRONG),
    "raised unexpectedly": (
        Tags(),
        ran("x\n", status=1, exception=ExceptionInfo("ValueError", "boom")),
        "x",
        Status.FAILED,
    ),
    "timed out": (Tags(), ran("x\n", status=None, timed_out=True), "x", Status.TIMEOUT),
    "stopped by its chain": (
        Tags(),
        Outcome(
            None, "not-run", stopped="its chain's process ended before it could run: c/a", stopped_at="c/a"
        ),
        "x",
        Status.STOPPED,
    ),
    "a requirement unmet": (
        Tags(requires=("cuda",)),
        Outcome(None, "not-run", ("cuda",)),
        "x",
        Status.NOT_RUN,
    ),
    "an earlier cell's requirement unmet": (
        Tags(),
        Outcome(None, "not-run", ("cuda",), stopped_at="c/a"),
        "x",
        Status.NOT_RUN,
    ),
    "could not start": (
        Tags(),
        Outcome(None, "error", notes=("could not start the run: boom",)),
        "x",
        Status.ERROR,
    ),
}


def decide(name: str, srcdir: Path) -> Finding:
    tags, outcome, stated, _ = CASES[name]
    return check("s/x", tags, outcome, stated, (), srcdir)


@pytest.mark.parametrize("name", list(CASES))
def test_the_check_step_decides_each_status(name: str, tmp_path: Path) -> None:
    found = decide(name, tmp_path)
    assert found.status is CASES[name][3]
    if found.status is Status.OK or found.status is Status.NOT_RUN:
        assert found.problems() == ()
    else:
        assert found.problems(), "a verdict that fails says why"
    if found.status is Status.TRUNCATED:
        assert found.problems()[-1].startswith("its output reached the output limit of 16 bytes")


def test_every_status_has_a_case_and_a_meaning() -> None:
    assert {case[3] for case in CASES.values()} == set(Status)
    assert len({s.value for s in Status}) == len(Status)


def test_the_stopping_cell_is_carried_once_never_as_a_requirement() -> None:
    stopped = CASES["stopped by its chain"][1]
    assert stopped.missing == () and stopped.stopped_at == "c/a"
    found = check("s/x", Tags(), stopped, "x", (), Path("."))
    assert found.missing == () and found.problems() == (stopped.stopped,)


# --- each front end words the step's verdict, through one table -----------------------------


def test_each_front_end_maps_every_status_through_its_table() -> None:
    for table in (results.WORDS, verify.WORDS, OUTCOMES):
        assert set(table) == set(Status)
    assert set(verify.WORDS.values()) == set(verify.STATUSES)  # the on-disk names of snipcheck-verify/3
    schema = json.loads((SCHEMAS / "build-report.schema.json").read_text(encoding="utf-8"))
    build = set(schema["$defs"]["snippet"]["properties"]["status"]["enum"])
    assert set(results.WORDS.values()) == build - {"off"}  # off: execution is off, nothing was judged
    assert set(OUTCOMES.values()) == {"pass", "skip", "fail"}


@pytest.mark.parametrize("status", list(Status))
def test_the_front_ends_agree_on_what_passes(status: Status) -> None:
    # A green that lies is the worst bug: what fails in one fails in all of them.
    assert (verify.WORDS[status] in ("unchanged", "not-run")) is status.passes
    assert (results.WORDS[status] not in PROBLEMS) is status.passes
    assert (OUTCOMES[status] != "fail") is status.passes


def test_a_stopped_cell_fails_in_every_front_end() -> None:
    assert not Status.STOPPED.passes
    assert results.WORDS[Status.STOPPED] == "stopped" and "stopped" in PROBLEMS
    assert verify.WORDS[Status.STOPPED] == "failing"
    assert OUTCOMES[Status.STOPPED] == "fail"


class FakeExecutor:
    """Hands out the outcomes of :data:`CASES` by snippet id."""

    def __init__(self, outcomes: dict[str, Outcome]) -> None:
        self.outcomes = outcomes

    def plan(self, snippets: object) -> int:
        return 0

    def submit(self, snippet: Snippet) -> None:
        pass

    def outcome(self, snippet: Snippet) -> Outcome:
        return self.outcomes[snippet.id]


def test_verify_reports_the_steps_verdict_in_its_words(tmp_path: Path) -> None:
    ids = {name: f"case/{n}" for n, name in enumerate(CASES)}
    placements = [
        Placement(
            ids[name],
            "snippet",
            "index",
            str(tmp_path / "index.md"),
            3 * n + 1,
            "myst",
            "directive",
            "```",
            3 * n + 1,
            3 * n + 2,
            True,
            "",
            (),
            CASES[name][2],
        )
        for n, name in enumerate(CASES)
    ]
    snippets = {
        ids[name]: Snippet(
            ids[name],
            f"snippets/{ids[name]}.py",
            str(tmp_path / f"{ids[name]}.py"),
            "python",
            "",
            "",
            1,
            CASES[name][0],
        )
        for name in CASES
    }
    settings = types.SimpleNamespace(
        root=tmp_path, source_dir=tmp_path, normalizers=(), reference="torch 2.13.0"
    )
    executor = FakeExecutor({ids[name]: CASES[name][1] for name in CASES})
    report = verify.verify(settings, placements, executor, STAMP, loader=lambda p: snippets[p.snippet_id])  # type: ignore[arg-type]
    status = {s.id: s.status for s in report.snippets}
    for name, case_id in ids.items():
        assert status[case_id] == verify.WORDS[decide(name, tmp_path).status], name
    # the two that were decided otherwise before issue 35: the stopped cell and a cut output that drifted
    assert status[ids["stopped by its chain"]] == status[ids["cut and drifted"]] == "failing"
    by_id = {s.id: s for s in report.snippets}
    assert by_id[ids["an earlier cell's requirement unmet"]].missing == ("cuda",)
    assert by_id[ids["stopped by its chain"]].missing == ()


def test_environment_wide_lines_are_decided_over_the_drifted_snippets() -> None:
    diff = "--- stated\n+++ actual\n@@ -1 +1,2 @@\n+NEW WARNING\n x\n"
    own = diff + "-mine\n+yours\n"
    wide, only = environment_wide([("a", diff, True), ("b", diff, True), ("c", own, True), ("d", "", False)])
    assert wide == {("+", "NEW WARNING"): ["a", "b", "c"]}
    assert only == (True, True, False, False)


# --- the executor: a cell kept from running by an earlier cell ------------------------------------


def test_a_cell_after_one_that_lacks_a_requirement_lacks_it_too(stamp: Stamp, tmp_path: Path) -> None:
    sources = {"r/one": '# /// snipcheck\n# requires = ["torch>=99"]\n# ///\nx = 1\n', "r/two": "print(x)\n"}
    for snippet_id, code in sources.items():
        path = tmp_path / "snippets" / f"{snippet_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    chain = attach(("page", "demo", load(i, tmp_path / "snippets", tmp_path)) for i in sources)
    ex = Executor(ExecutorConfig(python=sys.executable, stamp=stamp, cache=ResultCache(tmp_path / "cache"),
                                 runner="subprocess", preload=(), fork_min_runs=0, jobs=1))  # fmt: skip
    try:
        one, two = ex.map(chain)  # type: ignore[arg-type]
    finally:
        ex.close()
    assert one.missing == two.missing == ("torch>=99",)  # a requirement, never "chain:r/one"
    assert two.stopped_at == "r/one" and two.stopped == "" and one.stopped_at == ""
    assert check("r/two", Tags(), two, "1", (), tmp_path).status is Status.NOT_RUN


# --- the build, verify and pytest --snipcheck on one chain ----------------------------------------

PAGE = """\
# Chain

```{snippet-chain} c
```

```{snippet-code} c/one
x = 1
print("one")
```

```{snippet} c/one
one
```

```{snippet-code} c/two
raise RuntimeError("broken")
```

```{snippet} c/two
```

```{snippet-code} c/three
print("three", x)
```

```{snippet} c/three
three 1
```
"""


def test_a_cell_stopped_by_its_chain_gets_the_same_verdict_in_the_build_verify_and_pytest(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_preload = []\n')
    (root / "index.md").write_text(PAGE)
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    built = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", str(root), str(root / "_build" / "html"),
                            "-d", str(root / "_build" / "doctrees")],
                           env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert built.returncode == 1, built.stderr
    report = json.loads((root / "_build" / "doctrees" / "snipcheck-report" / "report.json").read_text())
    build = {s["snippet_id"]: s for s in report["snippets"]}
    assert build["c/three"]["status"] == results.WORDS[Status.STOPPED] == "stopped"
    assert (
        build["c/three"]["missing"] == []
        and "c/two, a cell before it, raised RuntimeError" in build["c/three"]["problems"][0]
    )
    failures = built.stderr.split("the build fails (snipcheck_fail_on_drift = True):\n")[1]
    assert failures.splitlines() == ["  index.md:19: c/two: exec", "  index.md:26: c/three: stopped"], (
        failures
    )
    done = snipcheck_cli(root, "verify", "--json", str(tmp_path / "v.json"), cache=tmp_path / "cache")
    assert done.returncode == 1, done.stdout + done.stderr
    verified = {s["id"]: s["status"] for s in json.loads((tmp_path / "v.json").read_text())["snippets"]}
    assert verified["c/three"] == verify.WORDS[Status.STOPPED] == "failing"
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "--snipcheck", "-p", "no:cacheprovider", "-q", "-k", "three", str(root / "index.md")],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert tested.returncode == 1 and "1 failed, 2 deselected" in tested.stdout, tested.stdout
    assert OUTCOMES[Status.STOPPED] == "fail"
