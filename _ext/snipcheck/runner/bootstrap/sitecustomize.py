"""Child-side half of snipcheck's output capture (runs inside the snippet's process).

Python imports ``sitecustomize`` at start-up, before the snippet's first line,
so no frame of this module is on the stack while the snippet runs: tracebacks
and the forward-call stacks that anomaly detection prints look exactly as under
a plain ``python snippets/x.py``.

It replaces ``sys.stdout`` and ``sys.stderr`` with text streams that write
labelled frames to one pipe (the file descriptor in ``SNIPCHECK_FRAME_FD``), so
the parent sees Python-level output of both streams in its true order.  Output
written straight to file descriptors 1 and 2 (by C++ code, or by child
processes) still reaches the parent through its own pipes.

Frame: one label byte, a 4-byte big-endian length, then at most
``PIPE_BUF - 5`` bytes of payload, written with a single ``write(2)`` so frames
from several writers never interleave.  Labels: ``o`` stdout, ``e`` stderr,
``w`` a warning (stderr), ``t`` the traceback of the uncaught exception
(stderr), ``x`` the exception's type and message as JSON (not shown).

Only the standard library may be used here: this runs in the snippet's
interpreter, which may be any Python with any packages.
"""

import io
import os
import sys
import threading

_FD_VAR = "SNIPCHECK_FRAME_FD"


def _install() -> None:
    fd = int(os.environ.pop(_FD_VAR))
    os.set_inheritable(fd, False)
    here = os.path.dirname(os.path.abspath(__file__))
    # Leave no trace in what the snippet can see.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    original = os.environ.pop("SNIPCHECK_ORIGINAL_PYTHONPATH", None)
    if original:
        os.environ["PYTHONPATH"] = original
    else:
        os.environ.pop("PYTHONPATH", None)

    state = threading.local()
    max_payload = 4096 - 5  # PIPE_BUF on Linux is 4096: writes up to it are atomic.

    def send(label: bytes, data: bytes) -> None:
        for start in range(0, len(data), max_payload):
            chunk = data[start : start + max_payload]
            os.write(fd, label + len(chunk).to_bytes(4, "big") + chunk)

    class FramedRaw(io.RawIOBase):
        def __init__(self, label: bytes, fileno: int) -> None:
            super().__init__()
            self._label = label
            self._fileno = fileno

        def writable(self) -> bool:
            return True

        def fileno(self) -> int:
            return self._fileno

        def isatty(self) -> bool:
            return False

        def write(self, data) -> int:  # type: ignore[override]
            data = bytes(data)
            if data:
                send(getattr(state, "label", None) or self._label, data)
            return len(data)

    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        FramedRaw(b"o", 1), encoding="utf-8", errors="strict", write_through=True
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        FramedRaw(b"e", 2), encoding="utf-8", errors="backslashreplace", write_through=True
    )

    import warnings

    show = warnings._showwarnmsg_impl  # type: ignore[attr-defined]

    def labelled_show(msg):  # type: ignore[no-untyped-def]
        state.label = b"w"
        try:
            show(msg)
        finally:
            state.label = None

    warnings._showwarnmsg_impl = labelled_show  # type: ignore[attr-defined]

    hook = sys.excepthook

    def labelled_hook(etype, value, tb):  # type: ignore[no-untyped-def]
        module = getattr(etype, "__module__", "builtins")
        name = etype.__qualname__ if module in ("builtins", "__main__") else f"{module}.{etype.__qualname__}"
        try:
            message = str(value)
        except Exception:  # noqa: BLE001 - a broken __str__ must not hide the traceback
            message = "<unprintable>"
        import json

        send(b"x", json.dumps({"type": name, "message": message}).encode("utf-8"))
        state.label = b"t"
        try:
            hook(etype, value, tb)
        finally:
            state.label = None

    sys.excepthook = labelled_hook
    _chain(here)


def _chain(here: str) -> None:
    """Run the interpreter's own sitecustomize, if it has one, as Python would have."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None or not spec.origin:
        return
    if os.path.dirname(os.path.abspath(spec.origin)) == here:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if _FD_VAR in os.environ:
    _install()
