"""Child-side half of snipcheck's capture, shared by both Python runners.

The parent gives the snippet's process two ``AF_UNIX`` datagram sockets as
file descriptors 1 and 2, both connected to one receiving socket.  Every
``write(2)`` to either descriptor, from Python, from C code or from a child
process, becomes one datagram in that one receive queue, in the order the
kernel accepted the writes; the parent tells stdout from stderr by the sending
socket's address.  Nothing here is needed for that: it holds for every
process that inherits the descriptors.

What this module adds, for Python-level output only:

* ``sys.stdout``/``sys.stderr`` are rebuilt exactly as the interpreter builds
  them for a terminal (same encoding and errors: ``surrogateescape`` on
  stdout, ``backslashreplace`` on stderr under ``C.UTF-8``; newline, ``name``,
  ``mode``; both line-buffered text streams over buffered writers of the
  terminal's block size, :data:`TTY_BUFFER`), since descriptors 1 and 2 are
  sockets, for which the interpreter would buffer stdout by blocks: so text
  reaches the page when a terminal would show it (a line at its newline, a
  partial line at the next flush, never one that ``os._exit`` drops), and C
  code's ``stdout`` is made line-buffered as on a terminal (:func:`c_line_buffering`).
  The raw layer is an :class:`io.FileIO` subclass that splits writes into
  pieces of at most 64 KiB, so that one ``print`` of many megabytes does not
  exceed the largest datagram the kernel accepts.
* Labels: text that the ``warnings`` module shows, and what the interpreter
  itself writes after an uncaught exception (the traceback), are sent as
  *frames* on descriptor 2: ``TOKEN + label + payload``, where ``TOKEN`` is a
  random per-run secret, so no output of the snippet can be mistaken for a
  frame.  Labels: ``w`` a warning, ``t`` the traceback, ``x`` the uncaught
  exception's qualified type and message (``type NUL message``; not shown).
  Frames are written only while descriptor 2 is still the run's socket; a
  snippet that closed or redirected it gets exactly what plain Python does.
* Cells: a chain of snippets runs in one process, cell after cell
  (``_snipcheck_main.run_cells``).  Where one cell ends is not a frame: the
  supervisor hands each cell over and hears on a socket of its own when the
  next one is wanted (``_snipcheck_supervise.Cells``), so nothing written to
  descriptors 1 and 2 can end a cell; the build takes a ``c`` frame (the
  end-of-cell frame of old) for a forgery and refuses the run.
* An audit hook (:func:`sys.addaudithook`) sees the ``sys.excepthook`` event
  that the interpreter raises before it reports an uncaught exception, with
  whatever hook the snippet installed: it sends the ``x`` frame, marks what
  follows as the traceback, and removes this module's frames from the
  traceback so that it reads as under plain ``python file.py``.

* Figures: images travel as three kinds of frame, since one image is
  larger than a datagram: ``F`` begins one (``source NUL format NUL name``:
  source ``show`` or ``file``, format ``png`` or ``svg``, the file name for a
  saved one), ``f`` frames carry its bytes in order, ``E`` ends it (its length
  in bytes, in decimal; the parent drops an image whose length differs).
  Where the snippet imports matplotlib (the audit hook sees the first
  ``import`` event of it), :func:`watch_matplotlib` selects the Agg backend
  and makes ``plt.show()`` send every open figure as a PNG, then close it
  (:func:`capture_show`), so a figure has its place in the output; image
  files the run leaves in its working directory are sent by its supervisor
  after it ends (:func:`new_images`, :func:`send_image`), and by
  ``_snipcheck_main.run_cells`` after each cell of a chain.

Nothing else of the process is changed: no hook, handler or module of the
snippet's view is replaced (until it imports matplotlib).  Only the standard
modules loaded at every interpreter start-up are used (``io``, ``os``,
``sys``; and ``zlib`` for a figure, which pyplot has loaded by then), so
importing this module adds nothing to ``sys.modules`` but itself.
"""

import io
import os
import sys

#: Largest piece written at once (a datagram; the kernel's limit is ~4 MiB).
CHUNK = 1 << 16


