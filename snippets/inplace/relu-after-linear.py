import torch
import torch.nn as nn

torch.manual_seed(0)
inputs = torch.randn(16, 4)
targets = inputs.sum(dim=1, keepdim=True)


def train(inplace):
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=inplace), nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        loss = ((net(inputs) - targets) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


plain, fused = train(False), train(True)
print(f"inplace=True : 第 1 步 loss {fused[0]:.4f} -> 第 30 步 {fused[-1]:.4f}")
print("与 inplace=False 的 30 个 loss 完全相同:", plain == fused)
