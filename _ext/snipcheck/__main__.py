"""``python -m snipcheck``: see :mod:`snipcheck.app.cli` (started by :mod:`snipcheck.app.launch`)."""

from snipcheck.app.launch import run

run()