def tty_buffer_size():
    """The buffer size a fresh interpreter gives its stdout and stderr on a
    terminal: the terminal's ``st_blksize``, as :func:`io.open` reads it
    (1024 on Linux), found on a pseudo-terminal opened and closed here;
    where none can be opened, Linux's (or :data:`io.DEFAULT_BUFFER_SIZE`)."""
    fallback = 1024 if sys.platform.startswith("linux") else io.DEFAULT_BUFFER_SIZE
    try:
        master, slave = os.openpty()
    except (OSError, AttributeError):
        return fallback
    try:
        size = os.fstat(slave).st_blksize
    except OSError:
        size = 0
    finally:
        os.close(master)
        os.close(slave)
    return size if size > 1 else fallback


#: Worked out once per process that imports this module (the fork server: once for all runs).
TTY_BUFFER = tty_buffer_size()
#: ``setvbuf(3)``'s line-buffered mode (glibc, musl, macOS).
_IOLBF = 1


def c_line_buffering(ctypes, libc):
    """A function that makes C's ``stdout`` line-buffered, as a terminal run
    has it (C stdio buffers a socket by blocks), to be called before C code
    writes to it; ``None`` where libc's ``stdout`` cannot be found.

    :param ctypes: the ``ctypes`` module; :param libc: ``ctypes.CDLL(None)``.
    """
    for name in ("stdout", "__stdoutp"):  # glibc and musl; macOS
        try:
            stream = ctypes.c_void_p.in_dll(libc, name).value
            setvbuf = libc.setvbuf
        except (ValueError, AttributeError):
            continue
        setvbuf.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t)
        setvbuf.restype = ctypes.c_int

        def line_buffer(setvbuf=setvbuf, stream=stream):
            setvbuf(stream, None, _IOLBF, 0)

        return line_buffer
    return None

#: Code objects whose frames count as "the interpreter itself" (the fork
#: runner's exit sequence adds its own) and are cut from tracebacks.
OWN_CODES = set()
#: Once :func:`install` ran: ``send(label, data) -> bool`` writes one frame
#: (``False`` when descriptor 2 is no longer the run's socket), ``ours() ->
#: bool`` says whether it still is, ``new_cell()`` starts a chain's next cell.
_sender = {}


def send_frame(label, data):
    """Write a frame (see the module docstring); ``False`` if it cannot be written."""
    send = _sender.get("send")
    return bool(send is not None and send(label, data))


def frames_ok():
    """Whether frames can still be written (descriptor 2 is the run's socket)."""
    ours = _sender.get("ours")
    return bool(ours is not None and ours())


def new_cell():
    """A chain's next cell begins: what the interpreter writes now is not the
    last cell's traceback."""
    begin = _sender.get("new_cell")
    if begin is not None:
        begin()


#: What a seeded run seeds, when each module is loaded (or at once, if it is):
#: name → (the modules that must be fully imported first, how to seed it).
#: numpy's generator lives in ``numpy.random``, which numpy imports lazily:
#: seeding it through ``numpy.random`` while that import is under way (it
#: imports ``random``, whose own load seeds what is loaded) would start the
#: import again, without end.
SEEDED = {
    "random": (("random",), lambda module, seed: module.seed(seed)),
    "numpy": (("numpy", "numpy.random"), lambda module, seed: module.random.seed(seed)),
    "torch": (("torch",), lambda module, seed: module.manual_seed(seed)),
}
#: The modules whose load may complete what :data:`SEEDED` needs.
SEED_TRIGGERS = frozenset(name for needs, _ in SEEDED.values() for name in needs)


