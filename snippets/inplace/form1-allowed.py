import torch

counts = torch.tensor([0.5, -1.0, 2.0])        # 不要梯度：随便改
counts.mul_(3)
print("不要梯度的张量:", counts.tolist())

weights = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
with torch.no_grad():                           # 优化器更新参数就是这么做的
    weights.mul_(3)
print("no_grad 里改叶子:", weights.tolist())
print("is_leaf:", weights.is_leaf, "| requires_grad:", weights.requires_grad, "| grad_fn:", weights.grad_fn)
