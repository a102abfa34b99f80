import torch

weights = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
print("weights 是叶子:", weights.is_leaf)
weights.mul_(3)                 # 报错就在这一行
print("这一行不会执行")

# /// snipcheck
# expect = "RuntimeError"
# ///
