"""
A module beside the script
==========================

sphinx-gallery puts an example's folder on ``sys.path``: the example imports
the modules that sit next to it, and so does this script.
"""

from corpus_units import describe

print(describe(3))

# %%
# A package beside the script works the same way.

from corpus_pkg.shapes import area

area(2, 5)
