"""Supervisor of one snippet run: the snippet's parent process.

Both runners put a supervisor between the build and every snippet process:
the subprocess runner starts one per run as ``python -I -S
_snipcheck_supervise.py CONFIG`` (CONFIG is JSON); the fork server forks one
per *slot* from itself, which then runs snippets one after the other
(:class:`Supervisor`).  For each run the supervisor forks the snippet's
process, waits for it, and reports on the run's *control socket* (an
``AF_UNIX`` ``SOCK_SEQPACKET`` socket whose other end the build holds): ``exit
STATUS`` (the raw wait status), ``error TEXT`` (the snippet could not be
started) or ``stopped`` (after a stop request).

Containment, where the kernel allows it (root, or ``CAP_SYS_ADMIN``): the
supervisor is process 1 of a PID namespace of its own (the build or the fork
server created it).  When the snippet's process ends, it kills
every other process of the namespace (``kill(-1, SIGKILL)``, which from a
namespace's init reaches exactly the namespace), double-forked daemons
included, and when the supervisor itself ends for any reason, the kernel
kills whatever is left.  As a namespace's init it receives no signal from the
snippet's processes that it has no handler for, SIGKILL included, so a
snippet that signals its parent (``os.kill(os.getppid(), ...)``) reaches
neither the supervisor nor anything beyond it.

Where PID namespaces are not allowed, the supervisor is a *child subreaper*
(``PR_SET_CHILD_SUBREAPER``): orphans of the run are re-parented to it, and it
kills its children until none is left.  It ignores every signal that can be
ignored, so only SIGKILL (or SIGSTOP) sent by the snippet to its parent takes
it down; the snippet's process has ``PR_SET_PDEATHSIG`` = SIGKILL and dies
with it, the build sees the control socket close without a status, and
reports that.  Processes that left the snippet's process group before that
can outlive the run in this one case.

Stop: end-of-file on the control socket (the build shut it down at the
timeout, or the build died: the kernel closes a dead process's sockets,
whatever killed it).  The supervisor then kills the run as above, removes the
run directory it was given, and reports ``stopped`` if anyone still listens;
a slot whose request socket closes (the build is gone) exits.  So nothing a snippet starts outlives its run, and its temporary
directory goes with it, even when the build is killed with SIGKILL.

Cells of a chain: the supervisor hands them over one by one on a socket of
their own (:class:`Cells`) and tells the build where each ends (``cell INDEX
STATUS SECONDS`` on the control socket, once the cell's process asked for the
next cell; the build answers ``next`` when it has read the cell's output,
and only then is the next cell handed over).  So where a cell's output ends
is decided here, outside the snippet's process, from what was handed over:
nothing written to descriptors 1 and 2 ends a cell, and the forms of
forgery this side can recognise are refused (``forged INDEX TEXT``: the
cell whose code sent it, and what it did; the run is killed): a request that names a cell not handed over, more ends than cells,
a second request before the next cell was handed over, a message that is
not a request.  What an earlier cell can still do, inside the one
interpreter the cells share, is documented in the guide (chains).

Only the standard library may be used here (it runs under any Python).
"""

import _signal
import errno
import os
import resource
import select
import shutil
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: How long to keep killing and reaping left-over processes, in seconds.
_REAP_LIMIT = 5.0


_loaded = {}


def _libc():  # type: ignore[no-untyped-def]
    """libc through ctypes (imported on first use: only the fallback needs it)."""
    if "libc" not in _loaded:
        import ctypes

        _loaded["libc"] = ctypes.CDLL(None, use_errno=True)
    return _loaded["libc"]


def prctl(option, value):  # type: ignore[no-untyped-def]
    """``prctl(option, value)``; returns 0, or -1 where it is not available."""
    try:
        return _libc().prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        return -1


def _catchable():  # type: ignore[no-untyped-def]
    skip = {signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD}
    return [s for s in signal.Signals if s not in skip and s < getattr(signal, "SIGRTMIN", 65)]


