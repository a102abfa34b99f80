"""Run results made by hand, to judge against a stated output: shared by the
judge tests (``judge/test_compare.py``, ``judge/test_wildcards.py``).

Not a test module: test modules import it, never each other.  Imports
snipcheck's model only.
"""

from __future__ import annotations

from snipcheck.model import Event, ExceptionInfo, RunResult, Stamp

STAMP = Stamp(python="3.11.7", torch="2.13.0+cpu", device="CPU", platform="Linux x86_64")


def result(*events: tuple[str, str, str], exception: ExceptionInfo | None = None, status: int | None = 0,
           timed_out: bool = False, truncated: int = 0, limit: int = 1 << 20) -> RunResult:
    """A subprocess run's result: ``events`` as ``(stream, kind, text)``, in order."""
    return RunResult(
        events=tuple(Event(*e) for e in events),
        exit_status=status,
        signal=None,
        exception=exception,
        duration=0.25,
        timed_out=timed_out,
        truncated_bytes=truncated,
        stamp=STAMP,
        runner="subprocess",
        output_limit=limit,
    )


def out(text: str) -> tuple[str, str, str]:
    """An event of ``text`` on stdout, for :func:`result`."""
    return ("stdout", "text", text)
