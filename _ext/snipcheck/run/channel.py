"""The capture channel of one run: two datagram sockets into one receiving socket.

The run's file descriptors 1 and 2 are two ``AF_UNIX`` datagram sockets, both
connected to one receiving socket of the parent.  Each ``write(2)`` to either
one, by the snippet's Python code, by C code or by any process it starts, is
queued as one datagram on the receiving socket, so the parent reads every
write in the order the kernel accepted it, and ``recvfrom`` names the sending
socket: stdout or stderr.  That is the order a terminal shows, whatever the
load of the machine; reading two pipes in turn cannot give it.  Writes from
Python are labelled further by the child (``bootstrap/_snipcheck_child.py``):
warnings, the traceback of the uncaught exception, and the exception's type
and message come as *frames* on stderr, prefixed with a per-run random token.
Anything else that reaches the receiving socket (from an unknown address) is
ignored.

Limits of the channel: the kernel queues a datagram only whole, so a single
``write(2)`` larger than the send buffer (about 4 MiB as root; twice
``net.core.wmem_max`` otherwise) fails with ``EMSGSIZE``/``ENOBUFS``.  Python's
own ``sys.stdout``/``sys.stderr`` split their writes into 64 KiB pieces; C
code or a child process writing more than that in one call would see the
error.  A receiving socket queues at most ``net.unix.max_dgram_qlen`` unread
datagrams (10 by default; raised where the sockets can be made in a network
namespace of their own, see :func:`snipcheck.run.sandbox.capture_network`):
a writer then waits (or, in non-blocking mode, gets ``EAGAIN``).  Descriptors 1 and 2 are sockets (``S_ISSOCK``), where a terminal
run has a terminal and ``python file.py > out`` a file.

The output cap is enforced here, on whatever arrives: bytes beyond it are
counted, never kept; once the bytes beyond it pass the cap again (the
*margin*; at least :data:`MARGIN_FLOOR`, so that a small limit still counts
a modest overflow exactly), the sink is :attr:`Sink.full` and the reader stops reading: the
run is stopped (:func:`snipcheck.run.capture.run_captured_cells`), so the
parent's work, like its memory, is bounded by the limit and not by what a
snippet writes (a 2 GB flood took three minutes of the parent's CPU to
count).  The point is deterministic: the same writes always fill a sink at
the same byte, and what came after it is neither read nor counted.

Figures (``F``/``f``/``E`` frames: an image's start, its bytes, its end; see
``bootstrap/_snipcheck_child.py``) are put together here and take their place
in the output as a ``figure`` event, whose text is the figure's placeholder
line (:meth:`snipcheck.model.Figure.placeholder`); their bytes do not count
towards the output cap but towards :data:`FIGURE_LIMIT`.  An image file sent
twice with the same bytes (after a cell of a chain, then at the run's end) is
kept once.

Pure core: standard library, :mod:`snipcheck.model`, :mod:`snipcheck.rawbytes`.
"""

from __future__ import annotations

import mmap
import os
import secrets
import socket
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

from snipcheck.model import Event, ExceptionInfo, Figure
from snipcheck.png import size as png_size
from snipcheck.rawbytes import from_bytes
from snipcheck.run.sandbox import capture_network

LABELS = {
    b"w": ("stderr", "warning"),
    b"t": ("stderr", "traceback"),
}
#: Send buffer asked for on descriptors 1 and 2: the largest single write
#: (the kernel cannot queue a datagram beyond about 4 MiB in any case).
_SNDBUF = (4 << 20) + (256 << 10)
_SO_SNDBUFFORCE = 32
#: Length of the per-run frame token, in bytes.
TOKEN_BYTES = 16
#: Bytes of figures kept per run; a figure beyond it is shown as not kept.
FIGURE_LIMIT = 64 << 20
#: The least margin of a sink: bytes counted beyond its limit before the run is stopped.
MARGIN_FLOOR = 1 << 20
#: Figure kind of an ``F`` frame's source: shown (``plt.show()``) or a saved file.
FIGURE_SOURCES = ("show", "file")


