import re

import torch


def headline(err):
    return re.split(r"[:.] ", str(err))[0]


x = torch.tensor([0.5, -1.0], requires_grad=True)
gate = torch.sigmoid(x)
gate += 0.1
try:
    gate.sum().backward(retain_graph=True)  # 加了也没用：版本号照样对不上
except RuntimeError as err:
    print("加 retain_graph=True ->", headline(err))

# retain_graph 治的是另一个病：同一张图反向第二次
y = torch.tensor([0.5, -1.0], requires_grad=True)
loss = torch.sigmoid(y).sum()
loss.backward()
try:
    loss.backward()
except RuntimeError as err:
    print("第二次 backward      ->", headline(err))
