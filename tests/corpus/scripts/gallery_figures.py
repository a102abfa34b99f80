"""
Figures nobody shows
====================

A sphinx-gallery example draws and never calls ``plt.show()``: the figures
still open when a block ends are its output.
"""

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
ax.plot([0, 1, 4, 9])
print("one figure drawn")

# %%
# Two at once
# -----------
#
# Both figures open at the end of this block are shown, in the order they
# were made, then closed.

plt.figure(figsize=(2, 1.5), dpi=50)
plt.plot([3, 1, 2])
plt.figure(figsize=(2, 1.5), dpi=50)
plt.bar([0, 1], [2, 1])
print("open:", len(plt.get_fignums()))

# %%
# Deferred
# --------
#
# This block says its figure waits for the next one.

plt.figure(figsize=(2, 1.5), dpi=50)
plt.plot([1, 1, 2])
# sphinx_gallery_defer_figures

# %%
# And the next block shows it, with nothing left open after.

plt.title("late")
print("open before the end:", len(plt.get_fignums()))