class Sink:
    """Collects chunks per (stream, kind), merging neighbours, under a byte cap.

    :param limit: bytes kept; what comes after is counted in :attr:`dropped`.
    :param margin: bytes counted beyond the limit before the sink is
        :attr:`full` (default: the limit again, at least :data:`MARGIN_FLOOR`).
    """

    def __init__(self, limit: int, margin: int | None = None) -> None:
        self.limit = limit
        self.margin = max(limit, MARGIN_FLOOR) if margin is None else margin
        self.kept = 0
        self.dropped = 0
        #: Whether more than ``margin`` bytes came beyond the limit: the run is
        #: to be stopped, and :attr:`dropped` stays at exactly ``margin``.
        self.full = False
        self.chunks: list[tuple[tuple[str, str], bytearray]] = []
        self.figures: list[Figure] = []

    def add_figure(self, figure: Figure) -> None:
        """Keep ``figure`` as the next output event (its placeholder line, on a
        line of its own); it is numbered by its place among this sink's figures."""
        self.figures.append(figure)
        text = figure.placeholder(len(self.figures)) + "\n"
        if self.chunks and not self.chunks[-1][1].endswith(b"\n"):
            text = "\n" + text
        self.chunks.append((("stdout", "figure"), bytearray(text.encode("utf-8"))))

    def add(self, where: tuple[str, str], data: bytes | memoryview) -> None:
        """Keep ``data`` as output of ``where`` = ``(stream, kind)``, within the cap
        (never splitting a UTF-8 sequence)."""
        if self.full:
            return
        room = self.limit - self.kept
        if room <= 0:
            self._drop(len(data))
            return
        if len(data) > room:
            cut = room
            # Do not split a UTF-8 sequence: back off to a character boundary.
            while cut > 0 and (data[cut] & 0xC0) == 0x80:
                cut -= 1
            self._drop(len(data) - cut)
            data = data[:cut]
            self.kept = self.limit
        else:
            self.kept += len(data)
        if not len(data):
            return
        if self.chunks and self.chunks[-1][0] == where and where[1] != "figure":
            self.chunks[-1][1].extend(data)
        else:
            self.chunks.append((where, bytearray(data)))

    def merge(self, other: Sink) -> None:
        """Append what ``other`` kept and counted (its figures renumbered after these)."""
        figures = iter(other.figures)  # the n-th figure chunk is the n-th figure
        for where, data in other.chunks:
            if where[1] == "figure":
                self.add_figure(next(figures))
            elif self.chunks and self.chunks[-1][0] == where:
                self.chunks[-1][1].extend(data)
            else:
                self.chunks.append((where, bytearray(data)))
        self.kept += other.kept
        self.dropped += other.dropped
        self.full = self.full or other.full

    def _drop(self, size: int) -> None:
        self.dropped += size
        if self.dropped > self.margin:
            self.dropped = self.margin
            self.full = True

    def events(self, rewrite: Mapping[str, str]) -> tuple[Event, ...]:
        """The kept chunks as events, decoded (invalid UTF-8 as ``\\x{NN}``,
        never the same text as printed text: :mod:`snipcheck.rawbytes`), with
        the exact substrings of ``rewrite`` replaced."""
        out = []
        for (stream, kind), data in self.chunks:
            text = from_bytes(data)
            for old, new in rewrite.items():
                text = text.replace(old, new)
            out.append(Event(stream, kind, text))
        return tuple(out)


