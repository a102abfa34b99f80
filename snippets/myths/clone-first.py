import torch


def forward(x, clone_first):
    h = torch.relu(x * 2.0)     # relu 的反向要用它的输出 h
    out = h.clone() if clone_first else h
    out.add_(5.0)               # 就地加 5
    return out, h


x = torch.tensor(3.0, requires_grad=True)
out, h = forward(x, clone_first=False)
try:
    out.backward()
    print("不先 clone：backward 通过")
except RuntimeError as err:
    print("不先 clone：backward 报错:", str(err).split(":")[0])

x = torch.tensor(3.0, requires_grad=True)
out, h = forward(x, clone_first=True)
out.backward()
print("先 clone：h =", h.item(), "| out =", out.item(), "| h._version =", h._version, "| x.grad =", x.grad.item())

ref = torch.tensor(3.0, requires_grad=True)
(torch.relu(ref * 2.0) + 5.0).backward()   # 不用任何就地操作的参考写法
print("参考梯度:", ref.grad.item())
print("belief holds:", x.grad.item() == ref.grad.item() and h._version == 0)
