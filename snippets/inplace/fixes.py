import torch


def grad_of(body):
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    body(x).backward()
    return x.grad


def reference(x):               # 想要的数学：(sigmoid(x) + 0.1) * x
    return ((torch.sigmoid(x) + 0.1) * x).sum()


def fix_out_of_place(x):        # 修法①：改成非就地，换个名字
    gate = torch.sigmoid(x)
    shifted = gate + 0.1
    return (shifted * x).sum()


def fix_clone(x):               # 修法②：确实要就地，先 clone 一份再改
    gate = torch.sigmoid(x).clone()
    gate += 0.1
    return (gate * x).sum()


want = grad_of(reference)
print("参考梯度:", [round(v, 6) for v in want.tolist()])
print("修法① 非就地 梯度一致:", torch.allclose(grad_of(fix_out_of_place), want))
print("修法② 先 clone 梯度一致:", torch.allclose(grad_of(fix_clone), want))
