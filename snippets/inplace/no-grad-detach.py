import torch


def saved_output():
    src = torch.tensor([0.2, 0.8], requires_grad=True)
    return torch.tanh(src)      # tanh 的反向要用自己的输出


h = saved_output()
with torch.no_grad():
    h.mul_(0)                   # no_grad 只管"不建图"，版本号照加
print("no_grad 里改之后   h._version =", h._version)
try:
    h.sum().backward()
except RuntimeError as err:
    print("  backward ->", str(err).split(" Hint")[0])

h2 = saved_output()
h2.detach().mul_(0)             # detach 出来的对象和 h2 共用存储和计数器
print("改 detach() 之后  h2._version =", h2._version)
try:
    h2.sum().backward()
except RuntimeError as err:
    print("  backward ->", str(err).split(" Hint")[0])
