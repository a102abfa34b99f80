"""The one helper every snipcheck warning goes through.

Warnings are logged with ``type="snipcheck"`` and a documented subtype, so a
project can silence one kind with ``suppress_warnings = ["snipcheck.cache"]``:

``drift``   stated output differs from the actual output, or the expected
            exception did not happen;
``exec``    the run failed in a way its tags do not expect;
``timeout`` the run was killed at its timeout;
``truncated`` the output reached the output limit, so part of it was not checked;
``tag``     a malformed tag block, directive or requirement;
``missing`` a snippet file that cannot be found or read, a page that cannot be
            read (left out of the build), or a duplicate placement;
``cache``   a cache entry that had to be discarded;
``config``  an invalid ``snipcheck_*`` value;
``unchecked`` part of a stated output that is not compared (a notebook's
            image in an ``execute_result``, a rich output without ``text/plain``).
"""

from __future__ import annotations

import logging as std_logging
from typing import Any

from sphinx.util import logging

logger = logging.getLogger("snipcheck")

SUBTYPES = ("drift", "exec", "timeout", "truncated", "tag", "missing", "cache", "config", "unchecked")


def warn(subtype: str, message: str, location: Any) -> None:
    """Log a ``snipcheck.<subtype>`` warning.

    :param location: ``(docname, line)``, a ``"path:line"`` string, a node, or
        ``None`` for project-wide problems.
    """
    assert subtype in SUBTYPES, subtype
    logger.warning(message, type="snipcheck", subtype=subtype, location=location)


class _ToSphinx(std_logging.Handler):
    """Forwards the core's standard-library log records to Sphinx's log, as
    information: a runner falling back to subprocesses is news, not a fault."""

    def emit(self, record: std_logging.LogRecord) -> None:
        logger.info(record.getMessage())


def bridge_core_logging() -> None:
    """Route the ``snipcheck`` standard logger (used by the core) into Sphinx's log."""
    core = std_logging.getLogger("snipcheck")
    if not any(isinstance(h, _ToSphinx) for h in core.handlers):
        core.addHandler(_ToSphinx())
    core.setLevel(std_logging.INFO)
    core.propagate = False
