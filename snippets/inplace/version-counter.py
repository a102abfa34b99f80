import torch

plain = torch.ones(3)                          # 不要梯度
leaf = torch.ones(3, requires_grad=True)       # 要梯度
print("新建时: plain._version =", plain._version, "| leaf._version =", leaf._version)

plain.add_(1)
plain.clamp_(max=1.5)
plain[0] = 0.0
print("就地改三次之后 plain._version =", plain._version)

doubled = plain * 2                            # 非就地的结果是新张量
print("plain * 2 的 _version =", doubled._version, "| plain 仍是", plain._version)

hidden = leaf * 3                              # 要梯度的中间结果
hidden.sub_(1)
print("hidden.sub_(1) 之后 hidden._version =", hidden._version)
