"""Compile caches that outlive a run: each snippet's own, seen by that snippet's later runs only.

``torch.compile`` (inductor) keeps what it compiled (the generated code, the
shared objects built from it, the FX graphs, the AOT autograd graphs) in its
cache folder, by default ``$TMPDIR/torchinductor_<user>``.  A run's
``TMPDIR`` lies in its run directory, gone with it, so every run of a
snippet that compiles paid the whole compile again (about 20 s of the
chapter's cold build of 27 s), where a notebook kernel finds the machine's
cache from the last time.

So, where runs get their mount namespace, the folder a run of a snippet
left there is kept (copied by the run's supervisor before the run directory
goes, ``_snipcheck_supervise.keep``) in a folder of that snippet alone and
of that environment alone (:func:`folder`), and every later run of the same
snippet in the same environment finds it at the same place, bound writable
(``_snipcheck_mounts.enter``).  No other snippet's run ever sees it: the
folder that holds them all shows empty to every run (:func:`hidden`).  The
cache is keyed by inductor on everything that decides what it holds (the
graph, the inputs' shapes and strides, torch's version and configuration),
so what a run prints does not depend on whether it was there; the result
cache's key does not include it (a result is the same either way).

What a snippet can observe: from its second run on, ``torchinductor_<user>``
is in its ``TMPDIR`` before it compiled anything, holding what its earlier
runs compiled (``DIFFERENCES["compile cache"]``).

``SNIPCHECK_COMPILE_CACHE_DIR`` names where the kept folders go (default
``$XDG_CACHE_HOME/snipcheck/compile``, else ``~/.cache/snipcheck/compile``);
``0`` or an empty value keeps none.

Pure core: standard library only.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
from collections.abc import Mapping
from pathlib import Path

#: Where the kept folders go (``0`` or empty: none is kept).
VAR = "SNIPCHECK_COMPILE_CACHE_DIR"
#: What ``getpass.getuser()`` reads first, in its order (inductor names its folder by it).
_USER_VARS = ("LOGNAME", "USER", "LNAME", "USERNAME")


def root() -> Path | None:
    """The folder that holds the kept compile caches, or ``None`` where none is kept."""
    named = os.environ.get(VAR)
    if named is not None:
        return Path(named).expanduser() if named not in ("", "0") else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "snipcheck" / "compile"


def hidden() -> list[str]:
    """The folder that holds the kept compile caches, made where it is not
    there yet and resolved, for the runs' mounts to show empty (each run sees
    only its own kept cache, in its ``TMPDIR``); ``[]`` where none is kept
    or it cannot be made."""
    base = root()
    if base is None:
        return []
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return []
    return [os.path.realpath(base)]


def inductor_folder(env: Mapping[str, str]) -> str:
    """The name of inductor's default cache folder in a run's ``TMPDIR``
    (``torch._inductor.runtime.cache_dir_utils.default_cache_dir``): by
    the user name ``getpass.getuser()`` finds in the run's environment ``env``."""
    user = next((env[name] for name in _USER_VARS if env.get(name)), None)
    if user is None:
        try:
            user = pwd.getpwuid(os.getuid()).pw_name
        except KeyError:
            user = f"uid_{os.getuid()}"
    return "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)


def folder(base: Path, snippet_id: str, environment: str) -> Path:
    """The kept cache of ``snippet_id`` (a chain's: its first cell's) in the environment ``environment``."""
    digest = hashlib.sha256(snippet_id.encode("utf-8")).hexdigest()[:32]
    return base / re.sub(r"[^A-Za-z0-9_.-]", "_", environment) / digest


def plan(snippet_id: str, environment: str | None, run_dir: str, env: Mapping[str, str]) -> tuple[list[list[str]], list[list[str]]]:
    """What a run of ``snippet_id`` in the run directory ``run_dir`` does with its compile cache.

    :param environment: the environment fingerprint's id (``Stamp.env``); ``None``: nothing is kept.
    :param env: the run's environment (its ``TMPDIR`` and user variables).
    :return: ``(writable, harvest)``: ``[[kept folder, path in the run]]``
        for the run's mounts where a folder is kept already, else
        ``[[path in the run, folder to keep]]`` for its supervisor; both
        empty where nothing is kept.
    """
    base = root()
    tmpdir = env.get("TMPDIR")
    if base is None or not environment or not tmpdir or not os.path.realpath(tmpdir).startswith(run_dir + os.sep):
        return [], []
    kept = folder(base, snippet_id, environment)
    inside = os.path.join(tmpdir, inductor_folder(env))
    if kept.is_dir():
        return [[str(kept), inside]], []
    return [], [[inside, str(kept)]]
