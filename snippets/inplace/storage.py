import torch

a = torch.tensor([1.0, 2.0])
before = a.data_ptr()
a.add_(1)
print("add_ keeps the storage:", a.data_ptr() == before)
