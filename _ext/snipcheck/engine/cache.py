"""Result cache: raw run results on disk, keyed by everything that can change them.

The key hashes the runner version and kind (``fork``, ``subprocess``; they
may differ for some snippets), the snippet's language, source, helper modules
and tags (for a cell of a chain, those of the cells before it, and whether
cells come after it), the output limit, the environment stamp (Python version, torch
build, device, platform, rustc, and the id of the environment fingerprint:
every installed distribution and the variables passed to snippets, see
:mod:`snipcheck.run.fingerprint`), and the snippet's declared inputs (the contents
of its data files and the values of its variables, see
:mod:`snipcheck.sources.inputs`): a new torch release, numpy release or ``PATH``
never reuses an old output.
Entries are JSON files written atomically (temporary file, then
``os.replace``), so a reader sees either the old entry or the new one, never a
partial one.  A per-key lock (:mod:`snipcheck.engine.key_lock`) lets several
builds share one cache directory without running the same snippet twice.

Pure core: standard library, :mod:`filelock`, :mod:`snipcheck.model`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from snipcheck.engine.key_lock import Lock, key_lock
from snipcheck.files import current_umask, write_atomic
from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.sources.inputs import Digests
from snipcheck.sources.inputs import values as variable_values

__all__ = ["CacheError", "ResultCache", "cache_key", "write_atomic"]

#: Bump when a runner change alters what a run of the same source produces.
RUNNER_VERSION = "7"  # 7: a notebook cell runs as written, its stderr after its stdout as Jupyter stores them (issue 37); 6: invalid UTF-8 reads \x{ff}, a chain's cells end where the supervisor says (issue 33); 5: a terminal's buffering and plain python's environment (issue 23); 4: figures (RunResult.figures); 3: the run directory reads [CWD] in output
_SCHEMA = 1


class CacheError(Exception):
    """A cache entry that exists but cannot be used.

    :param reason: what is wrong with it, without what a build does about
        it (the message says that), e.g. ``"schema or key mismatch"``.
    """

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def cache_key(
    snippet: Snippet, stamp: Stamp, output_limit: int, *, runner: str, digests: Digests | None = None,
    memory_limit: int | None = None,
) -> str:
    """The hex key of a snippet's result in the given environment.

    :param runner: the kind of runner that runs it (``"fork"``, ``"subprocess"``, ``"rust"``).
    :param digests: reads the declared data files (one per build, so each file
        is read once); a new one if ``None``.
    :param memory_limit: the project's memory limit of a run (bytes, 0 for
        none) where it is in force and not the default (a ``memory`` tag is
        keyed with the tags); ``None`` leaves it out, so the keys made under
        the default stay.
    """
    digest = digests or Digests()

    def inputs(cell: Snippet) -> dict[str, object]:
        tags = dataclasses.asdict(cell.tags)
        tags.pop("timeout", None)  # a run that finished in time is valid under any longer limit
        if tags.get("output_limit") is None:
            tags.pop("output_limit", None)  # the limit in force is keyed below; keys made before the tag stay
        if not tags.get("script_cell"):
            tags.pop("script_cell", None)  # set for a script's cells only: the keys of every other snippet stay
        return {
            "language": cell.language,
            "path": cell.path,
            "source": cell.source,
            "helpers": [list(h) for h in cell.helpers],
            "tags": tags,
            "files": [[rel, digest(path)] for rel, path in cell.files],
            "env": variable_values(cell.env),
        }

    payload = json.dumps(
        {
            "runner": RUNNER_VERSION,
            "kind": runner,
            **inputs(snippet),
            "output_limit": output_limit,
            **({} if memory_limit is None else {"memory_limit": memory_limit}),
            "stamp": dataclasses.asdict(stamp),
            # a cell of a chain: what ran before it in its process is part of its result
            # and whether the process must go on after it (its result then ends at the next cell, and
            # must: see snipcheck.engine.chain_job), or ends with it (its result holds the exit sequence)
            **(
                {"earlier": [inputs(cell) for cell in snippet.earlier], "goes_on": bool(snippet.later)}
                if snippet.chain
                else {}
            ),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@functools.cache
def _lock_mode() -> int:
    """The mode a new lock file gets when none is given (``0o666`` less the
    process's umask, :func:`snipcheck.files.current_umask`), for
    :mod:`filelock`'s lock files, where the platform has no OFD locks (see
    :mod:`snipcheck.engine.key_lock`).

    Given explicitly, it spares :mod:`filelock` a probe of the folder on
    every acquire (it creates an unnamed file there to learn whether the file
    system has ``flock``, ~1 ms a run) wherever the files are not writable by
    group or others; where the umask lets them be, filelock probes as before.
    """
    return 0o666 & ~current_umask()


class ResultCache:
    """Raw results stored under ``directory``.

    :param directory: the cache directory (created on first write).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def unwritable(self) -> str | None:
        """Why results cannot be stored here, or ``None`` if they can.

        Creates the results folder and writes a small unnamed file in it, so a
        read-only folder, a file in its place or a full disk shows before any
        run.  (A blocked ``locks`` folder only costs the locks: see
        :meth:`snipcheck.engine.execute.Executor`.)
        """
        try:
            folder = self.directory / "results"
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder) as f:  # unnamed: nothing to leave behind
                f.write(b"x" * 4096)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            return f"cannot write to the cache directory {self.directory} ({exc.strerror or exc})"
        return None

    def path(self, key: str) -> Path:
        return self.directory / "results" / key[:2] / f"{key}.json"

    def lock(self, key: str) -> Lock:
        """A lock held while a snippet with this key runs (see module docstring).

        :raises OSError: if the ``locks`` folder cannot be made.
        """
        return key_lock(self.directory / "locks", key, _lock_mode())

    def get(self, key: str) -> RunResult | None:
        """The stored result, or ``None`` if there is none.

        :raises CacheError: if an entry exists but is unreadable, truncated or
            of another schema; the caller should warn, :meth:`discard` it and
            run again.
        """
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CacheError(
                f"cannot read cache entry {path} ({exc.strerror}); the snippet was run again; "
                "remove that path if this repeats",
                f"cannot read it: {exc.strerror}",
            ) from None
        try:
            data = json.loads(raw)
            if data.get("schema") != _SCHEMA or data.get("key") != key:
                raise ValueError("schema or key mismatch")
            return RunResult.from_json(data["result"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CacheError(f"cache entry {path} is corrupt ({exc}); it was discarded and the snippet re-run", str(exc)) from None

    def put(self, key: str, snippet_id: str, result: RunResult) -> None:
        """Store ``result`` atomically (readers see the old entry or the new
        one, never a part), without ``fsync``.

        :raises OSError: if the cache directory is not writable.
        """
        data = {"schema": _SCHEMA, "key": key, "snippet": snippet_id, "result": result.to_json()}
        # no fsync: an entry lost in a crash only costs a run (see write_atomic)
        write_atomic(self.path(key), json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), durable=False)

    def discard(self, key: str) -> None:
        """Remove an entry if present."""
        try:
            self.path(key).unlink()
        except FileNotFoundError:
            pass