class Channel:
    """The receiving socket and the two sending sockets of one run.

    ``senders[0]`` and ``senders[1]`` become the run's descriptors 1 and 2; the
    parent closes its copies once the run holds them.

    :raises OSError: if the sockets cannot be created.
    """

    def __init__(self) -> None:
        self.senders: list[socket.socket] = []
        self._dir: str | None = None
        with capture_network() as long_queue:
            self.receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._open()
        #: Seconds to let a chatty writer fill a long queue before reading it
        #: again: one wake-up per batch instead of one per write.
        self.batch = 0.0005 if long_queue else 0.0

    def _open(self) -> None:
        try:
            self.receiver.bind(self._address())
            self.receiver.setblocking(False)
            address = self.receiver.getsockname()
            for _ in range(2):
                sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self.senders.append(sender)
                if sys.platform.startswith("linux"):
                    sender.bind(b"")  # autobind: a unique abstract address names the stream
                else:
                    sender.bind(self._address())
                _grow_send_buffer(sender)
                sender.connect(address)
            self.stdout_address = self.senders[0].getsockname()
            self.stderr_address = self.senders[1].getsockname()
            # A datagram never exceeds its sender's send buffer.
            largest = max(s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) for s in self.senders)
            self.buffer = mmap.mmap(-1, largest + 4096)  # untouched pages cost nothing
            self.view = memoryview(self.buffer)
        except BaseException:
            self.close()
            raise

    def _address(self) -> str | bytes:
        if sys.platform.startswith("linux"):
            return b"\0snipcheck-" + secrets.token_hex(12).encode()
        import tempfile

        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="snipcheck-sock-")
        return os.path.join(self._dir, secrets.token_hex(4))

    def close(self) -> None:
        """Close every socket and the receive buffer."""
        for s in (self.receiver, *self.senders):
            s.close()
        view = getattr(self, "view", None)
        if view is not None:
            view.release()
        buffer = getattr(self, "buffer", None)
        if buffer is not None:
            try:
                buffer.close()
            except BufferError:
                pass  # a view is still alive somewhere; the mapping goes with it
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)


def _grow_send_buffer(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_SNDBUFFORCE, _SNDBUF)  # root: beyond net.core.wmem_max
    except OSError:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SNDBUF)
        except OSError:
            pass


def empty_stdin() -> int:
    """The read end of a pipe whose write end is closed: reads get end-of-file at once.

    Not ``/dev/null``: where that is not the null device (seen on a test
    machine: a regular file holding what some ``2>/dev/null`` wrote last), a
    snippet reading stdin would read that.
    """
    read, write = os.pipe()
    os.close(write)
    return read


@dataclass(frozen=True)
class Cell:
    """A cell of a chain that ended and let the chain go on (:meth:`Reader.end_cell`).

    :param sink: its output.
    :param exception: the exception it raised (one its tags expect), if any.
    :param status: 0, or 1 when it raised.
    :param seconds: how long its code ran, as the child measured it.
    :param received: ``time.monotonic()`` when its end was reported (the next cell began).
    """

    sink: Sink
    exception: ExceptionInfo | None
    status: int
    seconds: float
    received: float


