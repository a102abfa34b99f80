import torch
import torch.nn as nn

x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
net = nn.Sequential(nn.Sigmoid(), nn.ReLU(inplace=True))   # sigmoid 的输出被就地 relu
out = net(x)
print("前向没有问题:", [round(v, 4) for v in out.tolist()])
try:
    out.sum().backward()
except RuntimeError as err:
    print("backward ->", str(err).split(" Hint")[0])

fixed = nn.Sequential(nn.Sigmoid(), nn.ReLU())             # 关掉 inplace
fixed(x).sum().backward()
print("换成 inplace=False：通过，x.grad =", [round(v, 4) for v in x.grad.tolist()])