class Forged(Exception):
    """The snippet's process sent what no run of its cells sends (see :class:`Cells`).

    :param cell: the index of the cell whose code sent it, as far as can be
        told: the earliest that can have (a second request while the next
        cell was not yet handed over comes from the cell whose end was
        reported, so that report was forged too).
    :param text: what it did, as the end of a sentence about the process.
    """

    def __init__(self, cell, text):  # type: ignore[no-untyped-def]
        super().__init__(text)
        self.cell = cell


class Cells:
    """The hand-over of a chain's cells to the snippet's process.

    :param cells: ``[(script, expected, mode), ...]``: each cell's path
        (``""``: the mark that runs nothing), the exception type its tags
        expect, and how it runs (``"repr,figures,folder"`` for a tutorial
        script's cell, see ``_snipcheck_main._run_in``; ``""`` or left out
        for any other).
    :param mine: the supervisor's end of the feed socket (``SOCK_SEQPACKET``).
    :param theirs: the snippet's end (``_snipcheck_main.run_cells``), closed
        here once the snippet's process is forked.
    """

    def __init__(self, cells, mine, theirs):  # type: ignore[no-untyped-def]
        self.cells = [(str(cell[0]), str(cell[1]), str(cell[2]) if len(cell) > 2 else "") for cell in cells]
        self.mine = mine
        self.theirs = theirs
        #: How many cells were handed over.
        self.handed = 0
        #: Whether the build was told of a cell's end and its "next" is awaited.
        self.waiting = False

    def hand_over(self):  # type: ignore[no-untyped-def]
        """Send the next cell (``index NUL script NUL expected NUL last NUL mode``)."""
        index = self.handed
        script, expected, mode = self.cells[index]
        last = b"1" if index == len(self.cells) - 1 else b"0"
        self.handed += 1
        self.waiting = False
        try:
            message = (b"%d" % index, os.fsencode(script), expected.encode(), last, mode.encode())
            os.write(self.mine, b"\0".join(message))
        except OSError:
            pass  # the snippet's process is gone: its end is reported as usual

    def ended(self, message):  # type: ignore[no-untyped-def]
        """Check a request for the next cell (``end INDEX STATUS SECONDS``).

        :return: the report for the build, ``cell INDEX STATUS SECONDS``.
        :raises Forged: naming what is wrong with it.
        """
        current = self.handed - 1  # the cell running (or whose end was reported)
        parts = message.split(b" ")
        try:
            index, status, seconds = int(parts[1]), int(parts[2]), float(parts[3])
            if len(parts) != 4 or parts[0] != b"end" or status not in (0, 1) or not seconds >= 0:
                raise ValueError
        except (IndexError, ValueError):
            raise Forged(current, f"sent {message[:60]!r} where the runner asks for the next cell") from None
        culprit = index if 0 <= index < current else current
        if self.waiting:
            raise Forged(culprit, "asked for the next cell twice (before the next cell was handed over)")
        if self.handed >= len(self.cells):
            raise Forged(culprit, f"asked for a cell after the last one (all {len(self.cells)} were handed over)")
        if index != current:
            raise Forged(culprit, f"said cell {index + 1} ended while cell {self.handed} was running")
        self.waiting = True
        return b"cell %d %d %.6f" % (index, status, seconds)


