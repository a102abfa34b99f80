import torch

v = torch.tensor([3.0, 4.0, 5.0])
addr = v.data_ptr()             # 记下 v 这块存储的地址（只用来比较，不打印）

w = v + 10                      # 非就地：结果写进新分配的存储
print("v + 10 的结果和 v 共用存储:", w.data_ptr() == addr)

v.add_(10)                      # 就地：结果写回 v 原来那块存储
print("v.add_(10) 之后 v 还在原存储:", v.data_ptr() == addr)
print("v =", v.tolist())
