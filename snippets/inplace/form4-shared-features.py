import torch
import torch.nn as nn

torch.manual_seed(1)
encoder = nn.Linear(3, 4)
batch = torch.randn(1, 3)

features = encoder(batch)                 # 打算留着另作他用（辅助 loss、可视化……）
snapshot = features.detach().clone()      # 仅作对照用的快照
activated = torch.relu_(features)         # 就地 relu

print("relu_ 返回的就是 features 本身:", activated is features)
print("改之前 features:", [round(v, 4) for v in snapshot[0].tolist()])
print("改之后 features:", [round(v, 4) for v in features[0].tolist()])

aux = features.pow(2).sum()               # 以为用的是 relu 之前的特征
aux.backward()                            # 没有报错
print("辅助 loss 实际用的是 relu 之后的值:", torch.equal(features.detach(), snapshot.clamp(min=0)))