def _imported(name):
    """Whether module ``name`` is loaded and its import has finished."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return spec is not None and not getattr(spec, "_initializing", False)


def seed_on_import(seed):
    """Seed Python's ``random``, numpy's global generator and torch's default
    generators with ``seed``: those already loaded now, the others when they
    are first imported (the import machinery's ``_find_and_load`` is
    wrapped), so the snippet's first random number is the same on every run.
    ``numpy.random.default_rng()`` without a seed, ``os.urandom`` and
    ``secrets`` draw from the OS and are not covered."""
    bootstrap = sys.modules["_frozen_importlib"]
    done = set()

    def seed_loaded():
        for name, (needs, apply) in SEEDED.items():
            if name in done or not _imported(name):
                continue
            if name == "numpy" and "numpy.random" not in sys.modules:
                try:
                    __import__("numpy.random")  # numpy loaded: its generator is a plain import away
                except ImportError:
                    continue
            if not all(_imported(n) for n in needs):
                continue  # still being imported: the end of its import seeds it
            try:
                apply(sys.modules[name], seed)
            except AttributeError:
                continue
            done.add(name)

    inner = bootstrap._find_and_load

    def find_and_load(name, import_):
        module = inner(name, import_)
        if name in SEED_TRIGGERS and len(done) < len(SEEDED):
            seed_loaded()
        return module

    OWN_CODES.add(find_and_load.__code__)
    bootstrap._find_and_load = find_and_load
    seed_loaded()


class _Capture:
    """What :func:`install` sets up in the run's process: the frames on
    descriptor 2, the labels of what is written there, and the audit hook.

    :param ours: ``() -> bool``: whether descriptor 2 is still the run's socket.
    :param frame: ``(label, data) -> bool`` writes a frame (``False`` if it cannot).
    :param on_run_file: called once at the ``cpython.run_file`` audit event, if given.
    """

    def __init__(self, ours, frame, on_run_file):
        self.ours = ours
        self.frame = frame
        self.uncaught = False
        self.run_file = on_run_file
        self.matplotlib = False
        # the stage of removing this module's frames from an "Exception
        # ignored" report the interpreter prints (see cut_report)
        self.cut = None

    def new_cell(self):
        """A chain's next cell begins: what the interpreter writes now is not a traceback."""
        self.uncaught = False

    def label_of_caller(self):
        """``(label, text)`` for a write to stderr, by its caller's frame: the
        label ``b"w"``, ``b"t"`` or ``None``, and for a warning the text the
        ``warnings`` module is writing (``None`` otherwise)."""
        try:
            caller = sys._getframe(3)  # under FileIO.write and _snipcheck_labelled
        except ValueError:
            caller = None
        if caller is None or caller.f_code in OWN_CODES:
            return (b"t" if self.uncaught else None), None
        code = caller.f_code
        if code.co_name == "_showwarnmsg_impl" and caller.f_globals.get("__name__") == "warnings":
            return b"w", caller.f_locals.get("text")
        return None, None

    def cut_report(self, data):
        """``data`` without the traceback block of an "Exception ignored"
        report whose frames are all this module's (armed by the audit hook):
        the interpreter's final flush of a broken stdout fails in
        :class:`FileIO`, where plain python's fails in C and shows no
        traceback.  The report comes line by line (stderr is line-buffered)."""
        out = []
        for line in data.splitlines(keepends=True):
            stage = self.cut
            if stage == "armed":
                self.cut = "header" if b"Exception ignored" in line else None
            elif stage == "header":
                if line == b"Traceback (most recent call last):\n":
                    self.cut = "traceback"
                    continue
                self.cut = None
            elif stage == "traceback":
                if line.startswith(b"  "):
                    continue
                self.cut = None
            out.append(line)
        return b"".join(out)

    def audit(self, event, args):
        """The audit hook (see the module docstring)."""
        if event == "sys.excepthook":
            if len(args) == 4 and _reported_uncaught(args[2]):
                self.excepthook(*args)
        elif event == "sys.unraisablehook":
            hook, unraisable = args
            tb = getattr(unraisable, "exc_traceback", None)
            strip(getattr(unraisable, "exc_value", None), tb)
            if hook is sys.__unraisablehook__ and tb is not None and tb.tb_next is None and tb.tb_frame.f_code in OWN_CODES:
                self.cut = "armed"
        elif event == "cpython.run_file" and self.run_file is not None:
            hook, self.run_file = self.run_file, None
            hook()
        elif event == "import" and not self.matplotlib and args[0].partition(".")[0] == "matplotlib":
            # Before its first import: the import machinery looks up
            # _find_and_load after this event, so the wrapper sees this import.
            self.matplotlib = True
            watch_matplotlib()

    def excepthook(self, hook, etype, value, tb):
        """The ``sys.excepthook`` event: an uncaught exception is about to be
        reported; send its ``x`` frame and label what follows as the traceback."""
        if hook is sys.__excepthook__:
            # Its first write is the traceback's: a partial line still in
            # the buffer goes out first (as it would with that write), unlabelled.
            try:
                sys.stderr.flush()
            except Exception:  # noqa: BLE001 - a stream the snippet broke: the hook meets it too
                pass
        self.uncaught = True
        strip(value, tb)
        module = getattr(etype, "__module__", "builtins")
        qualname = getattr(etype, "__qualname__", str(etype))
        name = qualname if module in ("builtins", "__main__") else module + "." + qualname
        try:
            message = str(value)
        except Exception:  # noqa: BLE001 - a broken __str__ must not hide the traceback
            message = "<unprintable>"
        self.frame(b"x", name.encode("utf-8", "backslashreplace") + b"\0" + message.encode("utf-8", "backslashreplace"))


