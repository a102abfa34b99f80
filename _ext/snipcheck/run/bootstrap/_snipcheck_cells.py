"""Run a chain's cells in one fresh interpreter (the subprocess runner).

Started as ``python _snipcheck_cells.py FD`` (FD: the descriptor its supervisor
hands the cells over on, see ``_snipcheck_supervise.Cells``) with the capture installed by
``sitecustomize`` (``SNIPCHECK_CELLS`` set, so it leaves ``_snipcheck_child``
loaded for this module).  The cells then run as under the fork runner
(``_snipcheck_main.run_cells``): one ``__main__``, each cell's end heard by
the supervisor, the interpreter's exit sequence after the last one.  This
module's own frame is cut from tracebacks and stacks, and its own modules
are taken out of ``sys.modules`` (``traceback``, which the cut patches, and
what it loaded stay: a documented difference of chains).

Only the standard library may be used here.
"""

import sys

_BEFORE = set(sys.modules)

import os

import _snipcheck_main

# What the depth counter reads in a module frame of a plain run (this is one).
_PROBE = _snipcheck_main.probe()
_PLAIN = _PROBE[0][_PROBE[1]] if _PROBE else None


def _main():  # type: ignore[no-untyped-def]
    feed = int(sys.argv[1])
    os.set_inheritable(feed, False)  # the processes a cell starts do not get it
    child_mod = sys.modules.pop("_snipcheck_child")
    sys.modules.pop("_snipcheck_main", None)
    try:
        import ctypes

        libc = ctypes.CDLL(None)
    except (ImportError, OSError):
        libc = None
    for name in ("ctypes", "ctypes._endian", "_ctypes", "struct", "_struct"):
        if name not in _BEFORE:
            sys.modules.pop(name, None)
    _snipcheck_main.configure(_PROBE, _PLAIN, libc)
    child_mod.OWN_CODES.update(_snipcheck_main.OWN)
    child_mod.REPORT_CODES.add(_snipcheck_main.report.__code__)
    child_mod.OWN_CODES.add(_main.__code__)
    status, interrupted = _snipcheck_main.run_cells(feed, child_mod)
    return _snipcheck_main.finish(status, interrupted)


os._exit(_main())  # the exit sequence is done: as the fork runner's child ends
