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
goes, ``_snipcheck_supervise.keep``) in a folder of that very code alone
(the snippet's whole source, helpers, data files named, tags and passed
variables, a chain's every cell: :func:`code_key`) and of that environment
alone (:func:`folder`), and every later run of the same code in the same
environment finds it at the same place, bound writable
(``_snipcheck_mounts.enter``).  No other code's run ever sees it, another
version of the same snippet included: the folder that holds them all shows
empty to every run (:func:`hidden`).  Keyed by the snippet's id alone, an
earlier version could leave a file there (a pickled FX graph, which inductor
loads, runs code) that changed what a later, honest version printed.  The
cache is keyed by inductor on everything that decides what it holds (the
graph, the inputs' shapes and strides, torch's version and configuration),
so what a run prints does not depend on whether it was there; the result
cache's key does not include it (a result is the same either way).

What a snippet can observe: from its second run on, ``torchinductor_<user>``
is in its ``TMPDIR`` before it compiled anything, holding what its earlier
runs of the same code left there, as plain python finds its machine's
``/tmp/torchinductor_<user>`` (``DIFFERENCES["compile cache"]``).

``SNIPCHECK_COMPILE_CACHE_DIR`` names where the kept folders go (default
``$XDG_CACHE_HOME/snipcheck/compile``, else ``~/.cache/snipcheck/compile``);
``0`` or an empty value keeps none.

The kept folders have a budget, ``SNIPCHECK_COMPILE_CACHE_SIZE`` (default
1 GiB; :func:`limit`): a folder larger than it is never kept, one that a
later run grew past it is dropped after that run (:func:`trim`), and once a
process, before its first run, the least recently used folders go until
all of them together fit in it (:func:`prune`), except those used within
the last :data:`GRACE` seconds (a run may have one bound).  Without it,
every environment (each torch version, each change of a requirement) kept
another copy for good: inductor's precompiled header alone is ~150 MB.

Pure core: standard library and :mod:`snipcheck.files`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import pwd
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from snipcheck.files import resolved_folder

if TYPE_CHECKING:
    from snipcheck.model import Snippet

log = logging.getLogger("snipcheck")

#: Where the kept folders go (``0`` or empty: none is kept).
VAR = "SNIPCHECK_COMPILE_CACHE_DIR"
#: The most all kept folders may hold together (bytes; ``K``, ``M``, ``G`` suffixes, powers of 1024).
SIZE_VAR = "SNIPCHECK_COMPILE_CACHE_SIZE"
DEFAULT_SIZE = 1 << 30
#: Seconds since its last use within which a kept folder is never pruned (a run may have it bound).
GRACE = 3600.0
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
#: The roots pruned by this process already, and the size variables already warned about.
_pruned: set[str] = set()
_warned: set[str] = set()
#: What ``getpass.getuser()`` reads first, in its order (inductor names its folder by it).
_USER_VARS = ("LOGNAME", "USER", "LNAME", "USERNAME")


def root() -> Path | None:
    """The folder that holds the kept compile caches (absolute: a relative
    :data:`VAR` is taken from the current folder), or ``None`` where none is kept."""
    named = os.environ.get(VAR)
    relative = named is not None and not os.path.isabs(named) and not named.startswith("~")
    return _root(named, os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"), os.getcwd() if relative else None)


@functools.lru_cache(maxsize=8)
def _root(named: str | None, xdg: str | None, home: str | None, cwd: str | None) -> Path | None:
    """:func:`root` for these values of its variables (and the current
    folder, for a relative :data:`VAR`), worked out once: it is asked twice
    a run."""
    del home, cwd  # in the key only: expanduser and abspath read them
    if named is not None:
        return Path(os.path.abspath(os.path.expanduser(named))) if named not in ("", "0") else None
    base = xdg or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "snipcheck" / "compile"


def limit() -> int:
    """The budget of the kept folders, in bytes (:data:`SIZE_VAR`, else
    :data:`DEFAULT_SIZE`).  A value that is not a size is warned about once
    and the default used."""
    text = os.environ.get(SIZE_VAR, "").strip()
    if not text:
        return DEFAULT_SIZE
    match = re.fullmatch(r"(\d+)\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if match is None:
        if text not in _warned:
            _warned.add(text)
            log.warning("snipcheck: %s=%r is not a size (bytes, or a number with K, M or G); "
                        "the kept compile caches get the default budget of 1G", SIZE_VAR, text)  # fmt: skip
        return DEFAULT_SIZE
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def hidden() -> list[str]:
    """The folder that holds the kept compile caches, made where it is not
    there yet and resolved, for the runs' mounts to show empty (each run sees
    only its own kept cache, in its ``TMPDIR``); ``[]`` where none is kept
    or it cannot be made.  The first call of a process for a folder also
    prunes it to its budget (:func:`prune`), before any run of the process
    has one of its folders bound."""
    base = root()
    if base is None:
        return []
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return []
    if str(base) not in _pruned:
        _pruned.add(str(base))
        prune(base, limit())
    return [resolved_folder(str(base))]


def size_of(path: Path | str) -> int:
    """Bytes of the regular files under ``path`` (links not followed; 0 where it cannot be read)."""
    total = 0
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    total += size_of(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return total


def _drop(path: Path) -> bool:
    """Remove a kept folder: renamed away first, so that no run finds half
    of one (the next run of its snippet keeps a new one); ``False`` where
    another process took it first."""
    gone = path.with_name(f"{path.name}.{os.urandom(6).hex()}.gone")
    try:
        os.rename(path, gone)
    except OSError:
        return False
    shutil.rmtree(gone, ignore_errors=True)
    return True


def prune(base: Path, budget: int, now: float | None = None) -> list[Path]:
    """Drop the least recently used kept folders under ``base`` until all of
    them together hold at most ``budget`` bytes, and what a supervisor that
    was killed while copying one left (``*.part``, ``*.gone``); folders used
    within the last :data:`GRACE` seconds stay, so the total may stay above
    ``budget`` for that long.  Last use is a folder's modification time
    (:func:`plan` sets it).  Raises nothing.

    :return: the folders dropped.
    """
    now = time.time() if now is None else now
    kept: list[tuple[float, int, Path]] = []
    try:
        environments = [e for e in base.iterdir() if e.is_dir() and not e.is_symlink()]
    except OSError:
        return []
    for environment in environments:
        try:
            folders = list(environment.iterdir())
        except OSError:
            continue
        for folder in folders:
            try:
                used = folder.lstat().st_mtime
            except OSError:
                continue
            if folder.name.endswith((".part", ".gone")):
                if now - used > GRACE:
                    shutil.rmtree(folder, ignore_errors=True)
                continue
            kept.append((used, size_of(folder), folder))
    total = sum(size for _, size, _ in kept)
    dropped = []
    for used, size, folder in sorted(kept, key=lambda k: k[0]):
        if total <= budget:
            break
        if now - used <= GRACE:
            continue
        if _drop(folder):
            total -= size
            dropped.append(folder)
    for environment in environments:
        try:
            environment.rmdir()  # only where it is empty now
        except OSError:
            pass
    return dropped


def trim(writable: Sequence[Sequence[str]], budget: int) -> None:
    """After a run that had its kept folders bound writable (``[[kept
    folder, path in the run], ...]``, :func:`plan`): drop each that the run
    grew past ``budget`` bytes (negative: each of them), so that its
    snippet's next run keeps a new one.  Raises nothing."""
    for kept, _ in writable:
        if budget < 0 or size_of(kept) > budget:
            _drop(Path(kept))


def inductor_folder(env: Mapping[str, str]) -> str:
    """The name of inductor's default cache folder in a run's ``TMPDIR``
    (``torch._inductor.runtime.cache_dir_utils.default_cache_dir``): by
    the user name ``getpass.getuser()`` finds in the run's environment ``env``."""
    user = next((env[name] for name in _USER_VARS if env.get(name)), None)
    return "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user if user is not None else _account(os.getuid()))


@functools.lru_cache(maxsize=4)
def _account(uid: int) -> str:
    """The account name of ``uid`` (``uid_N`` where it has none), looked up once."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid_{uid}"


def code_key(cells: Sequence[Snippet], env: Mapping[str, str]) -> str:
    """What a kept folder belongs to besides its environment: the code of a
    run (a snippet, or every cell of a chain), as a hex digest of each
    cell's id, whole source, helper modules, declared data files, tags and
    the values of its passed-through variables in ``env`` (the run's
    environment).  Another version of a snippet is other code: it starts
    from an empty folder, and never meets what an earlier version left."""
    digest = hashlib.sha256()
    for cell in cells:
        passed = sorted((name, env.get(name)) for name in cell.env)
        text = json.dumps([cell.id, cell.source, cell.helpers, cell.files, passed, repr(cell.tags)], ensure_ascii=False)
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:32]


def folder(base: Path, code: str, environment: str) -> Path:
    """The kept cache of the code ``code`` (:func:`code_key`) in the environment ``environment``."""
    return base / re.sub(r"[^A-Za-z0-9_.-]", "_", environment) / code


def plan(code: str, environment: str | None, run_dir: str, env: Mapping[str, str]) -> tuple[list[list[str]], list[list[str]]]:
    """What a run of the code ``code`` (:func:`code_key`) in the run directory ``run_dir`` does with its compile cache.

    :param environment: the environment fingerprint's id (``Stamp.env``); ``None``: nothing is kept.
    :param env: the run's environment (its ``TMPDIR`` and user variables).
    :return: ``(writable, harvest)``: ``[[kept folder, path in the run]]``
        for the run's mounts where a folder is kept already (its
        modification time set to now: its last use, for :func:`prune`),
        else ``[[path in the run, folder to keep, budget in bytes]]`` for its
        supervisor; both empty where nothing is kept.
    """
    base = root()
    tmpdir = env.get("TMPDIR")
    if base is None or not environment or not tmpdir:
        return [], []
    # run_dir is resolved and its tmp folder made by prepare_chain_dir (no link):
    # only another TMPDIR (a snippet's env variables) needs resolving
    if tmpdir != os.path.join(run_dir, "tmp") and not os.path.realpath(tmpdir).startswith(run_dir + os.sep):
        return [], []
    kept = folder(base, code, environment)
    inside = os.path.join(tmpdir, inductor_folder(env))
    if kept.is_dir():
        try:
            os.utime(kept)
        except OSError:
            pass
        return [[str(kept), inside]], []
    return [], [[inside, str(kept), str(limit())]]
