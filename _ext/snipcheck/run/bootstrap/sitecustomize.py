"""Start-up hook of the subprocess runner (runs inside the snippet's process).

Python imports ``sitecustomize`` at start-up, before the snippet's first line,
so no frame of this module is on the stack while the snippet runs: tracebacks
and the forward-call stacks that anomaly detection prints look exactly as under
a plain ``python snippets/x.py``.  It installs the capture of
:mod:`_snipcheck_child` with the run's frame token (from ``SNIPCHECK_TOKEN``),
then removes every trace of itself: ``sys.path`` and its import cache,
``PYTHONPATH``, ``SNIPCHECK_TOKEN`` and the runner's ``PYTHONHASHSEED`` in the
environment (the interpreter read it already; the processes the snippet starts
hash at random, as under plain python), the ``ctypes`` modules it used to make
C's stdout line-buffered, and, just before the script runs (the
``cpython.run_file`` audit event), its modules in ``sys.modules``; the
interpreter's own ``sitecustomize``, if there is one, runs as Python would
have run it.

Only the standard library may be used here.
"""

import os
import sys

_TOKEN_VAR = "SNIPCHECK_TOKEN"
#: The seed of a seeded run (``snipcheck_seed`` or the ``seed`` tag).
_SEED_VAR = "SNIPCHECK_SEED"
#: Set for a chain's run (``_snipcheck_cells.py``), which needs the capture module.
_CELLS_VAR = "SNIPCHECK_CELLS"
#: The runner's hash secret (``snipcheck.run.python.HASH_SEED_VAR``).
_HASH_SEED_VAR = "PYTHONHASHSEED"


def _install() -> None:
    token = bytes.fromhex(os.environ.pop(_TOKEN_VAR))
    cells = os.environ.pop(_CELLS_VAR, None) is not None  # _snipcheck_cells.py takes the capture over
    here = os.path.dirname(os.path.abspath(__file__))
    # This module is in sys.modules while it runs: it is ours whatever _BEFORE says.
    own = ["sitecustomize"] + [name for name in ("_snipcheck_child",) if name not in _BEFORE and not cells]
    from _snipcheck_child import install

    real = _chain(here)

    def forget() -> None:
        """Leave ``sys.modules`` as a plain start-up leaves it."""
        for name in own:
            sys.modules.pop(name, None)
        if real is not None:
            sys.modules["sitecustomize"] = real

    seed = os.environ.pop(_SEED_VAR, None)
    install(token, on_run_file=forget, seed=int(seed) if seed else None, line_buffer_c=_c_line_buffering())
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for key in [k for k in sys.path_importer_cache if os.path.abspath(k or ".") == here]:
        del sys.path_importer_cache[key]
    os.environ.pop("PYTHONPATH", None)
    os.environ.pop(_HASH_SEED_VAR, None)  # an env tag cannot declare it: it is always the runner's


def _c_line_buffering():  # type: ignore[no-untyped-def]
    """``_snipcheck_child.c_line_buffering`` through ctypes, whose modules are
    then taken out of ``sys.modules`` (the snippet imports them afresh)."""
    from _snipcheck_child import c_line_buffering

    before = set(sys.modules)
    try:
        import ctypes

        found = c_line_buffering(ctypes, ctypes.CDLL(None))
    except (ImportError, OSError):
        found = None
    for name in [name for name in sys.modules if name not in before]:
        del sys.modules[name]
    return found


def _chain(here: str):  # type: ignore[no-untyped-def]
    """Run the interpreter's own sitecustomize, if it has one, as Python would have."""
    # The import machinery's own modules: importlib.* would add to sys.modules.
    finder = sys.modules["_frozen_importlib_external"].PathFinder
    bootstrap = sys.modules["_frozen_importlib"]
    spec = finder.find_spec("sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != here])
    if spec is None or spec.loader is None or not spec.origin:
        return None
    module = bootstrap.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BEFORE = set(sys.modules)
if _TOKEN_VAR in os.environ:
    _install()
