import torch


def gated(x):
    gate = torch.sigmoid(x)
    gate += 0.1                 # 和上一段同一个错
    return (gate * x).sum()


x = torch.tensor([0.5, -1.0], requires_grad=True)
loss = gated(x)                 # 前向时异常检测还没打开
with torch.autograd.set_detect_anomaly(True):
    try:
        loss.backward()         # 只在反向时打开
    except RuntimeError as err:
        print("报错的类型:", type(err).__name__)
