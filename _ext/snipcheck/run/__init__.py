"""Runners: execute one snippet in a fresh process and return its raw result.

A runner is anything with a ``name`` and a :meth:`Runner.run` method; the rest
of snipcheck only sees this interface, so a plain subprocess runner and a warm
forking one are interchangeable.  :func:`make_runner` picks one by language.

What every run of every runner guarantees (issue 11):

* *the terminal's order*: stdout and stderr are two datagram sockets into one
  receive queue, so writes from Python, from C and from child processes are
  read in the order the kernel took them, labelled by the socket that sent
  them (:mod:`.capture`);
* *plain python*: what the snippet can observe of its process is what
  ``python snippets/<id>.py`` observes in the fixed environment, except the
  short list :data:`DIFFERENCES` (``tests/run/test_parity.py`` checks the rest);
* *lifecycle*: a supervisor process is the snippet's parent; in a PID
  namespace of its own where the kernel allows it (:mod:`.sandbox`), it kills
  everything the run started when the snippet's process ends, and the run
  ends with the build however the build ends; a memory limit
  (``RLIMIT_DATA``) per process; temporary folders removed on every exit path.
* *files*: where the kernel allows it, the project's folders are read-only to
  the run (a write there fails with ``EROFS``, whatever the path) and ``/tmp``
  and ``/dev/shm`` are its own, gone with it (:mod:`.sandbox`).

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.run.python import DEFAULT_MEMORY_LIMIT, HASH_SEED


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


class ChainRunner(Runner, Protocol):
    """A runner that can also run the cells of a chain in one process (the Python runners)."""

    def run_chain(self, cells: Sequence[Snippet], *, timeouts: Sequence[float], output_limit: int) -> list[RunResult]:
        """Run ``cells`` one after the other in one fresh process, sharing one
        ``__main__`` namespace and run directory, as a notebook runs its cells.

        :param timeouts: each cell's limit in seconds, counted from the end
            of the cell before it.
        :param output_limit: bytes of output kept per cell.
        :return: one result per cell that ran, in order.  A cell that ends
            other than normally (or by raising the exception its tags expect)
            ends the process: its result is the last, and the cells after it
            did not run.  A cell whose ``path`` is ``""`` runs nothing and has
            no file (the mark that the cell before it let the process go on).
        :raises OSError: if the interpreter cannot be started.
        """
        ...


#: What a run shows differently from plain ``python snippets/<id>.py`` in the
#: fixed environment, under both runners unless said otherwise: the whole list
#: (``tests/run/test_parity.py`` checks everything else, and each of these).
DIFFERENCES = {
    "process ids": "the snippet's process has a small pid in a PID namespace of its own where the kernel "
    "allows it (2 under the subprocess runner; under the fork runner it grows with each process its slot "
    "started before), its parent (process 1 there) is snipcheck's supervisor, which ignores signals from "
    "the run, and it leads a session of its own; its /proc is that namespace's: /proc/self is the process, "
    "/proc/1 the supervisor (whose command line is the interpreter running snipcheck's supervisor or fork "
    "server), and no process outside the run is there, so ps, psutil and /proc/<pid> look-ups see the run's "
    "processes only",
    "stdout and stderr": "file descriptors 1 and 2 are datagram sockets where a terminal run has a "
    "terminal: isatty() is False, and while sys.stdout, sys.stderr and C's stdout are buffered as on a "
    "terminal (line-buffered), a process the snippet starts buffers its stdout as for a file (so its "
    "partial and unflushed writes show at its exit); one write(2) of more than about 4 MiB to them from C "
    "code or a child process fails with ENOBUFS (Python's own sys.stdout and sys.stderr write in pieces), "
    "and one set non-blocking fails with EAGAIN once about 4 MiB, or without namespaces ten writes, wait "
    "unread (a pipe: 64 KiB)",
    "memory limit": "the soft and the hard RLIMIT_DATA of each process of the run are the run's memory "
    "limit (snipcheck_memory_limit, 4 GiB by default; the memory tag raises it), so no process of the run "
    "can raise its own: each process the snippet starts has a limit of its own, and shared or file-backed "
    "mappings do not count",
    "stdin and command line": "stdin is a pipe at end of file (a read returns nothing at once, input() "
    "raises EOFError, isatty() is False) where a terminal run reads the terminal, and the process has no "
    "controlling terminal (opening /dev/tty fails with ENXIO); sys.argv is ['snippets/<id>.py'] and "
    "sys.orig_argv [the interpreter's path as the build names it, 'snippets/<id>.py'], while "
    "/proc/self/cmdline (what ps shows) is the command line the process started with: the fork server's "
    "under the fork runner, and _snipcheck_cells.py with every cell's path for a chain under the subprocess "
    "runner",
    "capabilities": "where the kernel allows it, the run has no capability (every set empty, the bounding "
    "and ambient ones too) and no_new_privs is set, where plain python run by root has them all: the uid "
    "stays 0, so what root owns is read and written as before, but what needs a capability fails with EPERM "
    "or EACCES (files of other users against their permission bits, chown, ports below 1024, raw sockets, a "
    "negative nice value, mount, ptrace of a process outside the run), a set-user-id program gains "
    "nothing, and the kernel's keyrings are out of reach (add_key, request_key and keyctl fail with EPERM, "
    "a seccomp filter as Docker's default one)",
    "fork runner: frames": "the fork runner's own frames lie below the snippet's module frame, where "
    "sys._getframe(1), inspect.stack() and a warnings stacklevel beyond the snippet's frames reach them",
    "fork runner: preload": "what the fork server preloaded is in memory and in the interpreter's internals "
    "(gc.get_objects(), gc.get_freeze_count(), sys.path_importer_cache, the import machinery's "
    "_find_and_load, memory use, /proc/self/maps); a module the preload also loaded, imported on its own "
    "(numpy without torch), brings back what its first import loaded: a module first loaded inside another "
    "one's import (torch._inductor inside torch._dynamo's) brings back only what it loaded there, and the "
    "other comes back when it is imported, so sys.modules may hold fewer modules than in a plain run until "
    "then; attributes a preloaded submodule set on its package stay set (torch._dynamo on torch)",
    "figures": "a snippet that imports matplotlib gets the Agg backend (unless it sets MPLBACKEND or calls "
    "matplotlib.use), its plt.show() sends each open figure to the page and closes it where plain python "
    "shows nothing, and from that import on the import machinery's _find_and_load is wrapped; the image "
    "files (*.png, *.svg) it leaves in its working directory are read after it ends (after each cell in a "
    "chain)",
    "fork runner: C exit handlers": "atexit(3) handlers and C++ static destructors do not run at exit (C "
    "stdio buffers are flushed)",
    "fork runner: signal 33": "the kernel shows signal 33 (glibc's own SIGSETXID) as caught, in SigCgt of "
    "/proc/self/status, once the preload has started a thread (numpy's OpenBLAS does), where a plain run "
    "shows it once the snippet starts one; no signal API shows it and no program can set it through libc",
    "files": "where the kernel allows it (root, CAP_SYS_ADMIN), the whole file system is read-only to the "
    "run (EROFS: the project, /etc, /usr, /var/tmp, the home folder of the build's user, /proc/sys) but its "
    "run directory (its working directory, HOME and TMPDIR), and /tmp and /dev/shm are empty tmpfs of the "
    "run's own, removed with it, but for the run directory's entry (snipcheck-...) in the one it lies in "
    "and what the interpreter needs to start that lies there (a virtual environment under /tmp, bound back "
    "read-only); no device file opens (EACCES: the disks, the consoles, /dev/kmsg) but /dev/null, zero, "
    "full, random, urandom and tty and the accelerators' (nvidia*, dri, kfd, accel*, dxg, neuron*), and "
    "/dev/pts holds the run's own pseudo-terminals only (/dev/ptmx makes them there); a snippet's own "
    "compile cache (torchinductor_<user> in its TMPDIR) is kept for the later runs of the same code in the "
    "same environment (as plain python finds its machine's /tmp/torchinductor_<user>), and no other code's "
    "run sees it, another version of the same snippet included (the folder that holds the kept ones shows "
    "empty)",
    "System V IPC": "where the kernel allows it, the run has System V shared memory, message queues and "
    "semaphores and POSIX message queues of its own (an IPC namespace): it finds none of the machine's or "
    "another run's, and what it makes is gone with its last process, where plain python shares the "
    "machine's (ipcs lists them) and what it leaves there stays",
    "hash seed": "the hash secret is fixed (that of PYTHONHASHSEED=0, under which the interpreter starts; "
    "os.environ does not hold it), so hash() of str and bytes and the order of sets of them are the same on "
    "every run where plain python varies them, and sys.flags.hash_randomization is 0; even under that seed "
    "a set display of strings can print in another order than a plain run's (CPython rebuilds such a "
    "constant when its strings were interned before, and the runner's code, the fork runner's preload too, "
    "interns some); snipcheck record, accept and review run an output again under four other seeds and "
    "refuse one that changes",
}

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
    protect: Sequence[str] = (),
    hash_seed: int = HASH_SEED,
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
    :param protect: folders no run may change (the project's; see
        :func:`snipcheck.run.sandbox.protected_paths`).
    :param hash_seed: the hash secret of Python runs (``PYTHONHASHSEED``;
        ``record`` runs an output again under others, see ``DIFFERENCES["hash seed"]``).
    :raises ValueError: for a language or runner kind no runner handles.
    """
    if language == "python":
        if kind == "fork":
            from snipcheck.run.fork import ForkRunner

            wanted = tuple(m for m in preload if not (m == "torch" and stamp.torch is None))
            return ForkRunner(
                python=python, stamp=stamp, preload=wanted, memory_limit=memory_limit, protect=protect, hash_seed=hash_seed
            )
        if kind == "subprocess":
            from snipcheck.run.python import SubprocessRunner

            return SubprocessRunner(
                python=python, stamp=stamp, memory_limit=memory_limit, protect=protect, hash_seed=hash_seed
            )
        raise ValueError(f"unknown runner {kind!r}; use one of {', '.join(PYTHON_RUNNERS)}")
    if language == "rust":
        import tempfile

        from snipcheck.run.environment import host_platform, rustc_version
        from snipcheck.run.rust import RustRunner

        rust_stamp = Stamp(python="", torch=None, device="CPU", platform=host_platform(), rustc=rustc_version())
        build = build_dir or Path(tempfile.mkdtemp(prefix="snipcheck-rust-"))
        return RustRunner(build, rust_stamp, memory_limit, protect)
    raise ValueError(f"no runner for language {language!r}")