#: The code of ``_snipcheck_main.report``, where the fork runner reports an uncaught exception (set there).
REPORT_CODES = set()


def _reported_uncaught(value):
    """Whether the ``sys.excepthook`` event now being audited is the report of
    an uncaught exception, ``value``: raised by the interpreter itself (no
    Python frame under the audit hook: ``python file.py`` at its end), or by
    ``_snipcheck_main.report`` called by one of the runner's own functions
    that holds ``value`` (the exception it caught).  Not one that the
    snippet raised itself (``sys.audit("sys.excepthook", ...)``, or a call of
    ``report`` from its code, or from a callback of its that the runner's code
    set off): that would claim an exception the snippet never let escape, and
    an ``expect`` tag would take it for one.
    """
    try:
        caller = sys._getframe(2)  # 0: this function, 1: the hook (audit), 2: what raised the event
    except ValueError:
        return True
    if caller.f_code not in REPORT_CODES:
        return False
    outer = caller.f_back
    if outer is None or outer.f_code not in OWN_CODES or outer.f_code in REPORT_CODES:
        return False
    return any(local is value for local in outer.f_locals.values())


#: The run's :class:`_Capture` (set by :func:`install`), for :class:`_FileIO`.
_capture = {"c": None}


class _FileIO(io.FileIO):
    """The raw layer of the rebuilt streams: ``io.FileIO`` for descriptor 1
    or 2 that writes in pieces (and labels stderr through the run's
    :class:`_Capture`).  Made once, where this module is imported (the fork
    server), not in every run."""

    def write(self, b):
        data = bytes(b)
        if not self._snipcheck_err:
            return self._snipcheck_plain(data)
        called = self._snipcheck_label()  # here: label_of_caller counts the frames above this one
        if _held["on"]:  # a notebook's cell: after its stdout (see hold_stderr)
            _held["items"].append(lambda: self._snipcheck_err_write(data, called))
            return len(data)
        return self._snipcheck_err_write(data, called)

    def _snipcheck_label(self):
        return _capture["c"].label_of_caller()  # two frames under the caller of write, as it counts

    def _snipcheck_err_write(self, data, called=None):
        capture = _capture["c"]
        if capture.cut is not None:
            size, data = len(data), capture.cut_report(data)
            written = self._snipcheck_labelled(data, called) if data else 0
            return size if written == len(data) else written
        return self._snipcheck_labelled(data, called)

    def _snipcheck_labelled(self, data, called=None):
        """Write to stderr: a warning's or the traceback's text as a frame
        (``called``: the label worked out when it was written, if it was held)."""
        capture = _capture["c"]
        label, text = called if called is not None else capture.label_of_caller()
        if label == b"w" and isinstance(text, str):
            # The buffer may hold a partial line written before the
            # warning: that goes out first, unlabelled, then the warning.
            try:
                encoded = text.encode(*self._snipcheck_codec)
            except (UnicodeError, LookupError, TypeError):
                encoded = b""
            if encoded and len(data) > len(encoded) and data.endswith(encoded) and capture.ours():
                head = len(data) - len(encoded)
                written = self._snipcheck_plain(data[:head])
                if written != head:
                    return written
                capture.frame(label, data[head:])
                return len(data)
        if label is not None and capture.frame(label, data):
            return len(data)
        return self._snipcheck_plain(data)

    def _snipcheck_plain(self, data):
        if len(data) <= CHUNK:
            return io.FileIO.write(self, data)
        view = memoryview(data)
        done = 0
        while done < len(data):
            n = io.FileIO.write(self, view[done : done + CHUNK])
            if n is None:
                return done or None
            done += n
        return done


