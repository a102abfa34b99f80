import torch

x = torch.tensor(3.0, requires_grad=True)
y = x * 2.0                     # 非叶子：y.is_leaf 为 False
print("y 是叶子:", y.is_leaf, "| 改之前 y._version =", y._version)
y.add_(5.0)                     # 就地改这个非叶子
print("y.add_(5.0) 之后 y =", y.item(), "| y._version =", y._version)

try:
    y.backward()
    failed = False
    print("backward 顺利跑完，x.grad =", x.grad.item())
except RuntimeError as err:
    failed = True
    print("backward 报错:", str(err).split(":")[0])
print("belief holds:", failed)
