"""Run a script as ``__main__`` in a forked interpreter, as ``python file.py`` runs it.

Used by the fork server's child (``forkserver.py``): :func:`run_main` sets up
``__main__``, ``sys.argv``, ``sys.orig_argv`` and ``sys.path[0]``, runs the
code with the recursion depth a module frame has in a plain run
(:func:`exec_at_top`), and reports an uncaught exception, ``SystemExit`` or
``KeyboardInterrupt`` as the interpreter does; :func:`finish` is the
interpreter's exit sequence.  Frames of these functions count as "the
interpreter itself" for the capture's labels (:data:`OWN`).

Depth: the thread state's remaining-depth counter is found by observation
(:func:`probe`); the server reads it in its own module frame, which is what a
plain run's module frame reads (:func:`configure`), and :func:`calibrate`
measures what ``exec`` itself takes.  Where the counter cannot be found, the
recursion limit is raised by the depth of the frames below instead.

Only the standard library may be used here.
"""

import atexit
import gc
import importlib.machinery
import os
import signal
import sys
import traceback
import types

_state = {"probe": None, "plain": None, "calibration": None, "libc": None, "unraisable": None, "child": None}


def _unraisable_args_type():  # type: ignore[no-untyped-def]
    """The type of what ``sys.unraisablehook`` receives (not in any module):
    caught from one unraisable exception, with the hook set back."""
    found = []
    hook = sys.unraisablehook
    sys.unraisablehook = found.append

    class _Probe:
        def __del__(self):  # type: ignore[no-untyped-def]
            raise RuntimeError

    try:
        _Probe()
    finally:
        sys.unraisablehook = hook
    return type(found[0]) if found else None


def probe():  # type: ignore[no-untyped-def]
    """The thread state's remaining-depth counter: ``(ints, index)``, or ``None``.

    Found by observation: the one int that drops by one per Python frame and
    sits just before an int equal to the recursion limit.
    """
    try:
        import ctypes

        get = ctypes.pythonapi.PyThreadState_Get
        get.restype = ctypes.c_void_p
        ints = (ctypes.c_int * 32).from_address(get())
        limit = sys.getrecursionlimit()
        outer = list(ints)
        inner = (lambda: list(ints))()  # noqa: PLC3002 - one frame deeper on purpose
        found = [i for i in range(31) if outer[i] - inner[i] == 1 and outer[i + 1] == inner[i + 1] == limit]
        return (ints, found[0]) if len(found) == 1 else None
    except Exception:  # noqa: BLE001 - no ctypes, no pythonapi: fall back
        return None


def configure(counter, plain, libc):  # type: ignore[no-untyped-def]
    """Set the depth counter (from :func:`probe`), what it reads in a plain
    run's module frame, and libc (for ``fflush`` at exit; may be ``None``).

    :return: whether the exact depth is available (the calibration worked).
    """
    _state.update(probe=counter, plain=plain, libc=libc, unraisable=_unraisable_args_type())
    _state["calibration"] = calibrate()
    return _state["calibration"] is not None


def calibrate():  # type: ignore[no-untyped-def]
    """How much of the depth counter :func:`exec_at_top`'s ``exec`` itself uses."""
    if _state["probe"] is None:
        return None
    ints, index = _state["probe"]
    namespace = {"_ints": ints, "_index": index}
    caller = exec_at_top(compile("_seen = _ints[_index]", "<probe>", "exec"), namespace, None)
    return caller - namespace["_seen"]


def exec_at_top(code, namespace, calibration):  # type: ignore[no-untyped-def]
    """``exec(code, namespace)`` with the depth a module frame has in a plain run.

    :return: the depth counter as read here (before any adjustment).
    """
    if _state["probe"] is None:
        exec(code, namespace)
        return None
    ints, index = _state["probe"]
    here = ints[index]
    adjust = 0 if calibration is None else _state["plain"] - (here - calibration)
    ints[index] += adjust
    try:
        exec(code, namespace)
    finally:
        ints[index] -= adjust
    return here


def run_main(script, child_mod):  # type: ignore[no-untyped-def]
    """Run ``script`` as ``__main__``: return the exit status ``python script``
    would have, and whether it ended by ``KeyboardInterrupt``.

    :param child_mod: the capture module (``_snipcheck_child``).
    """
    _state["child"] = child_mod
    main = _fresh_main(script)
    status, interrupted, _raised = _run_in(script, main, child_mod)
    return status, interrupted


