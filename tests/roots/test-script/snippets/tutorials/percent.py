# %% [markdown]
# Prose before the first heading stays before it.
#
# ## A percent-format script
#
# Cells start at `# %%`; this one is prose.

# %% id="setup"
import torch

x = torch.arange(6.0)

# %% id="reshape"
# Comment lines right after the marker are code in a jupytext script.

print(x.reshape(2, 3))

# %% id="fails"
# /// snipcheck
# expect = "RuntimeError"
# ///
x.view(4)
