import torch

counts = torch.arange(4.0)      # 普通张量，不要梯度
before = counts._version
print("requires_grad:", counts.requires_grad, "| 新建时 counts._version =", before)
counts.add_(1)
after = counts._version
print("counts.add_(1) 之后 counts._version =", after)
print("belief holds:", after == before)
