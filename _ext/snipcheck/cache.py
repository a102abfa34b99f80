"""Result cache: raw run results on disk, keyed by everything that can change them.

The key hashes the runner version, the snippet's language, source and tags,
the output limit, and the environment stamp (Python version, torch build,
device, platform, rustc): a new torch release never reuses an old output.
Entries are JSON files written atomically (temporary file, then
``os.replace``), so a reader sees either the old entry or the new one, never a
partial one.  A per-key file lock (:mod:`filelock`) lets several builds share
one cache directory without running the same snippet twice.

Pure core: standard library, :mod:`filelock`, :mod:`snipcheck.model`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

from filelock import FileLock

from .model import RunResult, Snippet, Stamp

#: Bump when a runner change alters what a run of the same source produces.
RUNNER_VERSION = "2"
_SCHEMA = 1


class CacheError(Exception):
    """A cache entry that exists but cannot be used (the message says why)."""


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers never see a partial file.

    :raises OSError: if the directory cannot be created or written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)  # an existing file keeps its permissions
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def cache_key(snippet: Snippet, stamp: Stamp, output_limit: int) -> str:
    """The hex key of a snippet's result in the given environment."""
    tags = dataclasses.asdict(snippet.tags)
    tags.pop("timeout", None)  # a run that finished in time is valid under any longer limit
    payload = json.dumps(
        {
            "runner": RUNNER_VERSION,
            "language": snippet.language,
            "path": snippet.path,
            "source": snippet.source,
            "helpers": [list(h) for h in snippet.helpers],
            "tags": tags,
            "output_limit": output_limit,
            "stamp": dataclasses.asdict(stamp),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResultCache:
    """Raw results stored under ``directory``.

    :param directory: the cache directory (created on first write).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / "results" / key[:2] / f"{key}.json"

    def lock(self, key: str) -> FileLock:
        """A lock held while a snippet with this key runs (see module docstring)."""
        lock_path = self.directory / "locks" / f"{key}.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(lock_path))

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
                "remove that path if this repeats"
            ) from None
        try:
            data = json.loads(raw)
            if data.get("schema") != _SCHEMA or data.get("key") != key:
                raise ValueError("schema or key mismatch")
            return RunResult.from_json(data["result"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CacheError(f"cache entry {path} is corrupt ({exc}); it was discarded and the snippet re-run") from None

    def put(self, key: str, snippet_id: str, result: RunResult) -> None:
        """Store ``result`` atomically.

        :raises OSError: if the cache directory is not writable.
        """
        data = {"schema": _SCHEMA, "key": key, "snippet": snippet_id, "result": result.to_json()}
        write_atomic(self.path(key), json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))

    def discard(self, key: str) -> None:
        """Remove an entry if present."""
        try:
            self.path(key).unlink()
        except FileNotFoundError:
            pass
