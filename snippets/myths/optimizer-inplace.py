import torch

torch.manual_seed(0)
layer = torch.nn.Linear(3, 1)
weight = layer.weight
opt = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)

ptr, version = weight.data_ptr(), weight._version   # 初始化本身也是就地写的
layer(torch.randn(8, 3)).pow(2).mean().backward()
opt.step()

same_storage = weight.data_ptr() == ptr
print("step() 之后还是同一个对象:", layer.weight is weight)
print("还在原来那块存储:", same_storage)
print(f"weight._version: {version} -> {weight._version}")
# 说法成立的话：要么换了存储，要么版本号没动
print("belief holds:", (not same_storage) or weight._version == version)
