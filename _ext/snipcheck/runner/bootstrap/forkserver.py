"""Warm fork server of the fork runner (runs in the snippet interpreter).

Started as ``python forkserver.py SOCKET_FD MODULE...``.  It imports the
preload modules once (``torch``: 2–3 s), reports whether forking is safe, then
serves run requests on a ``SOCK_SEQPACKET`` socket.  Each request carries the
snippet's script path, run directory and environment, plus three file
descriptors (the child's stdout, stderr and frame pipe).  The server forks a
child per request, answers with the child's pid, and later with its exit
status (``os.waitstatus_to_exitcode``: negative for a signal).

The child makes itself look like ``python snippets/<id>.py`` run alone: a new
session, stdin at end-of-file, the run directory as working directory, the
fixed environment, ``sys.argv`` and ``sys.path[0]`` as Python sets them, a
fresh ``__main__`` module, RNGs reseeded from the OS (a fresh process would not
share its parent's state), the recursion limit raised by the server's own stack
depth, tracebacks and ``traceback.format_stack`` (used by anomaly detection)
cut at the snippet's module frame, and the interpreter's exit sequence (wait
for threads, ``atexit`` handlers, flush) before ``os._exit``.

Only the standard library (plus the preload modules) may be used here.
"""

import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import threading


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    preload = sys.argv[2:]
    printed, errors = _preload(preload)
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
    sock.send(json.dumps({"ready": True, "problems": problems, "native_threads": native}).encode())
    if problems:
        return
    # The child-side capture is imported once here, not in every child.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import _snipcheck_child

    sys.path.remove(here)
    # Objects of the preload never need collecting in a child: keep the
    # collector (and its copy-on-write page faults) away from them.
    import gc

    gc.freeze()
    _serve(sock, _snipcheck_child.install_capture)


def _preload(modules: list) -> tuple:
    """Import ``modules`` with fd 1 and 2 captured; return (printed bytes, errors)."""
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        errors = []
        try:
            for name in modules:
                try:
                    importlib.import_module(name)
                except Exception as exc:  # noqa: BLE001 - reported to the client
                    errors.append(f"cannot preload {name}: {type(exc).__name__}: {exc}")
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        tmp.seek(0)
        return tmp.read(), errors


def _serve(sock: socket.socket, install_capture) -> None:  # type: ignore[no-untyped-def]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pending = {}
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(sock, pending)
        if sock not in ready:
            continue
        msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not msg:
            return  # the client went away
        request = json.loads(msg)
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (wake_r, wake_w):
                os.close(fd)
            sock.close()
            _child(request, fds, install_capture)  # never returns
        for fd in fds:
            os.close(fd)
        pending[pid] = request["req"]
        sock.send(json.dumps({"req": request["req"], "pid": pid}).encode())


def _reap(sock: socket.socket, pending: dict) -> None:
    while pending:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        req = pending.pop(pid, None)
        if req is not None:
            sock.send(json.dumps({"req": req, "status": os.waitstatus_to_exitcode(status)}).encode())


def _child(request: dict, fds: list, install_capture) -> None:  # type: ignore[no-untyped-def]
    status = 1
    try:
        os.setsid()
        out_w, err_w, frm_w = fds
        # stdin: an empty pipe, not /dev/null (see capture.empty_stdin for why)
        stdin_r, stdin_w = os.pipe()
        os.close(stdin_w)
        os.dup2(stdin_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (stdin_r, out_w, err_w):
            if fd > 2:
                os.close(fd)
        os.chdir(request["run_dir"])
        os.environ.clear()
        os.environ.update(request["env"])
        _reseed()
        _skip_preload_finalizers()
        install_capture(frm_w)
        del sys.modules["_snipcheck_child"]
        status = _run_main(request["script"])
    except BaseException:  # noqa: BLE001 - a failure of the runner itself must be visible
        import traceback

        try:
            os.write(2, ("snipcheck fork runner: the child could not start the snippet:\n" + traceback.format_exc()).encode())
        except OSError:
            pass
        status = 1
    finally:
        os._exit(status)


def _skip_preload_finalizers() -> None:
    """Do not run, at the child's exit, the ``weakref.finalize`` callbacks the
    preload registered (torch registers ~130 that unregister its operator
    libraries).  In a dying process they have no visible effect, and in a
    fork they cost ~20 ms of copy-on-write page faults.  Finalizers the
    snippet itself registers still run, as do all ``atexit`` handlers."""
    import weakref

    for info in list(weakref.finalize._registry.values()):  # type: ignore[attr-defined]
        info.atexit = False


def _reseed() -> None:
    random = sys.modules.get("random")
    if random is not None:
        random.seed()
    np_random = sys.modules.get("numpy.random")
    if np_random is not None:
        np_random.seed()
    torch_seed = getattr(sys.modules.get("torch"), "seed", None)
    if torch_seed is not None:
        torch_seed()


def _run_main(script: str) -> int:
    """Run ``script`` as ``__main__``; return the exit status ``python script`` would have."""
    import traceback
    import types
    from importlib.machinery import SourceFileLoader

    path = os.path.abspath(script)
    sys.argv[:] = [script]
    sys.path[0] = os.path.dirname(path)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__loader__ = SourceFileLoader("__main__", path)
    main.__cached__ = None
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    boundary = sys._getframe()
    depth = 0
    frame = boundary
    while frame is not None:
        depth += 1
        frame = frame.f_back
    sys.setrecursionlimit(sys.getrecursionlimit() + depth)
    walk_stack = traceback.walk_stack

    def snippet_stack(f):  # type: ignore[no-untyped-def]
        for frame, lineno in walk_stack(f):
            if frame is boundary:
                return
            yield frame, lineno

    traceback.walk_stack = snippet_stack
    status = 0
    code = None
    try:
        with open(path, "rb") as f:
            source = f.read()
        try:
            code = compile(source, path, "exec")
        except SyntaxError:
            etype, value, _ = sys.exc_info()
            # ``python file.py`` shows a syntax error with no traceback at all;
            # the one compile() attached holds this function's frame, which
            # the hook would print (with the runner's path) if left on it.
            sys.excepthook(etype, value.with_traceback(None), None)
            return 1
        exec(code, main.__dict__)
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException:  # noqa: BLE001 - what python prints for any uncaught exception
        etype, value, tb = sys.exc_info()
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        value = value.with_traceback(tb)
        sys.excepthook(etype, value, tb)
        status = 1
    finally:
        _finalize()
    return status


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:  # noqa: BLE001
        pass
    return 1


def _finalize() -> None:
    """What the interpreter does at exit: join threads, atexit, flush."""
    import atexit

    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass


if __name__ == "__main__":
    main()
