"""Helpers of the guide's command-line examples (``snippets/demo/*.py``).

Each example writes a tiny Sphinx project into its own run directory and runs
the real ``snipcheck``, ``sphinx-build`` or ``pytest`` on it, as a subprocess
of the interpreter running the example, and prints what they print, stdout
and stderr in the order they were written, followed by their exit status.

Three things in that output describe the machine rather than snipcheck.  They
are redacted, the way snipcheck itself shows a run directory as ``[CWD]``:

* the environment label of the runs (``torch 2.13.0+cpu · Python 3.11.7 ·
  CPU``, with `` · Linux x86_64`` where the platform is named) reads ``[ENV]``;
* a duration (``0.03 s``, ``in 0.52s``) reads ``[TIME]``;
* the note on what the runs there lack (``note: no PID or mount namespace for
  the runs here ...``, also at the end of a build's summary line) is left out:
  an example runs inside a snippet's run, which has no capability left, so the
  snipcheck it starts can never make namespaces for its own runs, whatever
  the machine allows (see the guide's "What a snippet can read and write").

Spaces at the ends of lines (a diff's blank context line is one space) are
removed: the pages that show these outputs are reStructuredText, whose
directive bodies cannot hold them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

#: Where each example's project lives, inside its run directory.
PROJECT = Path("project")

_ENV = re.compile(
    r"(?:rustc [^·\n]+ · )?(?:torch \S+ · )?Python \d+\.\d+\.\d+\S* · (?:CPU|CUDA \([^)\n]*\))"
    r"(?: · (?:Linux|Darwin|Windows|FreeBSD) \S+)?"
)
_TIME = re.compile(r"(?<![\w.])\d+(?:\.\d+)? ?s\b")
#: The caveat of runs without namespaces: a line of its own, or the end of a summary line.
_CAVEAT = re.compile(
    r"^note: no PID or mount namespace for the runs here .*\n|; no PID or mount namespace for the runs here .*$", re.M
)

#: The ``conf.py`` of a minimal project: nothing but snipcheck (alabaster, Sphinx's default theme).
CONF = """\
extensions = ["snipcheck"]
snipcheck_preload = []  # the fork runner's server imports nothing heavy first
"""


def write(files: dict[str, str], root: Path = PROJECT) -> None:
    """Write ``files`` (path under ``root`` → text, dedented) into the project."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def redact(text: str) -> str:
    """``text`` with the environment label, durations and the caveat redacted (see the module docstring)."""
    return _TIME.sub("[TIME]", _ENV.sub("[ENV]", _CAVEAT.sub("", text)))


def run(shown: str, command: list[str], root: Path = PROJECT, input: str | None = None) -> int:
    """Run ``command`` in ``root``, print ``$ shown``, its output and its exit status.

    :param shown: the command as a user would type it.
    :param input: what the command reads on stdin (default: nothing, end of file).
    :return: the exit status.
    """
    env = dict(os.environ, NO_COLOR="1", PYTHONUNBUFFERED="1", COLUMNS="100")
    done = subprocess.run(
        command,
        cwd=root,
        env=env,
        input=input or "",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    print(f"$ {shown}")
    output = "\n".join(line.rstrip() for line in redact(done.stdout).rstrip("\n").split("\n"))
    if output:
        print(output)
    print(f"[exit status {done.returncode}]")
    return done.returncode


def snipcheck(*args: str, root: Path = PROJECT, input: str | None = None) -> int:
    """``snipcheck ARGS`` in the project (run as ``python -m snipcheck``).

    :param input: what it reads on stdin (the answers to ``snipcheck review``).
    """
    return run(" ".join(["snipcheck", *args]), [sys.executable, "-m", "snipcheck", *args], root, input)


def sphinx_build(*args: str, root: Path = PROJECT) -> int:
    """``sphinx-build -q -b html -d _build/doctrees . _build/html ARGS`` in the project."""
    base = ["-q", "-b", "html", "-d", "_build/doctrees", ".", "_build/html", *args]
    return run(" ".join(["sphinx-build", *base]), [sys.executable, "-m", "sphinx", *base], root)


def pytest(*args: str, root: Path = PROJECT) -> int:
    """``pytest ARGS`` in the project (its cache off: nothing is left behind)."""
    return run(
        " ".join(["pytest", *args]), [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], root
    )


def show(name: str, root: Path = PROJECT) -> None:
    """Print a file of the project under a header naming it."""
    print(f"--- {name}")
    print((root / name).read_text(encoding="utf-8").rstrip("\n"))
