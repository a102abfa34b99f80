import torch
import torch.nn as nn


def w_grad(step):
    torch.manual_seed(0)
    batch = torch.randn(4)                  # 一批输入，不要梯度
    w = torch.ones(4, requires_grad=True)
    step(batch, w)
    return w.grad


def reference(batch, w):                    # 想要的：loss 用的是原来的 batch
    (batch * w).sum().backward()


def buggy(batch, w):
    loss = (batch * w).sum()                # 乘法为反向存下了 batch
    batch.mul_(0.5)                         # 顺手把输入缩放好，留给下一步：就地
    loss.backward()


def fix1_out_of_place(batch, w):            # ① 改成非就地，结果换个名字
    loss = (batch * w).sum()
    scaled = batch * 0.5
    loss.backward()


def fix2_reorder(batch, w):                 # ② 调整顺序：等反向用完它再就地改
    loss = (batch * w).sum()
    loss.backward()
    batch.mul_(0.5)


def halve_(t):                              # 一个会就地改参数的函数（比如别人的库）
    return t.mul_(0.5)


def fix3_clone(batch, w):                   # ③ 改不了那段就地代码：交给它一份 clone
    loss = (batch * w).sum()
    scaled = halve_(batch.clone())
    loss.backward()


want = w_grad(reference)
print("参考梯度:", [round(v, 4) for v in want.tolist()])
try:
    w_grad(buggy)
except RuntimeError as err:
    print("原来的写法 -> backward 报错:", str(err).split(":")[0])
for name, step in [("① 非就地", fix1_out_of_place), ("② 调整顺序", fix2_reorder), ("③ 先 clone", fix3_clone)]:
    print(f"{name}: 梯度一致 {torch.equal(w_grad(step), want)}")

# ④ 模块的 inplace 开关：Sigmoid 后面的 ReLU(inplace=True) 改回 False
x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
nn.Sequential(nn.Sigmoid(), nn.ReLU(inplace=False))(x).sum().backward()
expected = torch.sigmoid(x) * (1 - torch.sigmoid(x))   # relu 对正数不起作用，梯度就是 sigmoid 的导数
print("④ 关掉 inplace: 梯度一致", torch.allclose(x.grad, expected))
