import torch
import torch.nn as nn

dev = torch.device("cuda")


def peak_mib(inplace, train):
    torch.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(1024, 1024), nn.ReLU(inplace=inplace)]
    net = nn.Sequential(*layers).to(dev)
    batch = torch.randn(256, 1024, device=dev)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    if train:
        net(batch).sum().backward()
    else:
        with torch.no_grad():
            net(batch).sum()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - start) / 2**20


for train in (False, True):
    stage = "前向+反向" if train else "只做前向"
    off, on = peak_mib(False, train), peak_mib(True, train)
    print(f"{stage}: 峰值增量 inplace=False {off:.1f} MiB | inplace=True {on:.1f} MiB")

# /// snipcheck
# requires = ["cuda"]
# ///
