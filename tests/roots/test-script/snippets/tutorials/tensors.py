"""
Tensors in five steps
=====================

A tensor is an n-dimensional array that knows its shape, its element type
and the device that holds it.  Every output below comes from running this
script, cell after cell, in one process.
"""

import torch

torch.manual_seed(0)

###############################################################################
# Making tensors
# --------------
#
# From Python data, or filled with a constant of a given shape.

data = torch.tensor([[1, 2], [3, 4]])
zeros = torch.zeros(2, 3)
print(data)
print(zeros.shape, zeros.dtype)

###############################################################################
# Attributes
# ----------
#
# Shape, element type and device travel with the tensor.

print(f"shape {tuple(data.shape)}, dtype {data.dtype}, device {data.device}")

###############################################################################
# Operations
# ----------
#
# Arithmetic is elementwise; ``@`` multiplies matrices.

print(data * 10)
print(data @ data)

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
