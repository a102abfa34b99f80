"""Run a chain's cells in one fresh interpreter (the subprocess runner).

Started as ``python _snipcheck_cells.py SCRIPT EXPECTED [SCRIPT EXPECTED ...]``
(each cell's path and the exception type its tags expect) with the capture installed by
``sitecustomize`` (``SNIPCHECK_CELLS`` set, so it leaves ``_snipcheck_child``
loaded for this module).  The cells then run as under the fork runner
(``_snipcheck_main.run_cells``): one ``__main__``, each cell's output marked
off by a frame, the interpreter's exit sequence after the last one.  This
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
    args = sys.argv[1:]
    cells = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
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
    child_mod.OWN_CODES.add(_main.__code__)
    status, interrupted = _snipcheck_main.run_cells(cells, child_mod)
    return _snipcheck_main.finish(status, interrupted)


os._exit(_main())  # the exit sequence is done: as the fork runner's child ends
