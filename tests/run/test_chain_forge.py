"""A chain cell cannot end itself or a later cell (issue 33 §2).

The attack: cell 1 finds the runner's way of ending a cell (walking up its
frames, or through ``gc``, or the frame token for a write of its own to
descriptor 2), ends itself and cell 2, prints the stated outputs of cells 2
and 3 and ends the process.  Cells 2 and 3 never ran (cell 2 prints
``DRIFT`` and exits 3), so nothing may say they match: the build, ``verify``
and the executor refuse the chain's results from the forging cell on and
say why, at that cell.  The supervisor decides where a cell ends (it hands
each cell's code over and hears when the next one is wanted); the forms of
forgery it can recognise on that channel are refused too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chain_support import KINDS, cells, executor
from helpers import snipcheck_cli
from snipcheck.judge.compare import judge, outcome_problem
from snipcheck.model import Stamp

#: How cell 1 finds a way to end a cell: (name, the code that sets ``send``).
FINDERS = {
    # up its own frames to the runner's loop, which holds the capture module
    "frames": """\
frame = sys._getframe()
while frame is not None and send is None:
    for value in list(frame.f_locals.values()):
        if callable(getattr(value, "send_frame", None)):
            send = value.send_frame
            break
    frame = frame.f_back
""",
    # every function the collector tracks
    "gc": """\
for obj in gc.get_objects():
    if isinstance(obj, types.FunctionType) and obj.__qualname__ in ("send_frame", "install.<locals>.send", "install.<locals>.frame"):
        send = obj
        break
""",
    # the frame token, from the capture's closure, written to descriptor 2 directly
    "fd": """\
for obj in gc.get_objects():
    if isinstance(obj, types.FunctionType) and obj.__qualname__ == "install.<locals>.frame":
        token = [c.cell_contents for c in obj.__closure__ if isinstance(c.cell_contents, bytes)][0]
        send = lambda label, data: os.write(2, token + label + data) > 0
        break
""",
}


def attack(how: str) -> str:
    """Cell 1's code: end cells 1 and 2 by ``how``, print what cells 2 and 3 state, end the process."""
    return (
        "import gc, os, sys, types\nprint('one', flush=True)\nsend = None\n"
        + FINDERS[how]
        + "if send is None:\n    raise SystemExit('the attack found nothing to send with')\n"
        "send(b'c', b'0\\x000.001')\nprint('two', flush=True)\n"
        "send(b'c', b'0\\x000.001')\nprint('three', flush=True)\nos._exit(0)\n"
    )


#: What cell 2 really does.
TWO = "print('DRIFT')\nraise SystemExit(3)\n"
THREE = "print('three')\n"


def out(result) -> str:
    return "".join(e.text for e in result.events)


@pytest.mark.parametrize("how", list(FINDERS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_cell_that_forges_ends_of_cells_fails_and_the_cells_after_it_never_match(
    kind: str, how: str, stamp: Stamp, tmp_path: Path
) -> None:
    chain = cells(tmp_path, {"f/one": attack(how), "f/two": TWO, "f/three": THREE})
    ex = executor(stamp, tmp_path / "cache", kind)
    try:
        one, two, three = ex.map(chain)
    finally:
        ex.close()
    for cell, outcome, stated in ((chain[1], two, "two"), (chain[2], three, "three")):
        assert outcome.result is None or not judge(cell.tags, outcome.result, stated, ()).ok, (
            f"{cell.id} matched output that its own code never printed: {out(outcome.result)!r}"
        )
    assert one.result is not None
    found = outcome_problem(chain[0].tags, one.result)
    assert found is not None and found[0] == "exec", found
    assert "marked the end of a cell itself" in found[1], found[1]
    assert (two.origin, three.origin) == ("not-run", "not-run")
    assert two.missing == three.missing == () and two.stopped_at == three.stopped_at == "f/one"
    assert "f/one, a cell before it, marked the end of a cell itself" in two.stopped, two.stopped
    assert out(one.result).startswith("one\n")
    assert not list((tmp_path / "cache").glob("results/*")), "a forged chain was cached"


# --- the build and verify ---------------------------------------------------------------------

CONF = 'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_preload = []\n'


def cell_page(first: str) -> str:
    return (
        "# Forge\n\n```{snippet-chain} f\n```\n\n"
        f"```{{snippet-code}} f/one\n{first}--- output ---\none\n```\n\n"
        f"```{{snippet-code}} f/two\n{TWO}--- output ---\ntwo\n```\n\n"
        f"```{{snippet-code}} f/three\n{THREE}--- output ---\nthree\n```\n"
    )


def script_project(root: Path, first: str) -> Path:
    """A percent script whose first cell is ``first``, placed whole by ``snippet-script``."""
    script = root / "snippets" / "tut" / "forge.py"
    script.parent.mkdir(parents=True)
    script.write_text(f'# %% id="one"\n{first}\n# %% id="two"\n{TWO}\n# %% id="three"\n{THREE}')
    (root / "index.md").write_text(
        "# Script\n\n````{snippet-script} tut/forge\n```{snippet} tut/forge/one\none\n```\n"
        "```{snippet} tut/forge/two\ntwo\n```\n```{snippet} tut/forge/three\nthree\n```\n````\n"
    )
    return root


def sphinx_w(root: Path, cache: Path, runner: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-b", "html", "-D", f"snipcheck_runner={runner}",
         "-D", "snipcheck_fork_min_runs=0", str(root), str(root / "_build")],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("placed", "how", "runner"),
    [("cells", "frames", "fork"), ("cells", "gc", "subprocess"), ("script", "gc", "fork"), ("script", "frames", "subprocess")],
)
def test_the_w_build_fails_at_the_forging_cell(placed: str, how: str, runner: str, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "conf.py").write_text(CONF)
    if placed == "cells":
        (root / "index.md").write_text(cell_page(attack(how)))
        one = "f/one"
    else:
        script_project(root, attack(how))
        one = "tut/forge/one"
    built = sphinx_w(root, tmp_path / "cache", runner)
    assert built.returncode != 0, built.stdout + built.stderr
    assert "build succeeded" not in built.stdout + built.stderr
    assert f"snippet '{one}': " in built.stderr and "marked the end of a cell itself" in built.stderr, built.stderr
    assert " match" not in built.stdout.replace("0 match", ""), built.stdout


def test_verify_does_not_count_forged_cells_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "conf.py").write_text(CONF)
    (root / "index.md").write_text(cell_page(attack("fd")))
    done = snipcheck_cli(root, "verify", "--json", str(tmp_path / "v.json"), cache=tmp_path / "cache")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["holds"] is False
    status = {s["id"]: s["status"] for s in report["snippets"]}
    assert status == {"f/one": "failing", "f/two": "failing", "f/three": "failing"}, status


