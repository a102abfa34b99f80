"""A module the corpus script ``local_import`` imports from its own folder."""

from corpus_base import UNIT


def describe(n):
    return f"{n} {UNIT}{'s' if n != 1 else ''}"
