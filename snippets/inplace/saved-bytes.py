import torch
import torch.nn as nn


def saved_for_backward_mib(inplace):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(inplace=inplace), nn.Linear(1024, 1024))
    batch = torch.randn(256, 1024)
    total = 0

    def pack(t):                            # autograd 每存一个张量都会调用一次
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        net(batch).sum()
    return total / 2**20


print("inplace=False 为反向存下:", saved_for_backward_mib(False), "MiB")
print("inplace=True  为反向存下:", saved_for_backward_mib(True), "MiB")