_FileIO.__module__ = "_io"
_FileIO.__qualname__ = _FileIO.__name__ = "FileIO"
OWN_CODES.update(
    (_FileIO.write.__code__, _FileIO._snipcheck_plain.__code__, _FileIO._snipcheck_labelled.__code__,
     _FileIO._snipcheck_err_write.__code__, _FileIO._snipcheck_label.__code__, _Capture.cut_report.__code__)
)


#: A notebook's cell (:func:`hold_stderr`): whether what it writes to
#: ``sys.stderr`` is held, and the writes held, in order.
_held = {"on": False, "items": []}


def hold_stderr(on):
    """Hold what a notebook's cell writes to ``sys.stderr`` (``on``) until its
    next display or its end, as ipykernel does: a kernel buffers a cell's
    streams and, before each display (a figure shown, the value of its last
    expression) and at the cell's end, sends what it printed to stdout, then
    what it wrote to stderr.  So the run shows a cell's output in the order
    Jupyter stores it.  ``False`` writes what is held (:func:`release_held`)
    and holds no more.  What C code writes to descriptor 2 is never held (a
    kernel does not capture it at all)."""
    if not on:
        release_held()  # also what plain python's flush_io() does after the script's code
    _held["on"] = bool(on)


def release_held():
    """Write what :func:`hold_stderr` holds, after flushing ``sys.stdout``
    (and ``sys.stderr``'s buffer, into what is held)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream the snippet broke
            pass
    items, _held["items"] = _held["items"], []
    for write in items:
        try:
            write()
        except OSError:
            pass


def _rebuild(old, fd, name, err):
    """The stream the interpreter makes for ``fd`` on a terminal
    (``create_stdio``), over a raw layer of class :class:`_FileIO`: ``old`` (the
    interpreter's own, or the fork server's) gives the encoding and errors,
    and whether it was started unbuffered (``-u``: a raw layer, written through)."""
    raw = _FileIO(fd, "wb", closefd=False)
    raw._snipcheck_err = err
    raw.name = name
    buffered = not isinstance(getattr(old, "buffer", None), io.FileIO)
    encoding = getattr(old, "encoding", None) or "utf-8"
    errors = getattr(old, "errors", None) or ("backslashreplace" if err else "strict")
    raw._snipcheck_codec = (encoding, errors)
    stream = io.TextIOWrapper(
        io.BufferedWriter(raw, TTY_BUFFER) if buffered else raw,
        encoding=encoding,
        errors=errors,
        newline="\n",
        line_buffering=buffered,
        write_through=not buffered,
    )
    stream.mode = "w"
    return stream


def install(token, on_run_file=None, seed=None, line_buffer_c=None):
    """Rebuild ``sys.stdout``/``sys.stderr`` and add the audit hook.

    :param token: the run's secret frame prefix (bytes).
    :param seed: seed the random generators with it (:func:`seed_on_import`);
        ``None``: fresh randomness, as in a plain run.
    :param on_run_file: called once at the ``cpython.run_file`` audit event
        (just before the interpreter runs the script), if given.
    :param line_buffer_c: :func:`c_line_buffering`'s function, called here, if given.
    """
    if line_buffer_c is not None:
        line_buffer_c()
    try:
        st = os.fstat(2)
        own = (st.st_dev, st.st_ino)
    except OSError:
        own = None

    def ours():
        """Whether descriptor 2 is still the run's socket."""
        try:
            st = os.fstat(2)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == own

    def frame(label, data):
        if own is None or not ours():
            return False
        for start in range(0, len(data), CHUNK):
            os.write(2, token + label + data[start : start + CHUNK])
        return True

    capture = _capture["c"] = _Capture(ours, frame, on_run_file)
    _sender.update(send=capture.frame, ours=capture.ours, new_cell=capture.new_cell)
    sys.stdout = sys.__stdout__ = _rebuild(sys.__stdout__, 1, "<stdout>", False)
    sys.stderr = sys.__stderr__ = _rebuild(sys.__stderr__, 2, "<stderr>", True)
    sys.addaudithook(capture.audit)
    if seed is not None:
        seed_on_import(seed)


#: Frame labels of an image: begin, data, end (see the module docstring).
IMAGE_BEGIN, IMAGE_DATA, IMAGE_END = b"F", b"f", b"E"
#: Files picked up from the working directory, by suffix (lower case).
IMAGE_SUFFIXES = {".png": "png", ".svg": "svg"}
#: Larger image files are left alone (bytes).
IMAGE_FILE_LIMIT = 32 << 20


