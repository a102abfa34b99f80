"""The key the shards of a build share: a signed manifest says where its results came from.

A shard's manifest (:mod:`snipcheck.shard.files`) holds the SHA-256 of each
entry it stored, so a merge sees any entry changed by accident; but whoever
changes an entry can write its new SHA-256 into the manifest too.  When every
shard and the merge are given one secret key in :data:`KEY_VARIABLE` (CI
fills it from a secret), each shard signs its manifest as a whole (HMAC-SHA256
over :func:`canonical`: the shard, plan, revision, environment, every unit,
key and SHA-256), and the merge refuses a manifest that is unsigned, signed
with another key, or changed since it was signed (:func:`verify`).

The key must reach no snippet: a shard runs untrusted code.  :func:`take_key`
reads it once, when a command starts, and removes it from the process's
environment before anything is started, so no process the command starts
inherits it; on Linux it also overwrites the value in the process's initial
environment block, which ``/proc/<pid>/environ`` shows to other processes.
A run's own environment is a fixed list of variables besides (see
:func:`snipcheck.run.python.child_environment`), and no ``SNIPCHECK_``
variable can be passed through to a run (:func:`snipcheck.sources.tags.variable_problem`),
so the key is neither in a run's ``os.environ`` nor in the environment
fingerprint.

Pure core: the standard library only (``hmac``, ``ctypes``).
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import json
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["KEY_VARIABLE", "MIN_LENGTH", "ShardKeyError", "SignatureError", "canonical", "key_id", "sign", "take_key", "verify"]

#: The environment variable that holds the shards' shared key.
KEY_VARIABLE = "SNIPCHECK_SHARD_KEY"
#: The fewest characters a key may have: a short one is guessed from a signed manifest.
MIN_LENGTH = 32
#: What a manifest's ``signature`` says it is.
ALGORITHM = "hmac-sha256"
#: Put before the canonical manifest in the signed message, so that a
#: signature over a manifest is never one over anything else.
_DOMAIN = b"snipcheck-shard manifest signature\n"
_KEY_ID = b"snipcheck-shard key id"
#: How to make a key, for messages.
MAKE_KEY = "python3 -c 'import secrets; print(secrets.token_hex(32))'"


class ShardKeyError(ValueError):
    """The key in :data:`KEY_VARIABLE` cannot be used (the message says why and what to do)."""


class SignatureError(ValueError):
    """A manifest's signature does not prove it came from a shard with this key
    (the message is the end of a sentence about the manifest, with what to do)."""


def take_key(environ: MutableMapping[str, str] | None = None) -> bytes | None:
    """The shared key from :data:`KEY_VARIABLE`, removed from ``environ``
    (default ``os.environ``, and then from the process's own environment: see
    the module docstring); ``None`` when it is unset or empty (a pull request
    from a fork gets an empty secret).

    :raises ShardKeyError: for a key shorter than :data:`MIN_LENGTH` characters
        (it is removed all the same).
    """
    own = environ is None
    env = os.environ if environ is None else environ
    value = env.get(KEY_VARIABLE)
    if value is None:
        return None
    if own:
        _scrub(KEY_VARIABLE)
    env.pop(KEY_VARIABLE, None)
    if not value:
        return None
    if len(value) < MIN_LENGTH:
        raise ShardKeyError(
            f"{KEY_VARIABLE} holds {len(value)} characters, and a key needs at least {MIN_LENGTH} random ones "
            f"(a short one is guessed from a signed manifest): make one with {MAKE_KEY}"
        )
    return value.encode("utf-8")


def _scrub(name: str) -> None:
    """Overwrite the value of ``name`` where the C environment holds it (on
    Linux, for a variable the process started with: its initial environment
    block, which ``/proc/<pid>/environ`` reads); nothing where that cannot be
    done.  ``os.environ.pop`` then drops the entry itself (``unsetenv``)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        entries = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):
        return
    prefix = name.encode() + b"="
    i = 0
    while entries and (address := entries[i]) is not None:
        if ctypes.string_at(address, len(prefix)) == prefix:
            length = len(ctypes.string_at(address))
            ctypes.memset(address + len(prefix), ord("x"), length - len(prefix))
        i += 1


def canonical(manifest: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: the manifest's JSON without its
    ``signature``, keys sorted, no spaces, ASCII only (so the same on every
    machine, whatever the indentation the file was written with)."""
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return _DOMAIN + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def key_id(key: bytes) -> str:
    """A short name of ``key`` that tells keys apart and tells nothing of the key itself."""
    return hmac.new(key, _KEY_ID, hashlib.sha256).hexdigest()[:12]


def sign(manifest: Mapping[str, Any], key: bytes) -> dict[str, str]:
    """The ``signature`` of ``manifest`` (its JSON, see :func:`canonical`) with ``key``."""
    return {"algorithm": ALGORITHM, "key_id": key_id(key), "hmac": hmac.new(key, canonical(manifest), hashlib.sha256).hexdigest()}


def verify(manifest: Mapping[str, Any], key: bytes) -> None:
    """Check the ``signature`` of ``manifest`` (its JSON as read) with ``key``
    (the comparison in constant time: :func:`hmac.compare_digest`).

    :raises SignatureError: if it is unsigned, signed with another key, or
        not the manifest that was signed.
    """
    found = manifest.get("signature")
    if found is None:
        raise SignatureError(
            f"is not signed, though {KEY_VARIABLE} is set here: a shard signs its manifest when {KEY_VARIABLE} is "
            "set; run that shard again with the key every shard and the merge share"
        )
    if not isinstance(found, dict) or found.get("algorithm") != ALGORITHM or not isinstance(found.get("hmac"), str):
        raise SignatureError(f"has a damaged signature (not an {ALGORITHM} one); run that shard again")
    ours = key_id(key)
    if not hmac.compare_digest(str(found.get("key_id", "")).encode(), ours.encode()):
        raise SignatureError(
            f"is signed with another key (key id {str(found.get('key_id'))[:12]}; the key here has id {ours}): "
            f"give every shard and the merge the same {KEY_VARIABLE}, then run that shard again"
        )
    expected = hmac.new(key, canonical(manifest), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(found["hmac"].encode(), expected.encode()):
        raise SignatureError(
            "does not match its signature: it was changed after its shard signed it (an entry's SHA-256, a key, the "
            "plan, the environment...); run that shard again, and find out what changed it"
        )