class Supervisor:
    """The supervisor's state: signals ignored, subreaper where needed, a
    wake-up pipe for SIGCHLD.  One supervisor can run several runs, one after
    the other (the fork runner keeps it as a slot).

    :param pidns: whether this process is init of a PID namespace of its own.
    :param holder: keeps each run's mount namespaces alive until the run is
        reported (``_snipcheck_mounts.Holder``), where runs get them; else ``None``.
    """

    def __init__(self, pidns, holder=None):  # type: ignore[no-untyped-def]
        self.pidns = pidns
        self.holder = holder
        self.me = os.getpid()
        #: Signal dispositions found at start (the snippet's process gets them back).
        self.dispositions = {}
        for sig in _catchable():
            try:
                self.dispositions[sig] = signal.signal(sig, signal.SIG_IGN)
            except (OSError, ValueError):
                pass
        if not pidns:
            prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def run(self, control, start, run_dir=None, images=None, cells=None, harvest=()):  # type: ignore[no-untyped-def]
        """Fork the snippet's process, wait for its end (or a stop), kill what
        is left of the run, send the image files it left in ``run_dir``,
        report on ``control`` and remove ``run_dir``.

        :param start: ``start(dispositions, feed)`` runs in the forked
            process and never returns (restore the dispositions there);
            ``feed`` is the snippet's end of ``cells``' socket, or ``None``.
        :param cells: a chain's :class:`Cells`, handed over one by one (the
            image files each cell leaves are sent when it ends), or ``None``.
        :param images: ``(capture module, frame token)``: the image files
            directly in ``run_dir`` that the run added or changed are sent as
            frames on descriptor 2 (the run's stderr socket) before the
            report, so the build reads them as the run's last output
            (``_snipcheck_child.send_image``); ``None``: none are sent.
        :param harvest: ``[[folder, kept], ...]``: each folder the run made
            (a compile cache in its run directory) is copied to ``kept`` before
            the run directory goes, where nothing is kept there yet (:func:`keep`).
        :return: whether the run was stopped (not ended by itself).
        """
        before = images[0].image_snapshot(run_dir) if images and run_dir else None
        holder = self.holder
        if holder is not None:
            holder.before_fork()
        pid = os.fork()
        if pid == 0:
            self._child(control, start, cells)
        if holder is not None:
            holder.after_fork()
        status, stopped = self._wait(control, pid, cells, run_dir, images, before)
        _kill_all(pid, self.pidns)
        if before is not None and not stopped:  # before the run directory goes
            child_mod, token = images
            child_mod.send_new_images(child_mod.frame_writer(2, token), run_dir, before)
        if harvest and not stopped and run_dir:
            keep(harvest, run_dir)
        if run_dir:  # before the report: the build then finds it gone and has nothing to remove
            shutil.rmtree(run_dir, ignore_errors=True)
        _send(control, b"stopped" if stopped else b"exit %d" % status)
        if holder is not None:
            holder.release()  # the run's mount namespaces go now, after the report
        return stopped

    def _child(self, control, start, cells):  # type: ignore[no-untyped-def]
        """In the forked process: restore what the supervisor changed and
        start the snippet; never returns (exit status 127 when starting it
        failed, after an ``error`` report)."""
        try:
            _signal.set_wakeup_fd(-1)
            _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
            os.close(self.wake_r)
            os.close(self.wake_w)
            if not self.pidns:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != self.me:
                    os._exit(1)
            if cells is not None:
                os.close(cells.mine)
            start(self.dispositions, None if cells is None else cells.theirs)
        except BaseException as exc:  # noqa: BLE001 - reported to the build
            _send(control, b"error " + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))
        os._exit(127)

    def _wait(self, control, pid, cells, run_dir, images, before):  # type: ignore[no-untyped-def]
        """Wait for the end of the snippet's process ``pid``, or a stop (the
        build closed ``control``), handing a chain's cells over meanwhile.

        :return: ``(wait status or None, whether the run was stopped)``.
        """
        feed = None
        if cells is not None:
            os.close(cells.theirs)
            feed = cells.mine
            cells.hand_over()  # the first cell: the process reads it when it is ready
        status = None
        stopped = False
        while status is None:
            try:
                ready, _, _ = select.select([control, self.wake_r] + ([feed] if feed is not None else []), [], [])
            except InterruptedError:
                continue
            if self.wake_r in ready:
                try:
                    os.read(self.wake_r, 4096)
                except BlockingIOError:
                    pass
                status = _reap(pid)
            if feed is not None and feed in ready and status is None:
                feed = self._feed(control, pid, cells, run_dir, images, before)
            if control in ready and status is None:
                try:
                    data = os.read(control, 4096)
                except OSError:
                    data = b""
                if not data:
                    stopped = True
                    break
                if data == b"next" and cells is not None and cells.waiting and feed is not None:
                    cells.hand_over()
        if cells is not None:
            os.close(cells.mine)
        return status, stopped

    def _feed(self, control, pid, cells, run_dir, images, before):  # type: ignore[no-untyped-def]
        """Read one message of the snippet's process on the feed: a cell's
        end is reported to the build (its image files first), a forgery too,
        and the process is then killed.

        :return: the feed, or ``None`` once it is no longer to be read.
        """
        try:
            message = os.read(cells.mine, 4096)
        except OSError:
            message = b""
        if not message:
            return None  # the process closed it (or exited): its end is reported as usual
        try:
            report = cells.ended(message)
        except Forged as exc:
            _send(control, b"forged %d " % exc.cell + str(exc).encode("utf-8", "replace"))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return None
        if before is not None:  # the files this cell saved are its figures
            child_mod, token = images
            child_mod.send_new_images(child_mod.frame_writer(2, token), run_dir, before)
        _send(control, report)
        return cells.mine

    def end(self):  # type: ignore[no-untyped-def]
        """Kill whatever is left (between runs, nothing should be) before exiting."""
        _kill_all(-1, self.pidns)


