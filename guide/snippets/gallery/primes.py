"""
Primes, a script in two formats
===============================

The module docstring is the script's introduction, as in a sphinx-gallery
example.  Each code cell below runs after the one before it, in one process.
"""

import itertools

# %% [markdown]
# A jupytext-style prose cell: every line is a comment.

# %% id="sieve"
# Comment lines right after a marker are prose too.


def primes():
    found = []
    for n in itertools.count(2):
        if all(n % p for p in found):
            found.append(n)
            yield n


first = list(itertools.islice(primes(), 10))
print(first)

###############################################################################
# A sphinx-gallery block
# ----------------------
#
# A line of twenty or more ``#`` starts one; this cell uses ``first`` from
# the cell before it.

print("sum:", sum(first))
