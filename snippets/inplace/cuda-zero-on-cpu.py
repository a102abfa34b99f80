import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""     # 让任何机器都表现得像没有 GPU（本站构建机本来就没有）
import torch
import torch.nn as nn

dev = "cuda" if torch.cuda.is_available() else "cpu"    # 常见的“自动选设备”写法
print("选中的设备:", dev)
for inplace in (False, True):
    net = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(inplace=inplace)).to(dev)
    net(torch.randn(256, 1024, device=dev)).sum().backward()
    print(f"inplace={inplace}: torch.cuda.max_memory_allocated() = {torch.cuda.max_memory_allocated()}")
print("全程没有异常，也没有警告")