def supervise(control, start, *, pidns, run_dir=None, images=None, holder=None, cells=None, harvest=()):  # type: ignore[no-untyped-def]
    """Supervise one run, then exit (never returns); see :meth:`Supervisor.run`."""
    Supervisor(pidns, holder).run(control, start, run_dir, images, cells, harvest)
    os._exit(0)


#: The most a kept folder may hold (bytes) where its pair names no budget; a larger one is not kept.
KEEP_LIMIT = 1 << 30


def keep(pairs, run_dir):  # type: ignore[no-untyped-def]
    """Copy each ``folder`` of ``pairs`` (``[[folder, kept, budget], ...]``) that
    exists in ``run_dir`` to ``kept``, where nothing is there yet and no
    link lies on its way from ``run_dir`` (the run could have put one there,
    which this process, in the build's view of the files, would follow out
    of the run directory): only folders, regular
    files (their permission bits, no set-id bit) and symbolic links (as
    links, never followed), at most ``budget`` bytes (:data:`KEEP_LIMIT`
    where the pair has none; a larger folder is not kept); into a
    scratch folder beside ``kept``, renamed into place when complete, so a
    run never finds half of one.  Runs when the run's processes are gone
    (nothing changes the folder meanwhile).  Raises nothing: a folder that
    cannot be kept is not.
    """
    real = os.path.realpath(run_dir)
    for folder, kept, *budget in pairs:
        if os.path.lexists(kept) or not os.path.isdir(folder):
            continue
        if os.path.realpath(folder) != os.path.join(real, os.path.relpath(folder, run_dir)):
            continue  # a link on the way (the folder itself one too)
        scratch = f"{kept}.{os.urandom(6).hex()}.part"
        try:
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            _copy_tree(folder, scratch, [int(budget[0]) if budget else KEEP_LIMIT])
            os.rename(scratch, kept)  # fails where another run kept one meanwhile: that one stays
        except (OSError, ValueError):
            shutil.rmtree(scratch, ignore_errors=True)


