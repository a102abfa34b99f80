import torch

t = torch.arange(4.0)           # [0, 1, 2, 3]
addr = t.data_ptr()

t.mul_(2)                       # ① 名字以下划线结尾的方法
print("① t.mul_(2)    ->", t.tolist(), "原存储:", t.data_ptr() == addr)

t += 1                          # ② 增强赋值
print("② t += 1       ->", t.tolist(), "原存储:", t.data_ptr() == addr)

t[1:3] = -1                     # ③ 下标 / 切片赋值
print("③ t[1:3] = -1  ->", t.tolist(), "原存储:", t.data_ptr() == addr)
