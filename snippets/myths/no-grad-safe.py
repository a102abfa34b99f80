import torch

x = torch.tensor([0.0, 1.0], requires_grad=True)
act = torch.exp(x)              # exp 的反向要用它自己的输出 act
with torch.no_grad():
    act.mul_(0.5)               # 包进 no_grad 再就地改
print("no_grad 里改完，act._version =", act._version)

try:
    act.sum().backward()
    safe = True
    print("backward 顺利跑完")
except RuntimeError as err:
    safe = False
    print("backward 报错:", str(err).split(" Hint:")[0])
print("belief holds:", safe)
