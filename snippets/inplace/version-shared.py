import torch

base = torch.zeros(4)
print("起点:            base._version =", base._version)

head = base[:2]                 # 视图：和 base 共用存储
head += 1
print("改视图 head 之后: base._version =", base._version, "| head._version =", head._version)

twin = base.detach()            # 另一个 Python 对象，同一块存储、同一个计数器
twin.mul_(3)
print("改 detach() 之后: base._version =", base._version)
print("base =", base.tolist())
