import torch

torch.autograd.set_detect_anomaly(True)


def gated(x):
    gate = torch.sigmoid(x)
    gate += 0.1                 # 真凶：就地改了 sigmoid 存下的输出
    return (gate * x).sum()


x = torch.tensor([0.5, -1.0], requires_grad=True)
loss = gated(x)
loss.backward()

# /// snipcheck
# expect = "RuntimeError"
# ///
