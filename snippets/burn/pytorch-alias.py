import torch

x = torch.zeros(4)
start = x.data_ptr()
for step in range(3):
    x.mul_(2).add_(1)                              # x = x * 2 + 1，写回原存储
    print(f"第 {step} 步: x[0] = {x[0].item()} | 仍在原存储: {x.data_ptr() == start}")

alias = x                                          # 只是第二个名字，不复制
x.mul_(2).add_(1)
print("alias 跟着变了:", alias[0].item(), "| alias is x:", alias is x)

keep = x.clone()                                   # clone 立刻复制一份
x.mul_(2).add_(1)
print("keep 留住了旧值:", keep[0].item(), "| x[0] =", x[0].item(), "| keep 另占存储:", keep.data_ptr() != x.data_ptr())
