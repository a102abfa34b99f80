"""Runners: execute one snippet in a fresh process and return its raw result.

A runner is anything with a ``name`` and a :meth:`Runner.run` method; the rest
of snipcheck only sees this interface, so a plain subprocess runner and a warm
forking one are interchangeable.  :func:`make_runner` picks one by language.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..model import RunResult, Snippet, Stamp
from .python import DEFAULT_MEMORY_LIMIT


class Runner(Protocol):
    """Executes snippets of one language."""

    name: str

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        """Run ``snippet`` once in a fresh process.

        :param timeout: seconds before the process group is killed.
        :param output_limit: bytes of output kept (the rest is counted).
        :raises OSError: if the interpreter or tool cannot be started.
        """
        ...


#: Names accepted by ``snipcheck_runner``.
PYTHON_RUNNERS = ("fork", "subprocess")


def make_runner(
    language: str,
    *,
    python: str,
    stamp: Stamp,
    kind: str = "fork",
    preload: tuple[str, ...] = ("torch",),
    build_dir: Path | None = None,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> Runner:
    """Return the runner for ``language``.

    :param python: the interpreter for Python snippets.
    :param stamp: the environment stamp recorded in every result.
    :param kind: ``"fork"`` (warm server, falls back to subprocesses where
        forking is unsafe) or ``"subprocess"``.
    :param preload: modules the fork server imports once; torch is left out
        when the stamp says it is not installed.
    :param build_dir: where Rust snippets are built (default: a temporary
        directory per process).
    :param memory_limit: default memory limit of a run in bytes
        (``RLIMIT_DATA`` of each of its processes; a snippet's ``memory`` tag
        overrides it); ``None`` or 0 for none.
    :raises ValueError: for a language or runner kind no runner handles.
    """
    if language == "python":
        if kind == "fork":
            from .fork import ForkRunner

            wanted = tuple(m for m in preload if not (m == "torch" and stamp.torch is None))
            return ForkRunner(python=python, stamp=stamp, preload=wanted, memory_limit=memory_limit)
        if kind == "subprocess":
            from .python import SubprocessRunner

            return SubprocessRunner(python=python, stamp=stamp, memory_limit=memory_limit)
        raise ValueError(f"unknown runner {kind!r}; use one of {', '.join(PYTHON_RUNNERS)}")
    if language == "rust":
        import tempfile

        from ..environment import host_platform, rustc_version
        from .rust import RustRunner

        rust_stamp = Stamp(python="", torch=None, device="CPU", platform=host_platform(), rustc=rustc_version())
        return RustRunner(build_dir or Path(tempfile.mkdtemp(prefix="snipcheck-rust-")), rust_stamp, memory_limit)
    raise ValueError(f"no runner for language {language!r}")
