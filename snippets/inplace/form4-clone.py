import torch
import torch.nn as nn

torch.manual_seed(1)
encoder = nn.Linear(3, 4)
batch = torch.randn(1, 3)

features = encoder(batch)
kept = features.clone()                   # 要留着用的张量，先 clone 一份
torch.relu_(features)

print("kept 保留了 relu 之前的值:", torch.equal(kept, encoder(batch)))
print("kept 仍在计算图里:", kept.grad_fn is not None)
(kept.pow(2).sum() + features.sum()).backward()
print("两条路径一起反向：通过")
