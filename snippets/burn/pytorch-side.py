import torch

x = torch.ones(3)                                  # 输入，不要梯度
w = torch.full((3,), 2.0, requires_grad=True)      # 权重，要梯度
y = x * w                                          # d(y)/d(w) = x：MulBackward0 把 x 存下来
saved = y.grad_fn._saved_self
print("反向存下的就是 x 那块存储:", saved.data_ptr() == x.data_ptr())
print("y = x * w 之后 x._version =", x._version)

x.add_(1)                                          # 就地把 x 改成 2
print("x.add_(1) 之后 x._version =", x._version)
y.sum().backward()                                 # 形态③：报在 backward

# /// snipcheck
# expect = "RuntimeError"
# ///
