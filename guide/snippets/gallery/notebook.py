# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# ## Squares, a jupytext notebook
#
# This cell is **Markdown**; the header above is the notebook's metadata.

# %%
squares = [n * n for n in range(6)]
squares

# %% tags=["raises-exception"]
squares[10]

# %% [markdown]
# The cell above may fail: its `raises-exception` tag says so, and the next
# cell still runs.

# %%
print(len(squares), "squares")
