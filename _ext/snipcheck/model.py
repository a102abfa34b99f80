"""Plain records passed between the stages of snipcheck.

Every record is a frozen dataclass of plain data (strings, numbers, tuples), so
it pickles for Sphinx's parallel build and round-trips through JSON for the
result cache and the drift reports.  This module imports nothing but the
standard library; every other module may import it.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

#: Streams an :class:`Event` can come from.
STREAMS = ("stdout", "stderr")
#: What produced an event: plain writes, a Python warning, the traceback of
#: the uncaught exception, or a figure (its placeholder line; the image is in
#: :attr:`RunResult.figures`).  All of them reach the terminal through ``stream``.
KINDS = ("text", "warning", "traceback", "figure")


@dataclass(frozen=True)
class Tags:
    """A snippet's metadata, read from its tag block (see :mod:`snipcheck.sources.tags`).

    :param expect: ``"ok"`` (exit status 0), the name of the exception type the
        snippet must end with (``"RuntimeError"``, ``"torch.OutOfMemoryError"``),
        ``"panic"`` (Rust), ``"exit N"`` or ``"signal NAME"``.
    :param requires: what the run needs, e.g. ``("cuda",)``, ``("burn",)`` or
        ``("torch>=2.14",)``; a snippet whose requirements are unmet is not run.
    :param timeout: limit in CPU seconds of the run's processes (with a
        wall-clock cap of :data:`snipcheck.sources.tags.WALL_FACTOR` times as
        many seconds), or ``None`` for the configured default.
    :param refutes: for a refuted-claim snippet, the belief it tests.
    :param memory: memory limit of the run in bytes, or ``None`` for the
        configured default (``snipcheck_memory_limit``).
    :param env: names of environment variables the snippet reads: passed
        through to its run and part of its cache key.
    :param depends: data files the snippet reads, as paths or glob patterns
        relative to the project root: copied into its run directory at the
        same relative path and part of its cache key.
    :param seed: the seed of its random generators (``random``, numpy,
        torch), ``"fresh"`` for plain python's fresh randomness, or ``None``
        for the configured default (``snipcheck_seed``).  The executor
        resolves it: a snippet it runs has an ``int`` or ``None`` here.
    :param output_limit: bytes of output kept of its run, or ``None`` for the
        configured default (``snipcheck_output_limit``).
    :param script_cell: for a cell of a tutorial script, how it runs as a
        notebook's or sphinx-gallery's cell runs: ``"repr"``, the value of
        its last bare expression is shown; ``"figures"``, the matplotlib
        figures still open at its end are; ``"folder"``, the script's folder
        is first on ``sys.path`` (its modules beside it are importable);
        ``"inline"``, its figures are drawn as IPython's inline backend draws
        them (cropped to ``bbox_inches="tight"``), for a notebook's cell.
        Empty for any other snippet; not a key of the tag block: the
        ``snippet-script`` directive and notebook pages set it.
    """

    expect: str = "ok"
    requires: tuple[str, ...] = ()
    timeout: float | None = None
    refutes: str | None = None
    memory: int | None = None
    env: tuple[str, ...] = ()
    depends: tuple[str, ...] = ()
    seed: int | str | None = None
    output_limit: int | None = None
    script_cell: tuple[str, ...] = ()


@dataclass(frozen=True)
class Snippet:
    """One code block of the chapter, stored as one file under ``snippets/``.

    :param id: the stable snippet id: the path under ``snippets/`` without
        suffix, e.g. ``"inplace/leaf-add"``.
    :param path: the path shown to readers and in tracebacks, relative to the
        project root, e.g. ``"snippets/inplace/leaf-add.py"``.
    :param abspath: absolute path of the file.
    :param language: ``"python"`` or ``"rust"``.
    :param source: the whole file, tag block included; this is what runs.
    :param code: what the page shows: ``source`` without the tag block.
    :param code_lineno: the file line number of the first line of ``code``, so
        that line numbers on the page match the ones in tracebacks.
    :param tags: the parsed tag block.
    :param helpers: ``(shown path, source)`` of the helper modules beside the
        snippet (files whose names start with ``_``), which it may import; they
        are copied next to it for every run and are part of its cache key.
    :param env: names of the environment variables passed through to its run
        (its ``env`` tag, plus ``snipcheck_env`` once the executor adds it).
    :param files: ``(path relative to the run directory, absolute source
        path)`` of the data files copied into its run directory (its
        ``depends`` tag, plus ``snipcheck_depends`` once the executor adds it).
    :param chain: the chain it is a cell of, as ``"<docname>:<name>"`` (the
        page's ``snippet-chain``), or ``""``: it runs on its own.
    :param earlier: the cells of its chain before it, in order (each with
        ``earlier`` empty): they run first, in the same process.
    :param later: the ids of the cells of its chain after it, in order, where
        the caller knows them (:meth:`snipcheck.app.project.Project.snippet`
        does; a build submits whole chains, see
        :mod:`snipcheck.engine.chain_job`): a run that ends with this cell then
        still checks that it lets the process go on.  The cache key holds
        whether there are any, not which.
    """

    id: str
    path: str
    abspath: str
    language: str
    source: str
    code: str
    code_lineno: int
    tags: Tags
    helpers: tuple[tuple[str, str], ...] = ()
    env: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    chain: str = ""
    earlier: tuple[Snippet, ...] = ()
    later: tuple[str, ...] = ()

    @property
    def in_page(self) -> bool:
        """Whether its code is written in a page (``abspath`` is the page's,
        ``path`` the ``.py`` or ``.rs`` file it runs as), not in a file of its own."""
        return os.path.splitext(self.abspath)[1] != os.path.splitext(self.path)[1]


@dataclass(frozen=True)
class Event:
    """One contiguous piece of output, in the order the terminal showed it.

    :param stream: ``"stdout"`` or ``"stderr"``.
    :param kind: ``"text"``, ``"warning"``, ``"traceback"`` or ``"figure"``
        (see :data:`KINDS`).
    :param text: the decoded text; a byte that is not valid UTF-8 appears as
        ``\\x{NN}``, and a backslash the output has right before such a form
        (or before the text ``x{NN}``) doubled, so that no printed text reads
        the same (:mod:`snipcheck.rawbytes`).
        For a figure, its placeholder line (:meth:`Figure.placeholder`); the
        n-th figure event of a result is its n-th figure.
    """

    stream: str
    kind: str
    text: str


@dataclass(frozen=True)
class Figure:
    """An image a run showed (matplotlib's ``plt.show()``) or saved into its
    working directory (``plt.savefig("plot.png")``).

    :param format: ``"png"`` or ``"svg"``.
    :param data: the image file's bytes; empty when it was not kept (see
        :attr:`dropped`).
    :param name: the file name it was saved under, ``""`` for a shown figure.
    :param width: width in pixels (PNG), ``None`` when unknown (SVG).
    :param height: height in pixels (PNG), ``None`` when unknown.
    :param dropped: bytes of an image not kept because the run's figures
        passed the figure limit (:data:`snipcheck.run.channel.FIGURE_LIMIT`), else 0.
    """

    format: str
    data: bytes = field(repr=False)
    name: str = ""
    width: int | None = None
    height: int | None = None
    dropped: int = 0

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of :attr:`data`: names the image file on the page."""
        return hashlib.sha256(self.data).hexdigest()

    def placeholder(self, number: int) -> str:
        """The line that stands for the figure in the text output, e.g.
        ``[figure 1: 640×480 PNG]``, ``[figure 2: 640×480 PNG, saved as plot.png]``,
        ``[figure 3: SVG, saved as plot.svg]``.

        :param number: its 1-based position among the run's figures.
        """
        size = f"{self.width}×{self.height} " if self.width and self.height else ""
        text = f"figure {number}: {size}{self.format.upper()}"
        if self.name:
            text += f", saved as {self.name}"
        if self.dropped:
            text += f", not kept ({self.dropped:,} bytes over the figure limit)"
        return f"[{text}]"

    def to_json(self) -> dict[str, Any]:
        """Plain-data form (the bytes in base64)."""
        return {
            "format": self.format,
            "data": base64.b64encode(self.data).decode("ascii"),
            "name": self.name,
            "width": self.width,
            "height": self.height,
            "dropped": self.dropped,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figure:
        """Inverse of :meth:`to_json`.

        :raises KeyError, TypeError, ValueError: for a damaged record.
        """
        return cls(
            format=str(data["format"]),
            data=base64.b64decode(data["data"], validate=True),
            name=str(data.get("name", "")),
            width=data.get("width"),
            height=data.get("height"),
            dropped=int(data.get("dropped", 0)),
        )


@dataclass(frozen=True)
class ExceptionInfo:
    """The uncaught exception a run ended with (Python) or its panic (Rust).

    :param type: the qualified type name, ``"RuntimeError"`` for builtins and
        ``"module.Name"`` otherwise; ``"panic"`` for a Rust panic.
    :param message: ``str(exception)`` or the panic message.
    """

    type: str
    message: str


@dataclass(frozen=True)
class Stamp:
    """The environment a run happened in.

    :param python: Python version, e.g. ``"3.11.7"``.
    :param torch: torch version with its build suffix, e.g. ``"2.13.0+cpu"``,
        or ``None`` when torch is not installed.
    :param device: ``"CPU"`` or ``"CUDA (<device name>)"``.
    :param platform: e.g. ``"Linux x86_64"``.
    :param rustc: ``rustc --version`` output for Rust runs, else ``None``.
    :param env: short id of the environment fingerprint of Python runs (see
        :mod:`snipcheck.run.fingerprint`): the interpreter, every installed
        distribution and the variables passed to snippets.  It names one
        machine's environment, so it takes no part in comparing stamps (shard
        reports from different machines describe the same release).
    """

    python: str
    torch: str | None
    device: str
    platform: str
    rustc: str | None = None
    env: str | None = field(default=None, compare=False)

    @property
    def cuda(self) -> bool:
        """Whether CUDA was available to the run."""
        return self.device.startswith("CUDA")

    def label(self) -> str:
        """Short human form: ``torch 2.13.0+cpu · Python 3.11.7 · CPU``."""
        parts = []
        if self.rustc:
            parts.append(self.rustc)
        if self.torch:
            parts.append(f"torch {self.torch}")
        if self.python:
            parts.append(f"Python {self.python}")
        parts.append(self.device)
        return " · ".join(parts)


@dataclass(frozen=True)
class RunResult:
    """The raw result of one run, before any normalization.

    :param events: output events in terminal order, adjacent events of the same
        stream and kind merged.
    :param exit_status: the process exit status, or ``None`` if it died of a
        signal or was killed at the timeout.
    :param signal: the signal name (``"SIGSEGV"``) if the process died of one.
    :param exception: the uncaught exception or panic, if any.
    :param duration: wall-clock seconds from start to exit.
    :param timed_out: whether the run was killed at its timeout.
    :param truncated_bytes: bytes of output dropped beyond the output limit.
    :param stamp: the environment of the run.
    :param runner: the name of the runner that produced it.
    :param seed: the seed its random generators started from, or ``None``
        for fresh randomness (see :attr:`Tags.seed`).
    :param figures: the figures it showed or saved, in output order; the
        n-th ``"figure"`` event is the n-th figure.
    :param ended_chain: for a cell of a chain with whose run its process
        ended (it exited, was killed, timed out or raised what ends an
        interpreter) while cells of its chain were still to run: their ids, in
        order; empty otherwise.  Set by :mod:`snipcheck.engine.chain_job`; such
        a result is never cached (:func:`snipcheck.judge.compare.outcome_problem`).
    :param stopped_by_output: whether the run was stopped because its output
        passed the output limit by the limit again, at least 1 MiB
        (:class:`snipcheck.run.channel.Sink`): ``truncated_bytes`` is then
        exactly that margin, and how the run would have ended is unknown
        (``exit_status``, ``signal`` and ``exception`` are ``None``).
    :param forged: what the run's process did to mark the end of a cell
        itself (a sentence, e.g. ``"asked for a cell after the last one
        (...)"``), ``""`` if nothing: a cell's output must come from its own
        code, so the run was stopped there, and how it would have ended is
        unknown.  Such a result fails (:func:`snipcheck.judge.compare.outcome_problem`)
        and is never cached.
    :param limit: for a run stopped at its timeout, the limit it reached:
        ``"cpu"``, the CPU seconds of its processes (its ``timeout``), or
        ``"wall"``, the wall-clock cap of a run that waits
        (:data:`snipcheck.run.cputime.WALL_FACTOR` times as many seconds);
        ``""`` otherwise.
    :param cpu: CPU seconds its processes used, where the runner could tell
        (``None`` otherwise, and for results cached before it was kept).
    """

    events: tuple[Event, ...]
    exit_status: int | None
    signal: str | None
    exception: ExceptionInfo | None
    duration: float
    timed_out: bool
    truncated_bytes: int
    stamp: Stamp
    runner: str
    output_limit: int = 0
    seed: int | None = None
    figures: tuple[Figure, ...] = ()
    ended_chain: tuple[str, ...] = ()
    stopped_by_output: bool = False
    forged: str = ""
    limit: str = ""
    cpu: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain-data form for the cache and reports (figures' bytes in base64)."""
        data = dataclasses.asdict(dataclasses.replace(self, figures=()))
        data["figures"] = [f.to_json() for f in self.figures]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        """Inverse of :meth:`to_json`.

        :raises KeyError, TypeError, ValueError: if ``data`` is not a valid
            record (a corrupt cache entry, for instance).
        """
        exc = data["exception"]
        return cls(
            events=tuple(Event(**e) for e in data["events"]),
            exit_status=data["exit_status"],
            signal=data["signal"],
            exception=ExceptionInfo(**exc) if exc is not None else None,
            duration=float(data["duration"]),
            timed_out=bool(data["timed_out"]),
            truncated_bytes=int(data["truncated_bytes"]),
            stamp=Stamp(**data["stamp"]),
            runner=str(data["runner"]),
            output_limit=int(data.get("output_limit", 0)),
            seed=data.get("seed"),
            figures=tuple(Figure.from_json(f) for f in data.get("figures", ())),  # older entries have none
            ended_chain=tuple(str(i) for i in data.get("ended_chain", ())),
            stopped_by_output=bool(data.get("stopped_by_output", False)),
            forged=str(data.get("forged", "")),
            limit=str(data.get("limit", "")),
            cpu=None if data.get("cpu") is None else float(data["cpu"]),
        )


@dataclass(frozen=True)
class Outcome:
    """What the executor has for a snippet: a result, or why there is none.

    :param result: the run result, or ``None`` when the snippet was not run.
    :param origin: ``"run"``, ``"cache"``, ``"not-run"`` (a requirement is
        missing) or ``"error"`` (the run could not start; see ``notes``).
    :param missing: requirements this build lacks (set when ``origin`` is
        ``"not-run"`` for a requirement): the snippet's own, or those of the
        earlier cell of its chain named by ``stopped_at``.  Requirements
        only: a cell stopped by a failure of its chain has none.
    :param notes: messages about the cache or the runner worth a warning.
    :param stopped: for a cell not run because an earlier cell of its chain
        did not let the chain go on (it failed, timed out or ended the
        process): a sentence saying so, naming that cell; ``""`` otherwise.
        A cell not run for a missing requirement (its own, or an earlier
        cell's) is not stopped: this environment cannot run it.
    :param stopped_at: for a cell of a chain not run because of an earlier
        cell (one that did not let the chain go on, see ``stopped``, or one
        whose requirement this build lacks, see ``missing``): that cell's
        id; ``""`` otherwise.
    """

    result: RunResult | None
    origin: str
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    stopped: str = ""
    stopped_at: str = ""
