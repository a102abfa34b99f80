import torch

x = torch.ones(3)
w = torch.full((3,), 2.0, requires_grad=True)
y = x * w
old = x

x = x + 1                                          # 新张量；名字 x 绑过去，存下的那个不动
print("旧 x 的 _version =", old._version, "| 旧 x =", old.tolist())
print("新 x 是另一块存储:", x.data_ptr() != old.data_ptr(), "| 新 x =", x.tolist())
y.sum().backward()
print("w.grad =", w.grad.tolist())