def run_cells(feed, child_mod):  # type: ignore[no-untyped-def]
    """Run a chain's cells one after the other in one ``__main__``, as a
    notebook runs its cells in one kernel; return ``(status, interrupted)`` as
    :func:`run_main` does, for the last cell that ran.

    :param feed: this process's end of the socket its supervisor hands the
        cells over on (``_snipcheck_supervise.Cells``): each message is one
        cell, ``index NUL script NUL expected NUL last NUL mode``
        (``expected``: the exception type its tags expect, ``"exception"``
        for any, ``"ok"`` or another ending: none; ``last``: ``1`` for the
        chain's last cell; ``mode``: how a tutorial script's cell runs, see
        :func:`_run_in`).

    After each cell but the last, when it ended normally (or raised the
    exception it expects), this process says so on ``feed`` (``end INDEX
    STATUS SECONDS``: status 0, or 1 for the expected exception) and waits
    for the next cell: the supervisor, which hears it, sends the image files
    the cell left and tells the build where the cell's output ends, then
    hands the next cell over.  A cell that ends in any other way (an
    unexpected exception, ``SystemExit``, ``KeyboardInterrupt``) ends the
    process as ``python`` would end it, and the cells after it do not run;
    so does a cell after which no frame can be written (it closed or
    redirected descriptor 2).  A cell whose script is ``""`` runs nothing:
    put last, it marks whether the cell before it let the process go on
    (see ``snipcheck.engine.chain_job``).
    """
    import time

    _state["child"] = child_mod
    main = None
    status, interrupted = 1, False
    while True:
        handed = _next_cell(feed, child_mod)
        if handed is None:  # nothing more is handed over (the supervisor refused or is gone)
            return status, interrupted
        index, script, expected, last, mode = handed
        if main is None:
            main = _fresh_main(script)
        started = time.perf_counter()
        status, interrupted, raised = _run_in(script, main, child_mod, mode) if script else (0, False, None)
        if last or interrupted or isinstance(raised, SystemExit):
            return status, interrupted
        if raised is None and status == 0:
            ending = 0
        elif raised is not None and expected not in ("", "ok") and (
            # as the check step matches it (judge.compare): the name, or its last part
            expected in (qualified_name(type(raised)), type(raised).__qualname__.rsplit(".", 1)[-1])
            or (expected == "exception" and isinstance(raised, Exception))
        ):
            ending = 1
        else:
            return status, interrupted
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        if _state["libc"] is not None:
            _state["libc"].fflush(None)
        seconds = time.perf_counter() - started
        if not child_mod.frames_ok():
            return status, interrupted
        child_mod.new_cell()
        try:
            os.write(feed, b"end %d %d %.6f" % (index, ending, seconds))
        except OSError:
            return status, interrupted


def _next_cell(feed, child_mod):  # type: ignore[no-untyped-def]
    """The next cell the supervisor hands over on ``feed``: ``(index, script,
    expected, last, mode)``, or ``None`` when it sends none (end-of-file).

    A signal handler of an earlier cell that raises while this waits (an
    alarm, say) is reported as python reports an uncaught exception, and
    nothing more runs.
    """
    try:
        message = os.read(feed, 1 << 16)
    except OSError:
        return None
    except BaseException as exc:  # noqa: BLE001 - raised by a handler of the snippet's
        report(type(exc), exc, None, child_mod)
        return None
    parts = message.split(b"\0")
    if len(parts) != 5:
        return None
    return int(parts[0]), os.fsdecode(parts[1]), parts[2].decode(), parts[3] == b"1", parts[4].decode()


def qualified_name(etype):  # type: ignore[no-untyped-def]
    """The name tags use for an exception type: ``RuntimeError``, ``torch.OutOfMemoryError``."""
    module = getattr(etype, "__module__", "builtins")
    qualname = getattr(etype, "__qualname__", str(etype))
    return qualname if module in ("builtins", "__main__") else module + "." + qualname


def _fresh_main(script):  # type: ignore[no-untyped-def]
    """A new ``__main__`` for ``script`` in ``sys.modules``; the recursion
    limit and ``traceback.walk_stack`` set up for the snippet (once)."""
    path = os.path.abspath(script)
    main = types.ModuleType("__main__")
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__spec__ = None
    main.__annotations__ = {}
    main.__builtins__ = sys.modules["builtins"]
    main.__file__ = path
    main.__cached__ = None
    sys.modules["__main__"] = main
    if _state["calibration"] is None:
        depth = 0
        frame = sys._getframe()
        while frame is not None:
            depth += 1
            frame = frame.f_back
        sys.setrecursionlimit(sys.getrecursionlimit() + depth)
    walk_stack = traceback.walk_stack
    boundary = exec_at_top.__code__

    def snippet_stack(f):  # type: ignore[no-untyped-def]
        for frame, lineno in walk_stack(f):
            if frame.f_code is boundary:
                return
            yield frame, lineno

    traceback.walk_stack = snippet_stack
    return main


