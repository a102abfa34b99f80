import traceback

import torch


def form1():
    w = torch.ones(2, requires_grad=True)
    w.add_(1)


def form2():
    w = torch.ones(2, requires_grad=True)
    w[0] = 5.0


def form3():
    w = torch.ones(2, requires_grad=True)
    s = torch.sigmoid(w)
    s.add_(1)
    s.sum().backward()


def form4():
    w = torch.ones(2, requires_grad=True)
    s = torch.sigmoid(w)
    s.data.add_(1)
    s.sum().backward()
    return w.grad[0].item()


for name, case in [("形态①", form1), ("形态②", form2), ("形态③", form3), ("形态④", form4)]:
    try:
        g = case()
        right = torch.sigmoid(torch.tensor(1.0)) * (1 - torch.sigmoid(torch.tensor(1.0)))
        print(f"{name} 没有报错，但 w.grad[0] = {g:.4f}，正确值是 {right.item():.4f}")
    except RuntimeError as err:
        line = traceback.extract_tb(err.__traceback__)[1].line   # 出错函数里抛出的那一行
        print(f"{name} 报在 {line:<20} | {str(err).split(':')[0]}")
