"""Warm fork server of the fork runner (runs in the snippet interpreter).

Started as ``python forkserver.py SOCKET_FD PIDNS MODULE...`` (``PIDNS``:
``1`` to give each slot a PID namespace where the kernel allows it).  It
imports the preload modules once (``torch``: 2-3 s), reports whether forking
is safe, then serves requests for *slots* on a ``SOCK_SEQPACKET`` socket: each
carries one descriptor, the slot's request socket.  A slot is a fork of the
server that becomes a supervisor (``_snipcheck_supervise.Supervisor``; process
1 of a new PID namespace where allowed) and runs snippets one after the other:
each request on its socket carries the snippet's script path, run directory,
environment, frame token and memory limit, plus four descriptors (stdin,
stdout, stderr, and the run's control socket; a chain's request carries its
cells and the two ends of their feed too, see ``_snipcheck_supervise.Cells``); the slot forks the snippet's
process from itself and reports to the build directly.  The server is not in
the path of any result.  When the build goes away (end-of-file) the server
and its slots exit, and the server removes its home directory.

What the snippet's process sees is made to be what ``python
snippets/<id>.py`` sees:

* the fixed environment (the server itself starts under it, so that its
  ``sys.flags``, its locale and the encoding and errors of its streams are a
  plain run's; its ``PYTHONHASHSEED`` is the one difference, see
  ``DIFFERENCES["hash seed"]``), stdout and stderr built as the interpreter
  builds them on a terminal (``_snipcheck_child.install``), working directory, ``sys.argv``/``sys.orig_argv``,
  ``sys.path[0]``, a fresh ``__main__`` with the same names in the same
  order, the signal dispositions of a fresh interpreter, a session of its own;
* ``sys.modules`` as a fresh interpreter has it at start-up.  Everything the
  server loaded (the preload, and its own modules) is hidden; importing a
  hidden module puts it back together with what its first import loaded, the
  warning filters it added and the ``atexit`` handlers it registered, in the
  order they came, so ``import torch`` leaves the same ``sys.modules``,
  ``warnings.filters`` and ``atexit`` state as in a fresh process.  (The
  import machinery's ``_find_and_load`` is wrapped for this.)
* RNGs reseeded from the OS, as a fresh process seeds them (``random``,
  numpy's global generator, torch's default generator);
* ``sys.getrecursionlimit()`` unchanged, and the same recursion depth left to
  the snippet's module frame as in a plain run: the thread state's remaining
  depth is raised by the depth of the server's own frames below the snippet
  (the field is found by observation at start-up; where it cannot be found,
  the limit itself is raised, as before);
* tracebacks and ``traceback.format_stack`` (used by anomaly detection) cut
  at the snippet's module frame; the interpreter's exit sequence (the
  traceback through ``sys.excepthook``, ``SystemExit``, ``KeyboardInterrupt``
  ending by SIGINT, non-daemon threads joined, ``atexit`` handlers, flush,
  ``__main__`` released so that ``__del__`` methods run, C stdio flushed)
  before ``os._exit`` (``_snipcheck_main.py``).

What it cannot hide: the kernel shows signal 33 (glibc's internal
``SIGSETXID``) as caught when the preload started a thread (numpy's OpenBLAS
does), and no program can set it back through libc; no signal API shows it.

Only the standard library (plus the preload modules) may be used here.
"""

import sys

# Before any import: the modules a fresh interpreter has at start-up.  Until
# the preload is done, only these may be used, so that what the preload loads
# is exactly what its import loads in a fresh interpreter.
_BASELINE = set(sys.modules)

import _signal
import _warnings
import os

_BASELINE_FILTERS = {id(f) for f in _warnings.filters}
_bootstrap = sys.modules["_frozen_importlib"]
_find_and_load = _bootstrap._find_and_load
#: Signal dispositions of a fresh interpreter (this one, before it changes any).
_FRESH_SIGNALS = {}
for _number in range(1, _signal.NSIG):
    try:
        _FRESH_SIGNALS[_number] = _signal.getsignal(_number)
    except (OSError, ValueError):
        pass


