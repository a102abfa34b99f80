import torch

ops = {
    "x * 2": lambda t: t * 2,
    "x ** 2": lambda t: t ** 2,
    "exp": torch.exp,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
}
x = torch.tensor([0.5, 3.0], requires_grad=True)
for name, op in ops.items():
    y = op(x)
    node = y.grad_fn
    saved = [getattr(node, a) for a in dir(node) if a.startswith("_saved")]
    tensors = [s for s in saved if isinstance(s, torch.Tensor)]
    keeps_x = any(s.data_ptr() == x.data_ptr() for s in tensors)
    keeps_y = any(s.data_ptr() == y.data_ptr() for s in tensors)
    print(f"{name:8} {type(node).__name__:17} 存输入 x: {keeps_x!s:5}  存输出 y: {keeps_y}")
