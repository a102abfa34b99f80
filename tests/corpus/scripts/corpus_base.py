"""Imported by ``corpus_units``, which the script imports: it goes with the run too."""

UNIT = "apple"
