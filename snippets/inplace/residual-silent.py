import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, inplace):
        super().__init__()
        self.act = nn.ReLU(inplace=inplace)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.act(x)) + x      # 捷径分支要的是原来的 x


def run(inplace):
    torch.manual_seed(0)
    stem, block = nn.Linear(3, 4), Block(inplace)
    h = stem(torch.randn(2, 3))              # 不是叶子：就地改它不会触发形态①
    out = block(h)
    out.sum().backward()                      # 反向照常通过
    return out.detach(), stem.weight.grad


out_a, grad_a = run(inplace=False)
out_b, grad_b = run(inplace=True)
print("两种写法都没有报错")
print("输出相同:", torch.equal(out_a, out_b), "| stem 的梯度相同:", torch.equal(grad_a, grad_b))
print("输出最大差值:", round((out_a - out_b).abs().max().item(), 4))