def _copy_tree(source, target, budget):  # type: ignore[no-untyped-def]
    os.mkdir(target, 0o700)
    with os.scandir(source) as entries:
        for entry in entries:
            there = os.path.join(target, entry.name)
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), there)
            elif entry.is_dir(follow_symlinks=False):
                _copy_tree(entry.path, there, budget)
            elif entry.is_file(follow_symlinks=False):
                mode = entry.stat(follow_symlinks=False).st_mode & 0o777
                with open(entry.path, "rb") as f, open(os.open(there, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                    while True:
                        chunk = f.read(1 << 20)
                        if not chunk:
                            break
                        budget[0] -= len(chunk)
                        if budget[0] < 0:
                            raise OSError(27, "too large to keep")  # EFBIG
                        out.write(chunk)
                os.chmod(there, mode)
    os.chmod(target, os.stat(source).st_mode & 0o777)


def _send(control, message):  # type: ignore[no-untyped-def]
    try:
        os.write(control, message)
    except OSError:
        pass  # the build is gone


def _reap(pid):  # type: ignore[no-untyped-def]
    """Reap exited children; return ``pid``'s wait status once it has exited."""
    found = None
    while True:
        try:
            child, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if child == 0:
            return found
        if child == pid:
            found = status


def _kill_all(pid, pidns):  # type: ignore[no-untyped-def]
    """Kill and reap every process of the run but this one."""
    deadline = time.monotonic() + _REAP_LIMIT
    while time.monotonic() < deadline:
        if pidns:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            if pid > 0:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            for child in _children():
                try:
                    os.kill(child, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            child, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except OSError as exc:
            if exc.errno != errno.EINTR:
                return
            continue
        if child == 0:
            time.sleep(0.001)


def _children():  # type: ignore[no-untyped-def]
    """This process's children, from ``/proc`` (the orphans a subreaper adopted)."""
    me = os.getpid()
    found = []
    try:
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children") as f:
                found.extend(int(p) for p in f.read().split())
    except OSError:
        pass
    return found


def exec_start(argv, memory_limit, view=None):  # type: ignore[no-untyped-def]
    """A ``start`` for :func:`supervise` that executes ``argv`` as a fresh program
    (the subprocess runner, Rust binaries).

    :param view: ``view()`` runs just before ``exec`` (the run's mount
        namespace, ``_snipcheck_mounts.enter``), or ``None``.

    A chain's feed (see :class:`Cells`) is passed on as the program's last argument.
    """

    def start(dispositions, feed):  # type: ignore[no-untyped-def]
        prepare(dispositions, memory_limit, program=True)
        if view is not None:
            view()
        if feed is not None:
            os.set_inheritable(feed, True)
            os.execv(argv[0], [*argv, str(feed)])
        os.execv(argv[0], argv)

    return start


def prepare(dispositions, memory_limit, *, program):  # type: ignore[no-untyped-def]
    """Make the forked process the run's: own session, the signal dispositions
    the supervisor found (SIGPIPE and SIGXFSZ at their default before
    ``exec``, as :mod:`subprocess` leaves them), and the memory limit (soft
    and hard)."""
    os.setsid()
    for sig, handler in dispositions.items():
        if handler is None or (program and (sig in (signal.SIGPIPE, signal.SIGXFSZ) or not isinstance(handler, int))):
            handler = signal.SIG_DFL  # None: a handler installed outside Python
        try:
            # The C function, not signal.signal: that wrapper turns numbers
            # into enums both ways, which in a forked run writes to the
            # (copy-on-write) pages of the enum machinery, for each signal.
            # It knows SIG_DFL and SIG_IGN by identity: plain ints, not enums.
            _signal.signal(int(sig), int(handler) if isinstance(handler, int) else handler)
        except (OSError, ValueError, TypeError):
            pass
    if memory_limit:
        # Soft and hard: a snippet cannot raise its own limit (nor can it
        # raise the hard one back once its capabilities are dropped).
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            memory_limit = min(memory_limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (memory_limit, memory_limit))


def main(argv):  # type: ignore[no-untyped-def]
    import json

    config = json.loads(argv[1])
    control = config["control"]
    os.set_inheritable(control, False)
    images = view = holder = None
    # this process execs the snippet: its modules are not the snippet's
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if config.get("token"):
        import _snipcheck_child

        images = (_snipcheck_child, bytes.fromhex(config["token"]))
    mounts, run_dir = config.get("mounts"), config.get("run_dir")
    if mounts and config["pidns"]:
        import _snipcheck_mounts

        _snipcheck_mounts.survey()
        holder = _snipcheck_mounts.Holder()

        def view():  # type: ignore[no-untyped-def]
            _snipcheck_mounts.enter(mounts, run_dir)

    cells = None
    if config.get("cells"):
        mine, theirs = config["feed"]
        os.set_inheritable(mine, False)
        os.set_inheritable(theirs, False)
        cells = Cells(config["cells"], mine, theirs)
    supervise(
        control,
        exec_start(config["argv"], config.get("memory_limit"), view),
        pidns=config["pidns"],
        run_dir=config.get("run_dir"),
        images=images,
        holder=holder,
        cells=cells,
        harvest=config.get("harvest") or (),
    )


if __name__ == "__main__":
    main(sys.argv)
