"""One progress line per snippet judged, through Sphinx's ``status_iterator``.

``running snippets... [ 40%] myths/compile-out-of-place``: the line names the
snippet the build now waits for, as Sphinx's "reading sources" and "writing
output" lines name a page, so a long run is never silence.  The snippets of
one build are judged in several calls (those claims cite at
``env-updated``, then page by page as a serial HTML build writes them, then
the rest at ``build-finished``, see :mod:`.results`), and one progress line
runs across them all: :class:`Progress` keeps a single ``status_iterator``
and feeds it one snippet id at a time, so the lines are Sphinx's own (single
line rewritten in place on a terminal, one line each in a log).  With
``-q`` there is no progress line at all: Sphinx would only format it into a
buffer that nobody reads (:func:`snipcheck.sphinxext.results.resolve`).
"""

from __future__ import annotations

from collections.abc import Iterator

from sphinx.locale import __
from sphinx.util.display import status_iterator


class _Feed:
    """The iterable ``status_iterator`` walks: the next id, when one is given."""

    def __init__(self) -> None:
        self.item: str | None = None

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> str:
        if self.item is None:
            raise StopIteration
        item, self.item = self.item, None
        return item


class Progress:
    """The progress line of the ``total`` snippets one build judges.

    :param total: how many snippets will be judged (the pending records).
    :param verbosity: Sphinx's ``-v`` count (``app.config.verbosity``): from
        1 on, every line stays, as Sphinx's own progress does.
    :param merged: the build runs nothing (``snipcheck_execute = "merged"``):
        the line says it takes the results of the merged shards.
    """

    def __init__(self, total: int, verbosity: int, merged: bool = False) -> None:
        self.total = total
        self.done = 0
        self._feed = _Feed()
        summary = __("taking the merged shards' results... ") if merged else __("running snippets... ")
        self._lines: Iterator[str] = status_iterator(self._feed, summary, "darkgreen", total, verbosity, stringify_func=str)

    def step(self, snippet_id: str) -> None:
        """Show that the build now waits for ``snippet_id`` (before waiting);
        the last of ``total`` ends the line."""
        if self.done >= self.total:
            return
        self.done += 1
        self._feed.item = snippet_id
        next(self._lines)
        if self.done == self.total:
            self.close()

    def close(self) -> None:
        """End the progress line (Sphinx's line end after the last item)."""
        self._feed.item = None
        next(self._lines, None)
