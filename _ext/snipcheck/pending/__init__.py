"""Pending changes of stated outputs: what ``record``, ``accept`` and ``review`` decide and write.

:mod:`~snipcheck.pending.change` (the model: placement, old and new output,
decision with its reason), :mod:`~snipcheck.pending.rules` (``record``'s
rules, and the stability rule all three share),
:mod:`~snipcheck.pending.recording` (the new output with the author's
wildcards kept), :mod:`~snipcheck.pending.variation` (the re-runs that find
an output that varies), :mod:`~snipcheck.pending.commit` (the one write
path), :mod:`~snipcheck.pending.notebook_write` (a notebook cell's new
outputs, written into its ``.ipynb`` through that path).

Layer: below ``shard``, ``report`` and ``app``; imports ``settings``,
``engine``, ``run``, ``judge``, ``sources`` and the foundation modules only.
"""
