import torch

emb = torch.zeros(4, requires_grad=True)
pos = torch.arange(4)
patched = torch.where(pos == 2, torch.tensor(7.0), emb)   # 新张量；emb 本身不动
print("patched =", patched.tolist(), "| emb =", emb.tolist())
patched.sum().backward()
print("emb.grad =", emb.grad.tolist())

# "先建零向量再一格一格填" 的替代：先算出每一格，最后一次拼起来
a = torch.tensor(1.5, requires_grad=True)
row = torch.stack([a * k for k in range(3)])
row.sum().backward()
print("row =", row.tolist(), "| a.grad =", a.grad.item())
