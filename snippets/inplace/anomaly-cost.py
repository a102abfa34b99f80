import torch

with torch.autograd.detect_anomaly():       # 上下文管理器版本：进入时自己先提醒一句
    x = torch.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
print("x.grad =", x.grad.item())
