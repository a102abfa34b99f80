"""
Primes, a sphinx-gallery script
===============================

The module docstring is the script's introduction, as in a sphinx-gallery
example.  Each code block below runs after the one before it, in one process.
"""

import itertools

# %% id="sieve"
# The sieve
# ---------
#
# Comment lines right after a ``# %%`` line are a text block, in
# reStructuredText.


def primes():
    found = []
    for n in itertools.count(2):
        if all(n % p for p in found):
            found.append(n)
            yield n


first = list(itertools.islice(primes(), 10))
print(first)

###############################################################################
# Their sum
# ---------
#
# A line of twenty or more ``#`` starts a block too.  A block's last
# statement, when it is a bare expression, shows its value, as in a notebook.

sum(first)
