import torch

w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)

(w * 3).sum().backward()
g = w.grad
ver = g._version
opt.zero_grad(set_to_none=False)            # 把 0 写回原来那块梯度存储
print(f"zero_grad(set_to_none=False): 同一个 grad 张量 {w.grad is g}，版本 +{g._version - ver}，grad = {w.grad.tolist()}")

(w * 3).sum().backward()
ver = g._version
w.grad.zero_()                              # 手写清零，同样就地
print(f"w.grad.zero_():               同一个 grad 张量 {w.grad is g}，版本 +{g._version - ver}，grad = {w.grad.tolist()}")

(w * 3).sum().backward()
opt.zero_grad()                             # 默认 set_to_none=True：不写 0，直接丢掉
print("zero_grad() 默认行为之后 w.grad =", w.grad)