class _Effects:
    """What each first import did, for putting it back in a child (see the module docstring)."""

    def __init__(self):  # type: ignore[no-untyped-def]
        self.items = []  # ("module", name) | ("filter", (where, filter)) | ("atexit", (func, args, kwargs))
        self.windows = {}  # module name -> (start, end) in items, of the import that loaded it
        self.modules = set()
        self.filters = set(_BASELINE_FILTERS)
        self.register = None  # atexit's own register, once atexit is loaded

    def find_and_load(self, name, import_):  # type: ignore[no-untyped-def]
        start = len(self.items)
        before = set(sys.modules)
        # Only the call that loads ``name`` makes its window: _find_and_load
        # is also called for a module that is already there (importlib's
        # import_module, a module still initialising), which loads nothing.
        loads = name not in before
        try:
            return _find_and_load(name, import_)
        finally:
            for new in [n for n in sys.modules if n not in before]:
                if new not in self.modules and new not in _BASELINE:
                    self.modules.add(new)
                    self.items.append(("module", new))
                if new == "atexit" and self.register is None:
                    self.watch_atexit(sys.modules[new])
            # New filters: those in front were inserted there one by one, the
            # newest first in the list; record them oldest first, so that
            # inserting each at the front again rebuilds the same order.
            filters = _warnings.filters
            old = [i for i, f in enumerate(filters) if id(f) in self.filters]
            front, back = [], []
            for i, f in enumerate(filters):
                if id(f) not in self.filters:
                    self.filters.add(id(f))
                    (front if not old or i < old[0] else back).append(f)
            self.items.extend(("filter", ("front", f)) for f in reversed(front))
            self.items.extend(("filter", ("back", f)) for f in back)
            if loads and name in sys.modules:
                self.windows.setdefault(name, (start, len(self.items)))

    def watch_atexit(self, atexit):  # type: ignore[no-untyped-def]
        """Record every ``atexit.register`` from now on (undone in the child)."""
        register = self.register = atexit.register

        def recording_register(func, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.items.append(("atexit", (func, args, kwargs)))
            return register(func, *args, **kwargs)

        atexit.register = recording_register


_effects = _Effects()
_bootstrap._find_and_load = _effects.find_and_load


def _preload(modules):  # type: ignore[no-untyped-def]
    """Import ``modules`` with fd 1 and 2 captured; return (printed bytes, errors)."""
    saved = os.dup(1), os.dup(2)
    path = "preload-output"  # in the server's home, its working directory
    out = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.unlink(path)
    os.dup2(out, 1)
    os.dup2(out, 2)
    errors = []
    try:
        for name in modules:
            try:
                __import__(name)
            except Exception as exc:  # noqa: BLE001 - reported to the client
                errors.append(f"cannot preload {name}: {type(exc).__name__}: {exc}")
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
    os.lseek(out, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(out, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(out)
    return b"".join(chunks), errors


if __name__ == "__main__":
    _PRINTED, _ERRORS = _preload(sys.argv[3:])

import atexit
import gc
import json
import select
import signal
import socket
import threading

import _snipcheck_main  # beside this file (sys.path[0])

_register = _effects.register or atexit.register
_CLONE_NEWPID = 0x20000000
#: ``_snipcheck_mounts`` where runs may get a mount namespace (Linux, namespaces on), else ``None``;
#: ``_snipcheck_slot`` with it (what a slot makes for its runs).
_MOUNTS = _SLOT = None


try:
    import ctypes as _ctypes

    _LIBC = _ctypes.CDLL(None)  # fflush(NULL) at the child's exit; madvise (_huge_pages)
except (ImportError, OSError):
    _LIBC = None
_PROBE = _snipcheck_main.probe()
#: What makes C's stdout line-buffered in a run (``_snipcheck_child.c_line_buffering``), found once.
_C_STDOUT = {"line_buffer": None}
# What the counter reads in a module frame of a plain run (this one is).
_PLAIN_DEPTH = _PROBE[0][_PROBE[1]] if _PROBE else None


def main() -> None:
    import shutil

    home = os.getcwd()
    status = 1
    try:
        _main()
        status = 0
    finally:
        # However the server ends (the build gone, an error), its home goes too.
        shutil.rmtree(home, ignore_errors=True)
        # Then no interpreter shutdown: tearing the preload down (torch's
        # atexit handlers and finalizers, ~150 ms) would only delay the
        # build, which waits for the server at its end.  Its descriptors
        # 1 and 2 are /dev/null: there is nothing to flush.
        os._exit(status)


def _main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    use_pidns = sys.argv[2] == "1"
    printed, errors = _PRINTED, _ERRORS
    problems = []
    if threading.active_count() > 1:
        problems.append(f"{threading.active_count() - 1} Python thread(s) running after preload")
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "cuda", None) is not None:
        try:
            if torch.cuda.is_initialized():
                problems.append("CUDA was initialised during preload")
        except Exception:  # noqa: BLE001
            pass
    if printed:
        problems.append("preloading printed output, which a plain run would show: " + printed[:200].decode("utf-8", "replace"))
    problems.extend(errors)
    native = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
    # The child-side modules are imported once here, not in every child.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import _snipcheck_child
    import _snipcheck_supervise

    global _MOUNTS, _SLOT
    if use_pidns and sys.platform.startswith("linux"):
        try:
            import _snipcheck_mounts
            import _snipcheck_slot

            _snipcheck_mounts.survey()  # once, for every slot and run
            _MOUNTS, _SLOT = _snipcheck_mounts, _snipcheck_slot
        except (ImportError, AttributeError, OSError):
            pass
    sys.path.remove(here)
    _snipcheck_supervise._libc()  # loaded here, not in a child (see _View)
    _snipcheck_child.OWN_CODES.update(_snipcheck_main.OWN)  # once, for every child
    _snipcheck_child.REPORT_CODES.add(_snipcheck_main.report.__code__)
    if _LIBC is not None:
        _C_STDOUT["line_buffer"] = _snipcheck_child.c_line_buffering(_ctypes, _LIBC)
    warmed = _warm_up() if not problems else 0
    _forget_tempdir()

    exact_depth = _snipcheck_main.configure(_PROBE, _PLAIN_DEPTH, _LIBC)
    try:
        sock.send(
            json.dumps(
                {"ready": True, "problems": problems, "native_threads": native, "recursion": exact_depth, "warmed": warmed}
            ).encode()
        )
    except OSError:
        return  # the build went away during the preload
    if problems:
        return
    _skip_preload_finalizers()
    pidns = _Pidns(use_pidns)

    # From here on, sys.modules is a fresh interpreter's (the view), in this
    # server and so in every child: nothing more may be imported here.
    view = _View()
    # Objects of the preload never need collecting in a child: keep the
    # collector (and its copy-on-write page faults) away from them.
    gc.freeze()
    _huge_pages()
    _serve(sock, pidns, view, _snipcheck_child, _snipcheck_supervise)


#: madvise(2) advice values (Linux): back a range with transparent huge pages,
#: and collapse what is there into them now (MADV_COLLAPSE, Linux 6.1).
_MADV_HUGEPAGE, _MADV_COLLAPSE = 14, 25
_HUGE = 2 << 20


def _huge_pages():  # type: ignore[no-untyped-def]
    """Move the server's anonymous memory (the preload's objects) into 2 MiB
    transparent huge pages where the kernel allows it.

    A fork copies one page-table entry per 4 KiB page of the parent's memory
    and an exit drops them again: with torch loaded that is ~37,000 entries,
    about 4 ms a run; in huge pages it is ~60 entries (measured: fork and exit
    of a server that imported torch 4.0 ms, then 1.8 ms).  A child's first
    write to a huge page still copies only the 4 KiB it writes to.  Where
    the kernel has no MADV_COLLAPSE (before 6.1, or huge pages off), nothing
    changes.
    """
    # No import here: the view is in place (see _main); ctypes came with _LIBC.
    if not sys.platform.startswith("linux") or _LIBC is None:
        return
    try:
        madvise = _LIBC.madvise
        with open("/proc/self/maps") as maps:
            lines = maps.read().splitlines()
    except (OSError, AttributeError):
        return
    for line in lines:
        parts = line.split()
        if len(parts) < 5 or not parts[1].startswith("rw") or parts[1][3] != "p":
            continue
        if len(parts) > 5 and parts[5] != "[heap]":
            continue  # private anonymous memory and the heap only (never files or stacks)
        low, high = (int(x, 16) for x in parts[0].split("-"))
        low, high = (low + _HUGE - 1) & ~(_HUGE - 1), high & ~(_HUGE - 1)
        if high > low:
            start, length = _ctypes.c_void_p(low), _ctypes.c_size_t(high - low)
            if madvise(start, length, _MADV_HUGEPAGE) == 0:
                madvise(start, length, _MADV_COLLAPSE)


class _Pidns:
    """``unshare(CLONE_NEWPID)`` before a fork, ``setns`` back after (see run/sandbox.py)."""

    def __init__(self, wanted):  # type: ignore[no-untyped-def]
        self.libc = None
        self.home = None
        if wanted and sys.platform.startswith("linux"):
            try:
                import ctypes

                self.libc = ctypes.CDLL(None, use_errno=True)
                self.home = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            except (OSError, AttributeError):
                self.libc = None

    def enter(self):  # type: ignore[no-untyped-def]
        if self.libc is None:
            return False
        if self.libc.unshare(_CLONE_NEWPID) != 0:
            self.libc = None  # refused (not root): never again
            return False
        return True

    def leave(self):  # type: ignore[no-untyped-def]
        if self.libc.setns(self.home, _CLONE_NEWPID) != 0:
            raise OSError("cannot switch back to the server's PID namespace")


def _serve(sock, pidns, view, child_mod, supervise_mod):  # type: ignore[no-untyped-def]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        try:
            ready, _, _ = select.select([sock, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            _reap()
        if sock not in ready:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 1)
        except OSError:  # ECONNRESET: the build died with a reply unread
            msg, fds = b"", []
        if not msg:
            return  # the client went away (main removes the home)
        request = json.loads(msg)  # a new slot: its request socket is the one descriptor
        namespaced = pidns.enter()
        try:
            pid = os.fork()
        except BaseException:
            if namespaced:
                pidns.leave()
            raise
        if pid and namespaced:
            pidns.leave()  # only here: the supervisor's own children belong in its namespace
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (wake_r, wake_w):
                os.close(fd)
            sock.close()
            _slot(fds[0], namespaced, view, child_mod, supervise_mod, request.get("warm", ()))  # never returns
        for fd in fds:
            os.close(fd)
        try:
            sock.send(json.dumps({"req": request["req"], "pid": pid, "pidns": namespaced}).encode())
        except OSError:
            pass  # the build is gone: the next read says so


def _warm_torch_tensors(torch):  # type: ignore[no-untyped-def]
    t = torch.arange(4.0)
    t.mul_(2)
    t.add_(1)
    (t * t).sum().item()
    t.tolist()


def _warm_torch_autograd(torch):  # type: ignore[no-untyped-def]
    x = torch.ones(2, requires_grad=True)
    (x * 2).sum().backward()


#: What the server does once so that no run pays for it: torch sets itself up
#: lazily at the first tensor operation in a process (it reads the CPU's
#: features from /proc/cpuinfo and /sys, fills its kernel dispatch tables) and
#: at the first backward pass, ~3-4 ms a run in all.  In order; see _warm_up.
_WARM_STEPS = (("torch", _warm_torch_tensors), ("torch", _warm_torch_autograd))


def _warm_up():  # type: ignore[no-untyped-def]
    """Run the steps of ``_WARM_STEPS`` whose module was preloaded, in this
    server, so that every child inherits torch's lazy set-up done.

    A step may only change what no snippet can see.  Each is first tried in a
    throw-away fork: the steps that ran there without an exception, a new
    module in ``sys.modules``, a new thread, a warning or a byte written to
    descriptor 1 or 2 are then run here, up to the first that did not; the
    rest are skipped.  A torch whose set-up does any of that is not warmed,
    and its runs pay for their own set-up, as a plain run does.

    :return: the number of steps run here.
    """
    steps = [(sys.modules[name], step) for name, step in _WARM_STEPS if name in sys.modules]
    if not steps:
        return 0
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the trial: report how many steps left nothing to see
        clean = 0
        try:
            os.close(read_end)
            import warnings

            written = os.memfd_create("snipcheck-warm-up")
            os.dup2(written, 1)
            os.dup2(written, 2)
            threads = sorted(os.listdir("/proc/self/task"))
            modules = list(sys.modules)
            for module, step in steps:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    step(module)
                if caught or list(sys.modules) != modules or sorted(os.listdir("/proc/self/task")) != threads:
                    break
                if os.fstat(written).st_size:
                    break
                clean += 1
        except BaseException:  # noqa: BLE001 - the step that raised is not clean
            pass
        try:
            os.write(write_end, b"%d" % clean)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        answer = os.read(read_end, 16)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    clean = int(answer) if answer.isdigit() else 0
    for module, step in steps[:clean]:
        step(module)
    return clean


def _reap():  # type: ignore[no-untyped-def]
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _settle():  # type: ignore[no-untyped-def]
    """Put a new slot's memory in the state that makes its forks cheapest,
    once, before its first run.

    A run writes to a page the slot shares with it (copy-on-write: ~4 us a
    page) and its exit drops the page-table entries it inherited, so:

    - a full collection empties the interpreter's free lists (floats,
      tuples, lists, dicts: objects left there by the server's and the
      slot's own work, scattered over ~130 pages), which each run's exit
      collection (``_snipcheck_main.finish``) would otherwise empty again,
      writing to every one of those pages (measured: 134 page faults a run,
      then 20);
    - the slot's own start (its warm imports, ``Supervisor``) split some of
      the server's huge pages into 4 KiB ones; they are gathered again
      (:func:`_huge_pages`), so that a fork copies and an exit drops fewer
      page-table entries.

    - what the slot made itself (its supervisor, its view of the mounts) is
      frozen, as the server froze the preload: each run's exit collection
      (``_snipcheck_main.finish``) then walks only the run's own objects,
      not the slot's (a copy-on-write fault for each page they lie on).

    Nothing a snippet can see changes: the free lists hold no live object,
    and the collector finds nothing of the preload or of the slot (frozen).
    """
    gc.collect()
    gc.freeze()
    _huge_pages()


#: A slot gathers its memory into huge pages again after its first run and
#: then after every this many (:func:`_huge_pages`).  While a run lives, each
#: of the slot's own writes to a huge page it shares with the run splits that
#: page into 512 entries, which every later fork copies and every exit drops
#: again: measured, a slot's 4 KiB-mapped memory grew from ~41 MiB with
#: gathers to ~55 MiB over a few hundred runs without, and each run took
#: 0.49 ms longer (median of 14 rounds of 60 runs of ``pass``, the two in
#: turn).  The huge pages its every run splits again are split again;
#: gathering them costs a copy of each (~0.1-0.2 ms), between two runs,
#: while the build reads the last one's result.
_GATHER_EVERY = 16


def _slot(requests_fd, namespaced, view, child_mod, supervise_mod, warm=()):  # type: ignore[no-untyped-def]
    """A slot: a supervisor (a fork of the server, init of its own PID namespace
    where allowed) that runs snippets one after the other, each in a fork of
    itself, until the build closes its request socket.

    :param warm: preloaded modules the slot imports (puts back in its view)
        before it forks any run: for snippets whose first statement imports
        them, which then find them where a plain run would have them after
        that statement, without each run putting ~1,000 modules back (a
        copy-on-write fault for every page their objects live on, ~3 ms).
    """
    try:
        for name in warm:
            if name in view.hidden:
                view.restore(name)
        requests = socket.socket(fileno=requests_fd)
        requests.set_inheritable(False)
        parking, unused = os.pipe()  # what descriptors 0-2 hold between runs
        os.close(unused)
        for target in (0, 1, 2):
            os.dup2(parking, target)
        supervisor = supervise_mod.Supervisor(namespaced)
        resets = _signal_resets()
        _lock_reinit_stand_in(view)
        _settle()
        runs = 0
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(requests, 1 << 20, 6)
            except OSError:
                msg = b""
            if not msg:
                break
            request = json.loads(msg)
            stdin, out, err, control = fds[:4]
            cells = None
            if request.get("cells"):  # a chain: its cells handed over one by one (and its feed's two ends)
                for fd in fds[4:6]:
                    os.set_inheritable(fd, False)  # received inheritable: no program the run executes gets it
                cells = supervise_mod.Cells(request.pop("cells"), fds[4], fds[5])
            for fd, target in ((stdin, 0), (out, 1), (err, 2)):
                os.dup2(fd, target)
                os.close(fd)
            os.set_inheritable(control, False)
            _environment(request["env"])
            if not (namespaced and _MOUNTS):
                request["mounts"] = request["harvest"] = None  # a mount namespace only inside the run's PID namespace
            elif request.get("mounts") and supervisor.holder is None:  # the slot's first run
                supervisor.holder = _MOUNTS.Holder()
                _SLOT.prepare(request["mounts"])  # the read-only view and proc, once for all its runs

            def start(_dispositions, feed, request=request, control=control):  # type: ignore[no-untyped-def]
                _child(request, control, view, child_mod, supervise_mod, resets, feed)

            images = (child_mod, bytes.fromhex(request["token"]))
            if request.get("mounts"):
                _SLOT.stage(request["mounts"], request["run_dir"])  # the run's namespace, entered until the fork
            _lock_reinit(False)  # the run's process sets it back first thing (_child)
            try:
                supervisor.run(control, start, request["run_dir"], images, cells, request.get("harvest") or ())
            finally:
                _lock_reinit(True)
            os.close(control)
            if request.get("mounts"):
                _SLOT.ready(request["mounts"])  # the next run's namespace, while the build reads this one's result
            runs += 1
            if runs % _GATHER_EVERY == 1:
                _huge_pages()  # what this slot's own writes split since (see _GATHER_EVERY)
            for target in (0, 1, 2):
                os.dup2(parking, target)
        supervisor.end()
    finally:
        os._exit(0)


#: ``(logging, its set of handlers, an empty stand-in)`` in a slot whose
#: preload loaded logging (:func:`_lock_reinit_stand_in`); else empty.
_LOCK_REINIT = []


def _lock_reinit_stand_in(view):  # type: ignore[no-untyped-def]
    """In a slot, once: make the stand-in :func:`_lock_reinit` puts in place
    of logging's set of handlers for each run's fork.

    After a fork, :mod:`logging`'s at-fork handler gives every handler a new
    lock (``_at_fork_reinit_lock_weakset``: ~40 once torch is imported), in
    case another thread held one at the fork.  In a run's process that
    writes to pages of the slot's memory, each a copy-on-write fault
    (measured: ~30 of a run's ~630, 200 runs of ``pass``), and changes
    nothing: a slot has one thread, which holds no handler's lock when it
    forks.  No effect where
    logging is not loaded or has no such set.
    """
    logging = view.hidden.get("logging") or sys.modules.get("logging")
    handlers = getattr(logging, "_at_fork_reinit_lock_weakset", None)
    if handlers is not None and callable(getattr(logging, "_after_at_fork_child_reinit_locks", None)):
        _LOCK_REINIT.append((logging, handlers, type(handlers)()))


def _lock_reinit(on):  # type: ignore[no-untyped-def]
    """``False``, in a slot just before it forks a run: logging's at-fork
    handler finds no handler to give a new lock (see
    :func:`_lock_reinit_stand_in`), where the slot has one thread only;
    ``True``: logging's own set again, in the slot after the run and in the
    run's process first thing, before anything of the snippet can see it."""
    if not on and threading.active_count() != 1:
        return  # a thread that may hold a lock at the fork: logging must renew them all
    for logging, handlers, stand_in in _LOCK_REINIT:
        logging._at_fork_reinit_lock_weakset = handlers if on else stand_in


def _environment(env):  # type: ignore[no-untyped-def]
    """Make ``os.environ`` (and the C environment) ``env``, in its order, in
    the slot, just before it forks the run, so that the run inherits it.

    In the run itself that costs ~0.4 ms (``os.environ.clear()`` is
    quadratic, and writes to pages the run then copies); here, as every
    run's variables come in the same order and only the run directory's
    change, it is two ``setenv`` calls.  The slot itself reads no variable.
    """
    environ = os.environ
    if list(environ) != list(env):  # the first run, or other declared variables: all anew, in env's order
        environ.clear()
        environ.update(env)
        return
    for key, value in env.items():
        if environ[key] != value:
            environ[key] = value  # in place: the order stays


#: A signal's disposition in the kernel: default, ignored, caught (a handler);
#: /proc/PID/status shows the last two as bits (1 << (signal - 1)) of these masks.
_DEFAULT, _IGNORED, _CAUGHT = 0, 1, 2
_MASKS = (("SigIgn:", _IGNORED), ("SigCgt:", _CAUGHT))


def _signal_resets():  # type: ignore[no-untyped-def]
    """The signals a run must set back to a fresh interpreter's disposition
    (``_FRESH_SIGNALS``), worked out once in a slot: those whose disposition
    in the kernel differs from it, and every one a fresh interpreter
    catches (Python's table cannot tell its own handler from one a library
    installed in C).  About 30 of the 64 (those the supervisor ignores);
    the others are inherited as they are.

    :return: ``{signal: fresh disposition}``, for ``prepare``; all of
        ``_FRESH_SIGNALS`` where /proc cannot be read.
    """
    try:
        with open("/proc/self/status") as status:
            lines = status.read().splitlines()
        kernel = {}
        for line in lines:
            for name, state in _MASKS:
                if line.startswith(name):
                    mask = int(line.split()[1], 16)
                    for sig in range(1, _signal.NSIG):
                        if mask >> (sig - 1) & 1:
                            kernel[sig] = state
    except (OSError, ValueError, IndexError):
        return dict(_FRESH_SIGNALS)
    resets = {}
    for sig, fresh in _FRESH_SIGNALS.items():
        if not isinstance(fresh, int):
            wanted = _DEFAULT if fresh is None else _CAUGHT  # None: prepare sets SIG_DFL
        else:
            wanted = _IGNORED if fresh == _signal.SIG_IGN else _DEFAULT
        if wanted == _CAUGHT or kernel.get(sig, _DEFAULT) != wanted:
            resets[sig] = fresh
    return resets


def _child(request, control, view, child_mod, supervise_mod, resets, feed=None):  # type: ignore[no-untyped-def]
    """The snippet's process: make it a fresh ``python snippets/<id>.py``, run it, exit.

    :param resets: the signal dispositions to set back (``_signal_resets``);
        ``os.environ`` is already the run's (``_environment``).
    :param feed: for a chain, the descriptor its cells are handed over on
        (``_snipcheck_supervise.Cells``); ``None`` for one snippet.
    """
    _lock_reinit(True)  # as it was before the fork (see _lock_reinit_stand_in)
    supervise_mod.prepare(resets, request.get("memory_limit"), program=False)
    if request.get("mounts"):
        _MOUNTS.enter(request["mounts"], request["run_dir"])  # and, where allowed, no capability from here on
    os.chdir(request["run_dir"])
    _reseed(view)
    os.close(control)
    if feed is None:
        os.closerange(3, 1 << 16)
    else:
        os.closerange(3, feed)
        os.closerange(feed + 1, 1 << 16)
    child_mod.install(bytes.fromhex(request["token"]), seed=request.get("seed"), line_buffer_c=_C_STDOUT["line_buffer"])
    if feed is not None:  # a chain: its cells one after the other in this process
        status, interrupted = _snipcheck_main.run_cells(feed, child_mod)
    else:
        status, interrupted = _snipcheck_main.run_main(request["script"], child_mod)
    os._exit(_snipcheck_main.finish(status, interrupted))


class _View:
    """Hides what the server loaded from ``sys.modules`` and puts it back on
    import (see the module docstring).  Made once in the server, so a child
    starts with it at no cost."""

    def __init__(self):  # type: ignore[no-untyped-def]
        self.hidden = {}
        # sys.modules keeps insertion order: put modules back in the order
        # their imports inserted them, as list(sys.modules) shows it
        self.order = {name: n for n, name in enumerate(sys.modules)}
        for name in list(sys.modules):
            if name not in _BASELINE:
                self.hidden[name] = sys.modules.pop(name)
        self.applied = set()
        # Worked out here, once, for every child (a window: (start, end) in _effects.items).
        self.splits = {}
        for window in _effects.windows.values():
            self._split(window)
        _warnings.filters[:] = [f for f in _warnings.filters if id(f) in _BASELINE_FILTERS]
        _warnings._filters_mutated()
        atexit._clear()
        atexit.register = _register
        _bootstrap._find_and_load = self.find_and_load

    def find_and_load(self, name, import_):  # type: ignore[no-untyped-def]
        if name in self.hidden:
            self.restore(name)
            module = sys.modules.get(name)
            if module is not None:
                return module
        return _find_and_load(name, import_)

    def restore(self, name):  # type: ignore[no-untyped-def]
        """Put ``name`` back, with what its first import loaded, added and registered."""
        parent = name.rpartition(".")[0]
        if parent and parent not in sys.modules and parent in self.hidden:
            self.restore(parent)
        window = _effects.windows.get(name)
        if window is None:
            if name in self.hidden:
                sys.modules[name] = self.hidden.pop(name)
            return
        modules, others = self._split(window)
        hidden = self.hidden
        back = {n: hidden[n] for n in modules if n in hidden and n not in sys.modules}
        sys.modules.update(back)  # in the order of the first import
        for n in back:
            del hidden[n]
        if name in hidden:  # loaded before its window opened (never seen so far): put it back all the same
            sys.modules[name] = hidden.pop(name)
        for index, kind, item in others:
            if index in self.applied:
                continue
            self.applied.add(index)
            if kind == "filter":
                where, f = item
                if where == "front":
                    _warnings.filters.insert(0, f)
                else:
                    _warnings.filters.append(f)
            else:
                func, args, kwargs = item
                _register(func, *args, **kwargs)
        if others:
            _warnings._filters_mutated()

    def _split(self, window):  # type: ignore[no-untyped-def]
        """A window's module names, and its other effects (filters, atexit)."""
        split = self.splits.get(window)
        if split is None:
            items = _effects.items
            modules = sorted((items[i][1] for i in range(*window) if items[i][0] == "module"),
                             key=lambda name: self.order.get(name, len(self.order)))  # fmt: skip
            others = [(i, *items[i]) for i in range(*window) if items[i][0] != "module"]
            split = self.splits[window] = (modules, others)
        return split


def _forget_tempdir() -> None:
    """Let each run work out its temporary folder from its own ``TMPDIR``, as
    a plain run does: where the preload asked for it (torch._dynamo does),
    :mod:`tempfile` keeps the server's in ``tempfile.tempdir``, and every run
    would find the server's folder (``tempfile.gettempdir()``, inductor's
    compile cache, ``NamedTemporaryFile``) instead of its own.  Left alone
    where the preload set another folder there itself."""
    tempfile = sys.modules.get("tempfile")
    tempdir = getattr(tempfile, "tempdir", None)
    if tempdir is not None and os.path.realpath(tempdir) == os.path.realpath(os.environ.get("TMPDIR", tempdir)):
        tempfile.tempdir = None  # type: ignore[union-attr]


def _skip_preload_finalizers() -> None:
    """Do not run, at the child's exit, the ``weakref.finalize`` callbacks the
    preload registered (torch registers ~130 that unregister its operator
    libraries).  In a dying process they have no visible effect, and in a
    fork they cost ~20 ms of copy-on-write page faults.  Finalizers the
    snippet itself registers still run, as do all ``atexit`` handlers.

    The exit handler still looks at every registered finalizer (to pick those
    to run), and torch's lie scattered over ~140 pages of the preload's
    memory: a copy-on-write fault each in every run (~0.6 ms).  So each that
    nobody but the registry holds is made again (same object, callback and
    arguments, in the same order) where they then lie together, and the old
    one detached: when its object dies, the new one calls the same callback,
    once, as the old one would have.
    """
    weakref = sys.modules.get("weakref")
    if weakref is None:
        return
    finalize = weakref.finalize
    registry = finalize._registry  # type: ignore[attr-defined]
    for info in list(registry.values()):
        info.atexit = False
    # What a finalizer held by nobody else shows, counted the same way.
    probe_target = _ProbeTarget()
    probe = finalize(probe_target, int)
    entries = sorted(registry.items(), key=lambda entry: entry[1].index)
    alone = sys.getrefcount(probe)
    entries = [(f, info) for f, info in entries if f is not probe]
    probe.detach()
    del probe, probe_target
    for f, info in entries:
        if sys.getrefcount(f) != alone:
            continue  # someone holds it (to call or detach it): keep it as it is
        detached = f.detach()
        if detached is not None:
            obj, func, args, kwargs = detached
            finalize(obj, func, *args, **kwargs).atexit = False


class _ProbeTarget:
    """An object to attach a throw-away finalizer to (see _skip_preload_finalizers)."""


def _reseed(view):  # type: ignore[no-untyped-def]
    """Seed the RNGs a fresh process seeds from the OS (``random`` reseeds itself at fork)."""
    np_random = view.hidden.get("numpy.random")
    if np_random is not None:
        np_random.seed()
    generator = getattr(view.hidden.get("torch"), "default_generator", None)
    if generator is not None:
        generator.seed()


if __name__ == "__main__":
    main()
