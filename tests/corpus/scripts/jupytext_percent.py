# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.16.4
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A notebook kept as a percent script
#
# The header above is the notebook's metadata: it is never code and never
# shown. This cell is **Markdown**, with `inline code` and a
# [link](https://jupytext.readthedocs.io).

# %%
# A comment inside a code cell is code, as in the notebook jupytext makes.
total = sum(range(10))
total

# %% [raw]
# A raw cell: not run, and not shown.

# %% [md]
# ## A failing cell the notebook expects
#
# Its tag lets the notebook go on.

# %% tags=["raises-exception"]
{}["missing"]

# %% tags=["skip-execution"]
import time

time.sleep(3600)  # shown, never run

# %% [markdown]
# ## After the skipped cell

# %%
print("still here, total is", total)
