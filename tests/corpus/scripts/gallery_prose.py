"""
Reading a sphinx-gallery script
===============================

This corpus script is written the way sphinx-gallery examples are: the module
docstring opens it, and each block of comment lines after a separator is
reStructuredText.  It links `to the Python site <https://www.python.org>`_ and
to :ref:`a label further down <corpus-counting>`.

.. note::

   A directive in the prose: it must come out as a note box, whatever the
   markup of the page that places the script.
"""

# sphinx_gallery_thumbnail_number = 2
words = ["tensor", "view", "leaf"]
print(len(words), "words")

# %%
# Sorting
# ~~~~~~~
#
# A tilde underline is a heading here, never the start of a code fence.

print(sorted(words))

###############################################################################
# .. _corpus-counting:
#
# Counting letters
# ~~~~~~~~~~~~~~~~
#
# *Emphasis*, ``literal text`` and a list:
#
# * one
# * two

# sphinx_gallery_start_ignore
hidden_total = 0  # runs, but the page does not show it
# sphinx_gallery_end_ignore
counts = {w: len(w) for w in words}
print(counts)