# --- the feed: what the supervisor refuses ------------------------------------------------------

#: Cell code that finds the runner's feed (the socket it asks for the next cell on) up its frames.
FEED = """\
import os, sys
print("one", flush=True)
frame = sys._getframe()
while frame.f_code.co_name != "run_cells":
    frame = frame.f_back
feed = frame.f_locals["feed"]
"""

#: Forms of forgery on the feed: (cells, what the forging cell sends, what the refusal says).
FORGERIES = {
    "a cell not handed over": (2, "os.write(feed, b'end 5 0 0.1')\n", "said cell 6 ended while cell 1 was running"),
    "more ends than cells": (1, "os.write(feed, b'end 0 0 0.1')\n", "asked for a cell after the last one (all 1 were handed over)"),
    "not a request": (2, "os.write(feed, b'cell 1')\n", "sent b'cell 1' where the runner asks for the next cell"),
    # the second comes before the next cell was handed over, or (on a slow machine) after: either way
    # it is cell 1's, and so was the first
    "two ends at once": (
        3, "os.write(feed, b'end 0 0 0.1')\nos.write(feed, b'end 0 0 0.1')\n",
        ("asked for the next cell twice", "said cell 1 ended while cell 2 was running"),
    ),
}


@pytest.fixture(params=KINDS)
def runner(request: pytest.FixtureRequest, stamp: Stamp):
    from snipcheck.run import make_runner

    made = make_runner("python", python=sys.executable, stamp=stamp, kind=request.param, preload=())
    yield made
    getattr(made, "close", lambda: None)()


@pytest.mark.parametrize("form", list(FORGERIES))
def test_the_supervisor_refuses_what_no_run_of_the_cells_sends(runner, form: str, tmp_path: Path) -> None:
    count, forge, said = FORGERIES[form]
    sources = {"g/one": FEED + forge + "import time\ntime.sleep(30)\n", "g/two": "print('two')\n", "g/three": "print('three')\n"}
    chain = cells(tmp_path, dict(list(sources.items())[:count]))
    results = runner.run_chain(chain, timeouts=[20] * count, output_limit=1 << 20)
    assert len(results) == 1, [out(r) for r in results]
    (one,) = results
    assert any(text in one.forged for text in ((said,) if isinstance(said, str) else said)), one.forged
    assert out(one) == "one\n" and not one.timed_out and one.duration < 10  # stopped at once, not at its timeout
    found = outcome_problem(chain[0].tags, one)
    assert found is not None and "marked the end of a cell itself: it " + one.forged in found[1]


def test_a_snippet_alone_cannot_cut_its_own_output_with_an_end_of_cell_frame(runner, tmp_path: Path) -> None:
    """Before, a ``c`` frame in a run of one snippet began a new "cell" whose
    output alone was the result: what the snippet printed first was dropped."""
    code = "import gc, os, sys, types\nprint('wrong', flush=True)\nsend = None\n" + FINDERS["fd"] + (
        "send(b'c', b'0\\x000.001')\nprint('right')\n"
    )
    (snippet,) = cells(tmp_path, {"s/alone": code})
    result = runner.run(snippet, timeout=20, output_limit=1 << 20)
    assert "end-of-cell frame" in result.forged and out(result) == "wrong\n"
    assert outcome_problem(snippet.tags, result) is not None


def test_what_the_supervisor_said_before_it_closed_is_read_even_with_a_next_left_unread() -> None:
    """The kernel reports ECONNRESET first when the supervisor closes its end
    with the build's ``next`` unread (the run ended meanwhile), before the
    messages it sent: they must still be read (a forged chain was once
    reported as a supervisor killed before it could report)."""
    import socket

    from snipcheck.run.watch import _receive

    build, supervisor = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with build:
        supervisor.send(b"forged 0 asked for the next cell twice")
        supervisor.send(b"exit 9")
        build.send(b"next")  # never read
        supervisor.close()
        assert [_receive(build) for _ in range(3)] == [b"forged 0 asked for the next cell twice", b"exit 9", b""]
