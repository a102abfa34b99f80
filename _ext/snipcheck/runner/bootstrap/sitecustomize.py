"""Start-up hook of the subprocess runner (runs inside the snippet's process).

Python imports ``sitecustomize`` at start-up, before the snippet's first line,
so no frame of this module is on the stack while the snippet runs: tracebacks
and the forward-call stacks that anomaly detection prints look exactly as under
a plain ``python snippets/x.py``.  It installs the frame capture of
:mod:`_snipcheck_child` on the descriptor named by ``SNIPCHECK_FRAME_FD``, then
removes every trace of itself (``sys.path``, ``PYTHONPATH``) and runs the
interpreter's own ``sitecustomize`` if there is one.

Only the standard library may be used here.
"""

import os
import sys

_FD_VAR = "SNIPCHECK_FRAME_FD"


def _install() -> None:
    fd = int(os.environ.pop(_FD_VAR))
    here = os.path.dirname(os.path.abspath(__file__))
    from _snipcheck_child import install_capture

    install_capture(fd)
    del sys.modules["_snipcheck_child"]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    os.environ.pop("PYTHONPATH", None)
    _chain(here)


def _chain(here: str) -> None:
    """Run the interpreter's own sitecustomize, if it has one, as Python would have."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None or not spec.origin:
        return
    if os.path.dirname(os.path.abspath(spec.origin)) == here:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if _FD_VAR in os.environ:
    _install()