def _run_in(script, main, child_mod, mode=""):  # type: ignore[no-untyped-def]
    """Run ``script`` in ``main``'s namespace: ``(status, interrupted, the uncaught exception or None)``.

    :param mode: for a cell of a tutorial script, how it runs, as a notebook
        (and sphinx-gallery) runs it, a comma-separated list: ``repr``, the
        value of its last statement when that is a bare expression is shown,
        through ``sys.displayhook`` as the interactive interpreter shows it
        (its ``repr``, nothing for ``None``); ``figures``, every matplotlib
        figure still open at its end is shown, then closed (not after
        ``SystemExit`` or ``KeyboardInterrupt``); ``folder``, the script's
        folder (the one above the cell's) is ``sys.path[0]``, where the
        modules beside the script are; ``inline``, its figures are drawn as
        IPython's inline backend draws them (cropped to ``bbox_inches="tight"``),
        for a notebook's cell.
    """
    modes = mode.split(",")
    inline = "inline" in modes
    child_mod._figures["tight"] = inline
    child_mod.hold_stderr(inline)  # a notebook's cell: its streams in the order Jupyter stores them
    try:
        found = _run_code(script, main, child_mod, "repr" in modes, "folder" in modes, inline)
        if "figures" in modes and not isinstance(found[2], SystemExit | KeyboardInterrupt):
            try:
                child_mod.show_open_figures()
            except Exception as exc:  # noqa: BLE001 - drawing the figure failed: the cell's own error
                report(type(exc), exc, exc.__traceback__, child_mod)
                return 1, False, exc
        return found
    finally:
        child_mod.hold_stderr(False)


def _split_last(source, path):  # type: ignore[no-untyped-def]
    """``source`` compiled as its statements but the last, then the last in
    the interactive mode (which hands its value to ``sys.displayhook``), when
    the last is a bare expression; else ``None``.  Built from the compiler's
    own syntax tree (``PyCF_ONLY_AST``), with no module imported."""
    only_ast = 0x400
    tree = compile(source, path, "exec", only_ast)
    if not tree.body or type(tree.body[-1]).__name__ != "Expr":
        return None
    interactive = type(compile("0", "<display>", "single", only_ast))
    head = type(tree)(body=tree.body[:-1], type_ignores=[])
    return compile(head, path, "exec"), compile(interactive(body=[tree.body[-1]]), path, "single")


def _displayed(child_mod):  # type: ignore[no-untyped-def]
    """A ``sys.displayhook`` for a notebook cell's last expression: what the
    cell wrote to stderr first (held, see ``hold_stderr``), then its value,
    as a kernel sends its streams before the cell's result."""
    hook = sys.displayhook

    def shown(value):  # type: ignore[no-untyped-def]
        child_mod.release_held()
        hook(value)

    child_mod.OWN_CODES.add(shown.__code__)
    return hook, shown


def _run_code(script, main, child_mod, show_last, in_folder=False, inline=False):  # type: ignore[no-untyped-def]
    calibration = _state["calibration"]
    path = os.path.abspath(script)
    sys.argv[:] = [script]
    sys.orig_argv[:] = [sys.orig_argv[0], script]
    sys.path[0] = os.path.dirname(os.path.dirname(path) if in_folder else path)
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__file__ = path
    codes = ()
    try:
        with open(path, "rb") as f:
            source = f.read()
        try:
            code = compile(source, path, "exec")
        except SyntaxError as exc:
            broken = exc
        else:
            broken = None
        if broken is not None:
            # ``python file.py`` shows a syntax error with no traceback at all;
            # the one compile() attached holds this function's frame, which
            # the hook would print (with the runner's path) if left on it.
            report(type(broken), broken.with_traceback(None), None, child_mod)
            return 1, False, broken
        codes = (_split_last(source, path) if show_last else None) or (code,)
        for n, part in enumerate(codes):
            if inline and n == 1:  # a notebook cell's last expression, shown after its streams
                hook, sys.displayhook = _displayed(child_mod)
                try:
                    exec_at_top(part, main.__dict__, calibration)
                finally:
                    sys.displayhook = hook
            else:
                exec_at_top(part, main.__dict__, calibration)
    except SystemExit as exc:
        return exit_status(exc), False, exc
    except BaseException as exc:  # noqa: BLE001 - what python prints for any uncaught exception
        uncaught = exc
    else:
        return 0, False, None
    # Reported outside the except block, as the interpreter does: an error in
    # the hook must not get the snippet's exception as its context.
    tb = uncaught.__traceback__
    while tb is not None and tb.tb_frame.f_code not in codes:
        tb = tb.tb_next
    uncaught = uncaught.with_traceback(tb)
    del tb
    report(type(uncaught), uncaught, uncaught.__traceback__, child_mod)
    return 1, isinstance(uncaught, KeyboardInterrupt), uncaught


