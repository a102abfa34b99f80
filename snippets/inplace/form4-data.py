import torch

z = torch.tensor([1.5], requires_grad=True)
torch.sigmoid(z).sum().backward()
print("正确的 z.grad:        ", z.grad.item())

z2 = torch.tensor([1.5], requires_grad=True)
p = torch.sigmoid(z2)
p.data.zero_()                  # .data：同一块存储，却绕开了版本计数器
p.sum().backward()              # 照常跑完，没有任何报错
print("经 .data 改过后 z2.grad:", z2.grad.item())
print("p._version 仍是:", p._version)

z3 = torch.tensor([1.5], requires_grad=True)
q = torch.sigmoid(z3)
q.detach().zero_()              # 对照：detach() 与原张量共用计数器
print("换成 detach() 改，q._version =", q._version)
