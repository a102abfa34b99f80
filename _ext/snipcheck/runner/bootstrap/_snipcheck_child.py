"""Child-side half of snipcheck's output capture, shared by both Python runners.

:func:`install_capture` replaces ``sys.stdout`` and ``sys.stderr`` with text
streams that write labelled frames to one pipe, so the parent sees the
Python-level output of both streams in its true order.  Output written straight
to file descriptors 1 and 2 (by C++ code, or by child processes) still reaches
the parent through its own pipes.

Frame: one label byte, a 4-byte big-endian length, then at most
``PIPE_BUF - 5`` bytes of payload, written with a single ``write(2)`` so frames
from several writers never interleave.

Order across pipes: before writing a frame, the child waits (briefly) until
the parent has read everything pending on file descriptors 1 and 2
(``FIONREAD`` works on a pipe's write end).  Output written straight to the
descriptors therefore always reaches the parent before any later Python-level
output; the parent's epoll reports pipes in the order they became readable, so
earlier frames come before later raw output too.  Labels: ``o`` stdout, ``e`` stderr,
``w`` a warning (stderr), ``t`` the traceback of the uncaught exception
(stderr), ``x`` the exception's type and message as JSON (not shown).

Only the standard library may be used here: this runs in the snippet's
interpreter, which may be any Python with any packages.
"""

import fcntl
import io
import json
import os
import sys
import termios
import threading
import time
import warnings

_state = threading.local()
_MAX_PAYLOAD = 4096 - 5  # PIPE_BUF on Linux is 4096: writes up to it are atomic.


def install_capture(fd: int) -> None:
    """Route ``sys.stdout``/``sys.stderr``, warnings and the uncaught-exception
    traceback through labelled frames on file descriptor ``fd``."""
    os.set_inheritable(fd, False)

    def pending(target: int) -> int:
        try:
            return int.from_bytes(fcntl.ioctl(target, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
        except OSError:
            return 0

    def drained() -> None:
        """Wait until the parent has read fd 1 and 2 (at most half a second)."""
        deadline = 0.0
        while pending(1) or pending(2):
            now = time.monotonic()
            if not deadline:
                deadline = now + 0.5
            elif now > deadline:
                return
            time.sleep(0.00002)

    def send(label: bytes, data: bytes) -> None:
        drained()
        for start in range(0, len(data), _MAX_PAYLOAD):
            chunk = data[start : start + _MAX_PAYLOAD]
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
                send(getattr(_state, "label", None) or self._label, data)
            return len(data)

    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        FramedRaw(b"o", 1), encoding="utf-8", errors="strict", write_through=True
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        FramedRaw(b"e", 2), encoding="utf-8", errors="backslashreplace", write_through=True
    )

    show = warnings._showwarnmsg_impl  # type: ignore[attr-defined]

    def labelled_show(msg):  # type: ignore[no-untyped-def]
        _state.label = b"w"
        try:
            show(msg)
        finally:
            _state.label = None

    warnings._showwarnmsg_impl = labelled_show  # type: ignore[attr-defined]

    hook = sys.excepthook

    def labelled_hook(etype, value, tb):  # type: ignore[no-untyped-def]
        module = getattr(etype, "__module__", "builtins")
        name = etype.__qualname__ if module in ("builtins", "__main__") else f"{module}.{etype.__qualname__}"
        try:
            message = str(value)
        except Exception:  # noqa: BLE001 - a broken __str__ must not hide the traceback
            message = "<unprintable>"
        send(b"x", json.dumps({"type": name, "message": message}).encode("utf-8"))
        _state.label = b"t"
        try:
            hook(etype, value, tb)
        finally:
            _state.label = None

    sys.excepthook = labelled_hook