def report(etype, value, tb, child_mod):  # type: ignore[no-untyped-def]
    """What the interpreter does with an uncaught exception (``_PyErr_PrintEx``)."""
    child_mod.strip(value, tb)
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    hook = getattr(sys, "excepthook", None)
    sys.audit("sys.excepthook", hook if hook is not None else None, etype, value, tb)
    if hook is None:
        sys.stderr.write("sys.excepthook is missing\n")
        sys.__excepthook__(etype, value, tb)
        return
    try:
        hook(etype, value, tb)
    except BaseException as err:  # noqa: BLE001 - reported as Python reports it
        err = err.with_traceback(err.__traceback__.tb_next)  # from the hook's frame on, as from C
        sys.stderr.write("Error in sys.excepthook:\n")
        sys.__excepthook__(type(err), err, err.__traceback__)
        sys.stderr.write("\nOriginal exception was:\n")
        sys.__excepthook__(etype, value, tb)


def exit_status(exc):  # type: ignore[no-untyped-def]
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code))
        sys.stderr.write("\n")
    except Exception:  # noqa: BLE001
        pass
    return 1


def finish(status, interrupted):  # type: ignore[no-untyped-def]
    """What the interpreter does at exit: join threads, atexit, flush, release ``__main__``."""
    threading_mod = sys.modules.get("threading")
    if threading_mod is not None:
        try:
            threading_mod._shutdown()  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001
            pass
    atexit._run_exitfuncs()
    flushed = flush_std_files()
    # Module teardown: the last references to __main__ go, and the collector
    # runs the finalizers of what its globals held.
    sys.last_type = sys.last_value = sys.last_traceback = None
    sys.modules.pop("__main__", None)
    gc.collect()
    if not flushed:
        status = 120  # Py_RunMain: the finalization failed
    # The interpreter's second flush finds sys cleared: the streams are
    # flushed as they are freed, every error ignored.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130  # not reached: SIGINT ends the process
    if _state["libc"] is not None:
        _state["libc"].fflush(None)  # what exit(3) does for C code's stdio buffers (os._exit does not)
    return status


def flush_std_files():  # type: ignore[no-untyped-def]
    """What the interpreter's finalization does to ``sys.stdout`` and
    ``sys.stderr`` (``flush_std_files``): flush each one not closed; a
    failure of stdout's is reported as unraisable, of stderr's ignored.

    :return: whether both flushed.
    """
    ok = True
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is None or _closed(stream):
            continue
        try:
            stream.flush()
        except Exception as exc:  # noqa: BLE001 - as the interpreter: reported, never raised
            ok = False
            if name == "stdout":
                write_unraisable(exc, stream)
    return ok


def _closed(stream):  # type: ignore[no-untyped-def]
    try:
        return bool(stream.closed)
    except Exception:  # noqa: BLE001 - file_is_closed: an error reads as open
        return False


def write_unraisable(exc, obj):  # type: ignore[no-untyped-def]
    """``PyErr_WriteUnraisable(obj)`` for ``exc``: its traceback from the
    first frame that is not this runner's, through ``sys.unraisablehook``."""
    child_mod = _state["child"]
    tb = exc.__traceback__
    if child_mod is not None:
        child_mod.strip(exc, tb)
    while tb is not None and child_mod is not None and tb.tb_frame.f_code in child_mod.OWN_CODES:
        tb = tb.tb_next
    exc = exc.with_traceback(tb)
    kind = _state["unraisable"]
    hook = getattr(sys, "unraisablehook", None)
    if kind is None:
        return
    args = kind((type(exc), exc, tb, None, obj))
    try:
        sys.audit("sys.unraisablehook", hook, args)
        (hook if hook is not None else sys.__unraisablehook__)(args)
    except BaseException as err:  # noqa: BLE001 - a failing hook is reported by the default one
        err = err.with_traceback(None)
        try:
            sys.__unraisablehook__(kind((type(err), err, None, "Exception ignored in sys.unraisablehook", hook)))
        except BaseException:  # noqa: BLE001 - stderr is gone too: the interpreter clears the error
            pass


#: Frames of these are "the interpreter itself" for the capture (labels, traceback cuts).
OWN = tuple(
    f.__code__
    for f in (run_main, run_cells, _next_cell, _run_in, _run_code, finish, report, exit_status, exec_at_top, flush_std_files, write_unraisable)
)
