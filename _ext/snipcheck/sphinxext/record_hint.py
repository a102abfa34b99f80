"""The record command hints name, as the user can run it where the build (or pytest) ran.

The default hint, ``snipcheck record {id}``, reads ``conf.py`` in the folder it
runs in.  A build run from the folder above the configuration
(``sphinx-quickstart --sep``: ``make html`` beside ``source/``; or
``sphinx-build -c docs``) names ``--conf-dir`` too, so the hint runs as it is
printed.  A command the project configures is its own and is kept.

May import: the standard library and :mod:`snipcheck.settings`.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from snipcheck.settings import VALUES


def record_command(configured: str, confdir: Path, cwd: Path) -> str:
    """The ``snipcheck_record_command`` the build's hints use.

    :param configured: the project's ``snipcheck_record_command`` (``{id}``
        stands for the snippet id).
    :param confdir: the build's configuration directory.
    :param cwd: the folder the build runs in.
    :return: ``configured`` itself, unless it is the default and ``confdir``
        is a folder below ``cwd``: then the default with ``--conf-dir`` and
        the path of ``confdir`` relative to ``cwd``.  A configuration outside
        ``cwd`` is left to the default, which names no path that climbs.
    """
    if configured != VALUES["snipcheck_record_command"].default:
        return configured
    relative = Path(os.path.relpath(confdir.resolve(), cwd.resolve()))
    if relative == Path(".") or relative.parts[0] == os.pardir:
        return configured
    quoted = shlex.quote(relative.as_posix()).replace("{", "{{").replace("}", "}}")
    return f"snipcheck --conf-dir {quoted} record {{id}}"