def send_image(write, source, fmt, name, data):
    """Send one image as frames; ``False`` if a frame could not be written.

    :param write: ``write(label, payload) -> bool`` writes one frame
        (:func:`send_frame`, or :func:`frame_writer` outside the snippet).
    :param source: ``"show"`` or ``"file"``; :param fmt: ``"png"`` or ``"svg"``.
    :param name: the file name of a saved image, ``""`` for a shown one.
    """
    head = source.encode() + b"\0" + fmt.encode() + b"\0" + name.encode("utf-8", "surrogateescape")
    if not write(IMAGE_BEGIN, head):
        return False
    for start in range(0, len(data), CHUNK):
        if not write(IMAGE_DATA, data[start : start + CHUNK]):
            return False
    return write(IMAGE_END, b"%d" % len(data))


def frame_writer(fd, token):
    """A ``write(label, payload)`` for :func:`send_image` that writes frames to
    ``fd`` directly (the supervisor, whose descriptor 2 is the run's socket)."""

    def write(label, data):
        try:
            for start in range(0, max(len(data), 1), CHUNK):
                os.write(fd, token + label + data[start : start + CHUNK])
        except OSError:
            return False  # the build is gone
        return True

    return write


def image_snapshot(directory):
    """``{name: (mtime_ns, size)}`` of the image files directly in ``directory``."""
    found = {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return found
    for entry in entries:
        if os.path.splitext(entry.name)[1].lower() not in IMAGE_SUFFIXES:
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                found[entry.name] = (st.st_mtime_ns, st.st_size)
        except OSError:
            continue
    return found


def new_images(directory, before):
    """The image files in ``directory`` that are new or changed since the
    snapshot ``before`` (:func:`image_snapshot`), by name: ``[(name, format,
    bytes)]``; ``before`` is updated to now."""
    now = image_snapshot(directory)
    out = []
    for name in sorted(now):
        if before.get(name) == now[name] or now[name][1] > IMAGE_FILE_LIMIT:
            continue
        try:
            with open(os.path.join(directory, name), "rb") as f:
                data = f.read(IMAGE_FILE_LIMIT + 1)
        except OSError:
            continue
        out.append((name, IMAGE_SUFFIXES[os.path.splitext(name)[1].lower()], data))
    before.clear()
    before.update(now)
    return out


def send_new_images(write, directory, before):
    """Send :func:`new_images` of ``directory`` as saved images."""
    for name, fmt, data in new_images(directory, before):
        if not send_image(write, "file", fmt, name, data):
            return


def watch_matplotlib():
    """From now on, act when matplotlib and pyplot are first loaded (the import
    machinery's ``_find_and_load`` is wrapped): :func:`use_agg` for
    ``matplotlib``, :func:`capture_show` for ``matplotlib.pyplot``; either one
    already loaded is handled at once."""
    bootstrap = sys.modules["_frozen_importlib"]
    inner = bootstrap._find_and_load
    done = set()

    def loaded(name, module):
        if name in done or module is None or getattr(module, "__spec__", None) is None:
            return
        done.add(name)
        (use_agg if name == "matplotlib" else capture_show)(module)

    def find_and_load(name, import_):
        module = inner(name, import_)
        if name in ("matplotlib", "matplotlib.pyplot") and name not in done:
            loaded(name, module)
        return module

    OWN_CODES.add(find_and_load.__code__)
    bootstrap._find_and_load = find_and_load
    for name in ("matplotlib", "matplotlib.pyplot"):
        loaded(name, sys.modules.get(name))


def use_agg(matplotlib):
    """Select the Agg backend, before pyplot is imported, unless the snippet
    chose one itself (``MPLBACKEND``); a later ``matplotlib.use`` of the
    snippet still wins."""
    if os.environ.get("MPLBACKEND") or "matplotlib.pyplot" in sys.modules:
        return
    try:
        matplotlib.rcParams["backend"] = "agg"
    except Exception:  # noqa: BLE001 - a matplotlib we do not know: leave it as it is
        pass


def capture_show(pyplot):
    """Make ``pyplot.show()`` send every open figure as a PNG (in figure-number
    order), then close them as a window closed by the reader would be (not
    with ``block=False``), when the backend is Agg; with another backend, or
    no figure open, it is matplotlib's own ``show``."""
    original = pyplot.show

    def show(*args, **kwargs):
        gcf = sys.modules.get("matplotlib._pylab_helpers")
        managers = sorted(gcf.Gcf.get_all_fig_managers(), key=lambda m: m.num) if gcf is not None else []
        if not managers or str(sys.modules["matplotlib"].get_backend()).lower() != "agg":
            return original(*args, **kwargs)
        release_held()  # also flushes both streams
        for manager in managers:
            send_image(send_frame, "show", "png", "", figure_png(manager.canvas.figure))
        if kwargs.get("block", args[0] if args else None) is not False:
            for manager in managers:
                pyplot.close(manager.canvas.figure)
        return None

    # matplotlib's warnings name the first frame outside matplotlib: in this
    # namespace, a warning of the drawing points at the snippet's plt.show() line.
    space = {**globals(), "__name__": "matplotlib.pyplot"}
    for f in (show, figure_png):
        space[f.__name__] = type(f)(f.__code__, space, f.__name__, f.__defaults__, f.__closure__)
    show = space["show"]
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(show, attr, getattr(original, attr))
        except (AttributeError, TypeError):
            pass
    show.__wrapped__ = original
    OWN_CODES.add(show.__code__)
    pyplot.show = show
    _figures["show"] = show


#: The ``show`` that :func:`capture_show` made, once pyplot is loaded.
_figures = {}


def show_open_figures():
    """The end of a tutorial script's cell, as a notebook's inline backend and
    sphinx-gallery's scraper end it: every figure still open is shown (sent
    as by ``plt.show()``), then closed.  Nothing before pyplot is loaded."""
    show = _figures.get("show")
    if show is not None:
        show()


def figure_png(figure):
    """``figure`` drawn as its canvas draws it (Agg, at the figure's dpi), as
    PNG bytes: 8-bit RGBA, not interlaced, every row unfiltered (so the
    build decodes it fast; :mod:`snipcheck.png`)."""
    canvas = figure.canvas
    if _figures.get("tight"):
        # a notebook's cell: drawn as IPython's inline backend draws it
        # (print_figure: PNG at the figure's dpi, cropped to bbox_inches="tight")
        import io as io_mod

        out = io_mod.BytesIO()
        figure.savefig(out, format="png", bbox_inches="tight")
        return out.getvalue()
    if not hasattr(canvas, "buffer_rgba"):
        import io as io_mod

        out = io_mod.BytesIO()
        figure.savefig(out, format="png")
        return out.getvalue()
    canvas.draw()
    view = memoryview(canvas.buffer_rgba())
    height, width = view.shape[0], view.shape[1]
    return encode_png(width, height, view.tobytes())


def encode_png(width, height, rgba):
    """A PNG of 8-bit RGBA rows (``rgba``: ``width * height * 4`` bytes, top row first)."""
    import zlib  # loaded by then: pyplot's own imports load it

    stride = width * 4
    rows = bytearray()
    for y in range(height):
        rows += b"\0"  # filter type 0: none
        rows += rgba[y * stride : (y + 1) * stride]

    def chunk(kind, body):
        return len(body).to_bytes(4, "big") + kind + body + (zlib.crc32(kind + body) & 0xFFFFFFFF).to_bytes(4, "big")

    head = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes((8, 6, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b"")


OWN_CODES.update(f.__code__ for f in (send_image, figure_png, encode_png, show_open_figures))


def strip(value, tb=None):
    """Cut this module's frames out of ``tb`` and of the tracebacks chained to ``value``."""
    seen = set()
    todo = [(value, tb)]
    while todo:
        exc, first = todo.pop()
        if exc is not None:
            if id(exc) in seen:
                continue
            seen.add(id(exc))
            first = first if first is not None else exc.__traceback__
            todo.append((exc.__cause__, None))
            todo.append((exc.__context__, None))
        prev = first
        while prev is not None:
            nxt = prev.tb_next
            while nxt is not None and nxt.tb_frame.f_code in OWN_CODES:
                nxt = nxt.tb_next
            prev.tb_next = nxt
            prev = nxt
