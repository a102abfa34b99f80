"""The environment fingerprint: what, besides its own files, can change a snippet's output.

A snippet's output depends on the interpreter that runs it, on every
distribution importable from it (numpy 2.4.6 and 2.3.5 print differently) and
on the environment variables passed to it (``PATH``...).  The fingerprint
hashes exactly these:

* the interpreter's path and ``sys.version``;
* its ``sys.path`` as a snippet sees it (the probe runs the interpreter under
  the snippets' fixed environment, see :mod:`snipcheck.run.environment`), and in
  every entry the names of the ``*.dist-info`` / ``*.egg-info`` metadata
  directories (and ``*.egg``), which carry each distribution's name and version;
* in every entry that is a folder of source code (neither the standard
  library nor a site folder of installed distributions: the ``src`` folder
  of a project installed in editable mode, ``pip install -e``, whose
  ``.pth`` file puts it on ``sys.path``), the path and content
  of each module file under it (``.py``, ``.so``, ``.pyd``): editing the
  library a page documents changes the fingerprint, where its version
  would not;
* the values of the variables the runner passes through
  (:data:`snipcheck.run.python.PASSTHROUGH`).

Listing a directory costs far less than reading metadata files: the whole
fingerprint takes a few milliseconds (``tests/benchmark.py --fingerprint``),
plus reading the module files of a source folder (~1 ms a megabyte).
Its :attr:`Fingerprint.id` is carried by every result's stamp
(:attr:`snipcheck.model.Stamp.env`) and so enters every Python snippet's cache
key.  The scan also returns a cheap validity mark per entry (its modification
time and its ``.pth`` files) that tells when the probe's answer about
``sys.path`` must be asked again.

Pure core: standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_METADATA = (".dist-info", ".egg-info", ".egg")


@dataclass(frozen=True)
class PathScan:
    """One ``sys.path`` entry as listed.

    :param path: the entry.
    :param mark: changes whenever the entry could import something else: its
        kind and modification time (adding or removing a distribution
        changes it) and the ``.pth`` files in it.
    :param metadata: names of the distribution metadata entries in it, sorted.
    :param sources: for a folder of source code (see the module docstring),
        the SHA-256 (hex) of its module files' paths and contents
        (:func:`sources_signature`); else ``""``.
    """

    path: str
    mark: tuple[Any, ...]
    metadata: tuple[str, ...]
    sources: str = ""


#: The files of a source folder whose changes change the fingerprint: what ``import`` loads.
MODULE_SUFFIXES = (".py", ".so", ".pyd")


def sources_signature(folder: str) -> str:
    """SHA-256 (hex) of ``(relative path, SHA-256 of its bytes)`` of every
    module file (:data:`MODULE_SUFFIXES`) under ``folder``, walked without
    following links, leaving out hidden folders, ``__pycache__`` and any
    virtual environment or ``site-packages`` inside it (installed code there
    is fingerprinted by its metadata, where it is on ``sys.path``).  The
    contents, not sizes and times: an edit within the file system's clock
    tick, or one that keeps the time, is an edit all the same."""
    found: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        here = os.path.join(folder, relative) if relative else folder
        try:
            with os.scandir(here) as entries:
                items = list(entries)
        except OSError:
            found.append(f"{relative}\0unreadable")
            continue
        if relative and any(e.name == "pyvenv.cfg" for e in items):
            continue
        for entry in items:
            name = entry.name
            inner = f"{relative}/{name}" if relative else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not name.startswith(".") and name not in ("__pycache__", "site-packages", "dist-packages"):
                        pending.append(inner)
                elif name.endswith(MODULE_SUFFIXES) and entry.is_file():
                    with open(entry.path, "rb") as f:
                        found.append(f"{inner}\0{hashlib.file_digest(f, 'sha256').hexdigest()}")
            except OSError:
                found.append(f"{inner}\0unreadable")
    return hashlib.sha256("\n".join(sorted(found)).encode("utf-8", "surrogateescape")).hexdigest()


def scan_path(path: str, sources: bool = False) -> PathScan:
    """List one ``sys.path`` entry (a missing or unreadable one is marked as such).

    :param sources: sign its module files, see :func:`sources_signature`
        (a folder of source code: the caller leaves the standard library and
        the site folders out; an egg is never signed).
    """
    try:
        st = os.stat(path)
    except OSError:
        return PathScan(path, ("missing",), ())
    if not stat.S_ISDIR(st.st_mode):  # a zip file or an egg on sys.path
        meta = (os.path.basename(path),) if path.endswith(".egg") else ()
        return PathScan(path, ("file", st.st_mtime_ns, st.st_size), meta)
    metadata: list[str] = []
    pth: list[tuple[str, int, int]] = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(_METADATA):
                    metadata.append(name)
                elif name.endswith(".pth"):
                    try:
                        s = entry.stat()
                        pth.append((name, s.st_mtime_ns, s.st_size))
                    except OSError:
                        pth.append((name, -1, -1))
    except OSError:
        return PathScan(path, ("unreadable", st.st_mtime_ns), ())
    signature = sources_signature(path) if sources and not path.endswith(".egg") else ""
    return PathScan(path, ("dir", st.st_mtime_ns, tuple(sorted(pth))), tuple(sorted(metadata)), signature)


def scan(paths: Iterable[str], installed: Iterable[str] = ()) -> tuple[PathScan, ...]:
    """:func:`scan_path` of every entry, in order; each that is not inside one
    of the ``installed`` folders (the standard library, the site folders)
    has its source code signed (see :func:`scan_path`)."""
    folders = [os.path.join(os.path.abspath(p), "") for p in installed]

    def inside(path: str) -> bool:
        return any(os.path.join(os.path.abspath(path), "").startswith(f) for f in folders)

    return tuple(scan_path(p, sources=not inside(p)) for p in paths)


def marks(scans: Iterable[PathScan]) -> list[list[Any]]:
    """The validity marks of ``scans`` in a JSON-comparable form."""
    return json.loads(json.dumps([[s.path, list(s.mark)] for s in scans]))  # type: ignore[no-any-return]


def distribution(entry: str) -> tuple[str, str]:
    """``(normalized name, version)`` from a metadata entry name.

    ``numpy-2.4.6.dist-info`` → ``("numpy", "2.4.6")``;
    ``Foo_Bar-1.0-py3.11.egg-info`` → ``("foo-bar", "1.0")``; a name without a
    version gives ``""`` as the version.
    """
    stem = entry
    for suffix in _METADATA:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    name, _, rest = stem.partition("-")
    version = rest.split("-")[0] if rest else ""
    return re.sub(r"[-_.]+", "-", name).lower(), version


@dataclass(frozen=True)
class Fingerprint:
    """The environment of Python snippet runs (see the module docstring).

    :param digest: SHA-256 (hex) of everything below.
    :param executable: the interpreter (``sys.executable``).
    :param python: its ``sys.version``.
    :param paths: its ``sys.path`` as a snippet sees it (snipcheck's own
        bootstrap directory left out).
    :param distributions: ``(name, version)`` of every installed distribution,
        the first of each name in ``sys.path`` order (the one imported).
    :param variables: ``(name, value)`` of the variables passed to snippets;
        ``None`` for one that is not set.
    :param sources: ``(entry, signature)`` of each folder of source code on
        ``sys.path`` (:attr:`PathScan.sources`).
    """

    digest: str
    executable: str
    python: str
    paths: tuple[str, ...]
    distributions: tuple[tuple[str, str], ...]
    variables: tuple[tuple[str, str | None], ...]
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        """The short id shown on pages and stamps: 12 hex digits of the digest."""
        return self.digest[:12]

    def version(self, name: str) -> str | None:
        """The installed version of distribution ``name``, or ``None``."""
        wanted = re.sub(r"[-_.]+", "-", name).lower()
        return next((v for n, v in self.distributions if n == wanted), None)


def compute(
    executable: str, python: str, scans: Iterable[PathScan], variables: Mapping[str, str | None]
) -> Fingerprint:
    """The fingerprint of an interpreter whose ``sys.path`` was listed as ``scans``.

    :param executable: ``sys.executable`` of the interpreter.
    :param python: its ``sys.version``.
    :param scans: :func:`scan` of its ``sys.path``, snipcheck's own entries left out.
    :param variables: the variables passed to snippets and their values.
    """
    scans = tuple(scans)
    variables_ = tuple(sorted(variables.items()))
    payload = json.dumps(
        {
            "executable": executable,
            "python": python,
            # an entry's sources only where it has some: fingerprints without any stay what they were
            "paths": [[s.path, list(s.metadata), *([s.sources] if s.sources else [])] for s in scans],
            "variables": variables_,
        },
        sort_keys=True,
    )
    seen: dict[str, str] = {}
    for s in scans:
        for entry in s.metadata:
            name, version = distribution(entry)
            seen.setdefault(name, version)
    return Fingerprint(
        digest=hashlib.sha256(payload.encode("utf-8")).hexdigest(),
        executable=executable,
        python=python,
        paths=tuple(s.path for s in scans),
        distributions=tuple(seen.items()),
        variables=variables_,
        sources=tuple((s.path, s.sources) for s in scans if s.sources),
    )


def describe(fingerprint: Fingerprint) -> dict[str, Any]:
    """What ``fingerprint`` hashed, as JSON, for a shard's manifest: the
    interpreter, its ``sys.version``, ``sys.path``, each distribution's version
    and, for each passed-through variable, 12 hex digits of the SHA-256 of its
    value (``None`` when unset), never the value itself: a manifest travels
    as a CI artifact.  :func:`differences` compares two of these.
    """
    return {
        "executable": fingerprint.executable,
        "python": fingerprint.python,
        "paths": list(fingerprint.paths),
        "distributions": dict(fingerprint.distributions),
        "variables": {
            name: None if value is None else hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:12]
            for name, value in fingerprint.variables
        },
        "sources": {path: signature[:12] for path, signature in fingerprint.sources},
    }


def differences(there: Mapping[str, Any], here: Mapping[str, Any], names: int = 3) -> list[str]:
    """How the environment ``there`` differs from ``here`` (both :func:`describe`),
    in words, most telling first: ``"interpreter /a there, /b here"``,
    ``"Python 3.11.9 there, 3.11.7 here"``, ``"numpy 2.3.5 there, 2.4.6 here"``
    (each changed version), ``"variable PATH"``, then the distributions and
    ``sys.path`` entries found on one side only, one item a side, naming
    ``names`` of them and counting the rest (``"only here: torch 2.13.0,
    rich 13 and 4 more"``).  ``[]`` when nothing differs, or when a
    description is damaged (the caller then says only that the ids differ).
    """

    def listed(what: str, items: list[str]) -> list[str]:
        if not items:
            return []
        more = f" and {len(items) - names} more" if len(items) > names else ""
        return [f"{what}: {', '.join(items[:names])}{more}"]

    try:
        found: list[str] = []
        for name, what in (("interpreter", "executable"), ("Python", "python")):
            if there[what] != here[what]:
                found.append(f"{name} {there[what]} there, {here[what]} here")
        theirs, ours = dict(there["distributions"]), dict(here["distributions"])
        found += [f"{d} {theirs[d]} there, {ours[d]} here" for d in sorted(theirs.keys() & ours.keys()) if theirs[d] != ours[d]]
        their_vars, our_vars = dict(there["variables"]), dict(here["variables"])
        found += [f"variable {v}" for v in sorted(their_vars.keys() | our_vars.keys()) if their_vars.get(v) != our_vars.get(v)]
        their_code, our_code = dict(there.get("sources", {})), dict(here.get("sources", {}))
        found += [f"the code in {p}" for p in sorted(their_code.keys() & our_code.keys()) if their_code[p] != our_code[p]]
        found += listed("only there", [f"{d} {theirs[d]}" for d in sorted(theirs.keys() - ours.keys())])
        found += listed("only here", [f"{d} {ours[d]}" for d in sorted(ours.keys() - theirs.keys())])
        their_paths, our_paths = list(there["paths"]), list(here["paths"])
        found += listed("sys.path entries only there", [p for p in their_paths if p not in our_paths])
        found += listed("sys.path entries only here", [p for p in our_paths if p not in their_paths])
        if not found and their_paths != our_paths:
            found.append("the order of sys.path")
    except (KeyError, TypeError, AttributeError):
        return []
    return found