class Reader:
    """Reads the receiving socket into a :class:`Sink`, telling frames from output.

    For a chain, :meth:`end_cell` ends a cell where its supervisor said it
    ended (see :mod:`snipcheck.run.capture`): what came before is that
    cell's output (:attr:`cells`), and a new sink of the same limit takes
    what follows.  Nothing the run writes ends a cell: a ``c`` frame (the
    end-of-cell frame the runner once wrote on descriptor 2) is a forgery
    (:attr:`forged`), and the caller stops the run.

    Once its sink is :attr:`Sink.full` it reads nothing more
    (:attr:`flooded`): the caller stops the run.
    """

    def __init__(self, channel: Channel, sink: Sink, token: bytes) -> None:
        self.channel = channel
        self.sink = sink
        self.token = token
        self.exception: ExceptionInfo | None = None
        self.cells: list[Cell] = []
        #: Whether the current sink filled up: :meth:`drain` reads no more.
        self.flooded = False
        #: What the run did to end a cell itself (see above), ``""`` if nothing:
        #: :meth:`drain` reads no more.
        self.forged = ""
        #: The image being received: ``(source, format, name, bytes so far)``.
        self._image: tuple[str, str, str, bytearray] | None = None
        self._figure_bytes = 0
        self._saved: dict[str, bytes] = {}  # file name -> bytes, as last received

    def drain(self) -> int:
        """Read every datagram queued now (never blocks); return how many.

        Stops at the datagram that fills the sink (:attr:`flooded`), and
        reads nothing once it is."""
        if self.flooded or self.forged:
            return 0
        ch = self.channel
        receiver, buffer, view, sink = ch.receiver, ch.buffer, ch.view, self.sink
        out_addr, err_addr = ch.stdout_address, ch.stderr_address
        token, skip = self.token, len(self.token)
        stdout, stderr = ("stdout", "text"), ("stderr", "text")
        # Anything from another address (someone else's socket) is ignored.
        count = 0
        while True:
            try:
                size, address = receiver.recvfrom_into(buffer)
            except (BlockingIOError, InterruptedError):
                return count
            count += 1
            if address == out_addr:
                sink.add(stdout, view[:size])
            elif address == err_addr:
                if size > skip and view[:skip] == token:
                    # Frames are not output, but their text counts towards the cap.
                    self._frame(bytes(view[skip : skip + 1]), view[skip + 1 : size])
                    if self.forged:
                        return count
                else:
                    sink.add(stderr, view[:size])
            if sink.full:
                self.flooded = True
                return count

    def end_cell(self, status: int, seconds: float) -> None:
        """End the current cell here: its supervisor reported that it ended
        (``status`` 0, or 1 when it raised the exception it expects; ``seconds``
        its code ran) and asked for the next one."""
        self.cells.append(Cell(self.sink, self.exception, status, seconds, time.monotonic()))
        self.sink = Sink(self.sink.limit)
        self.exception = None

    def reopen(self, index: int) -> None:
        """Take the ends of cells ``index`` on back: what they and the current
        cell hold is cell ``index``'s output again (its end was forged).

        :raises ValueError: for an index of no cell that ended.
        """
        if not 0 <= index < len(self.cells):
            raise ValueError(index)
        merged = self.cells[index].sink
        for later in [cell.sink for cell in self.cells[index + 1 :]] + [self.sink]:
            merged.merge(later)
        self.exception = self.exception or self.cells[index].exception
        del self.cells[index:]
        self.sink = merged

    def _frame(self, label: bytes, payload: memoryview) -> None:
        if label == b"x":
            name, _, message = bytes(payload).partition(b"\0")
            self.exception = ExceptionInfo(
                name.decode("utf-8", "backslashreplace"), message.decode("utf-8", "backslashreplace")
            )
        elif label in LABELS:
            self.sink.add(LABELS[label], payload)
        elif label in (b"F", b"f", b"E"):
            self._image_frame(label, payload)
        elif label == b"c":
            self.forged = (
                "wrote an end-of-cell frame to descriptor 2, with the run's frame token read from the runner's memory"
            )

    def _image_frame(self, label: bytes, payload: memoryview) -> None:
        """One frame of an image (see the module docstring); a complete one
        becomes a figure of the current sink."""
        if label == b"F":
            raw_source, _, rest = bytes(payload).partition(b"\0")
            raw_fmt, _, raw_name = rest.partition(b"\0")
            if raw_source.decode("ascii", "replace") in FIGURE_SOURCES and raw_fmt in (b"png", b"svg"):
                self._image = (raw_source.decode(), raw_fmt.decode(), raw_name.decode("utf-8", "backslashreplace"), bytearray())
            else:
                self._image = None  # not a frame the child wrote
            return
        image = self._image
        if image is None:
            return
        if label == b"f":
            image[3].extend(payload)
            return
        self._image = None
        source, fmt, name, data = image
        try:
            complete = int(bytes(payload)) == len(data)
        except ValueError:
            complete = False
        if not complete:
            return
        if source == "file":
            if self._saved.get(name) == bytes(data):
                return  # sent after its cell, and again at the end of the run
            self._saved[name] = bytes(data)
        if self._figure_bytes + len(data) > FIGURE_LIMIT:
            self.sink.add_figure(Figure(fmt, b"", name if source == "file" else "", dropped=len(data)))
            return
        self._figure_bytes += len(data)
        size = png_size(data) if fmt == "png" else None
        width, height = size if size is not None else (None, None)
        self.sink.add_figure(Figure(fmt, bytes(data), name if source == "file" else "", width, height))
