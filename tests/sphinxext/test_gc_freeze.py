"""The build keeps the garbage collector off what it has read (sphinxext/gc_freeze.py)."""

from __future__ import annotations

import gc

import pytest


@pytest.mark.sphinx("html", testroot="basic")
def test_what_the_build_read_is_frozen_while_pages_are_written_and_thawed_after(app) -> None:
    seen: list[int] = []
    app.connect("html-page-context", lambda *args: seen.append(gc.get_freeze_count()))
    before = gc.get_freeze_count()
    app.build()
    assert seen and min(seen) > before  # every page written with the environment frozen
    assert gc.get_freeze_count() == before  # and thawed when the build ends
    assert not app._warning.getvalue()
