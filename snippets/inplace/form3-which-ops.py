import torch

ops = {
    "x * 2": lambda t: t * 2,
    "x ** 2": lambda t: t ** 2,
    "exp": torch.exp,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
}
for name, op in ops.items():
    x = torch.tensor([0.5, 3.0], requires_grad=True)
    y = op(x)
    y.mul_(2)                           # 同一个就地改动：把输出翻倍
    try:
        y.sum().backward()
        print(f"{name:8} 通过   x.grad = {x.grad.tolist()}")
    except RuntimeError as err:
        text = str(err)
        culprit = text[text.index("which is") : text.index(", is at")]
        print(f"{name:8} 报错   {culprit}")
