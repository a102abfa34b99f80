"""
Tensors, step by step
=====================

A tensor is an n-dimensional array that knows its shape, its element type
and the device that holds it.  This script walks through making tensors,
reading their attributes, operating on them and sharing memory with NumPy.
Every output below comes from running it, cell after cell, in one process.
"""

# /// snipcheck
# seed = 0
# ///
import numpy as np
import torch

###############################################################################
# Making tensors
# --------------
#
# From Python data, from a NumPy array, or shaped like another tensor.

data = torch.tensor([[1, 2], [3, 4]])
from_numpy = torch.from_numpy(np.array([[1, 2], [3, 4]]))
print(data)
print(torch.equal(data, from_numpy))
print(torch.ones_like(data))
print(torch.rand_like(data, dtype=torch.float32))

###############################################################################
# Filled by shape
# ---------------
#
# A shape is a tuple of sizes; ``rand``, ``ones`` and ``zeros`` take one.

shape = (2, 3)
print(torch.zeros(shape))
print(torch.ones(shape).shape, torch.ones(shape).dtype)

###############################################################################
# Attributes
# ----------
#
# Shape, element type and device travel with the tensor.

print(f"shape {tuple(data.shape)}, dtype {data.dtype}, device {data.device}")

###############################################################################
# Indexing and joining
# --------------------
#
# Slicing works as in NumPy; ``cat`` joins tensors along a dimension.

grid = torch.arange(12).reshape(3, 4)
print(grid[0], grid[:, 0], grid[..., -1])
print(torch.cat([grid, grid], dim=0).shape)

###############################################################################
# Arithmetic
# ----------
#
# ``*`` is elementwise; ``@`` multiplies matrices.  A one-element tensor
# gives its Python number with ``item``.

print(data * 10)
print(data @ data)
total = data.sum()
print(total, total.item(), type(total.item()).__name__)

###############################################################################
# In place
# --------
#
# A method ending in ``_`` changes its tensor where it lies, and counts the
# change in the tensor's version counter.

before = data._version
data.add_(1)
print(data.tolist(), "version", before, "->", data._version)

###############################################################################
# Views share storage
# -------------------
#
# ``view`` gives a new tensor over the same memory: writing through one is
# seen through the other.

flat = data.view(4)
flat[0] = 100
print(data[0, 0].item(), flat.data_ptr() == data.data_ptr())

###############################################################################
# Sharing memory with NumPy
# -------------------------
#
# ``numpy()`` on a CPU tensor and ``from_numpy`` share their memory: a
# change to one shows in the other.

ones = torch.ones(3)
array = ones.numpy()
ones.add_(1)
print(array)
np.multiply(array, 2, out=array)
print(ones)
