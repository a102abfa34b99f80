import torch

lr = 0.25

# 做法一：no_grad 里就地减
p = torch.tensor([2.0], requires_grad=True)
opt = torch.optim.SGD([p], lr=lr)
(0.5 * p ** 2).sum().backward()             # 梯度 = p = 2.0
with torch.no_grad():
    p -= lr * p.grad
held = opt.param_groups[0]["params"][0]
print("就地:   p =", p.item(), "| is_leaf:", p.is_leaf, "| 优化器手里的就是 p:", held is p)

# 做法二：重新绑定名字
q = torch.tensor([2.0], requires_grad=True)
opt = torch.optim.SGD([q], lr=lr)
(0.5 * q ** 2).sum().backward()
q = q - lr * q.grad                         # 新张量，名字 q 被绑过去
held = opt.param_groups[0]["params"][0]
print("重绑定: q =", q.item(), "| is_leaf:", q.is_leaf, "| grad_fn:", type(q.grad_fn).__name__)
print("优化器手里的还是旧张量:", held is not q, "| 它的值:", held.item())
