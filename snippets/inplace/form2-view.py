import torch

emb = torch.zeros(4, requires_grad=True)

try:
    emb[2] = 7.0                # 下标赋值 = 先取视图 emb[2]，再往里写
except RuntimeError as err:
    print("emb[2] = 7.0  ->", err)

try:
    emb[1:3] += 1               # 切片同样是视图
except RuntimeError as err:
    print("emb[1:3] += 1 ->", err)

try:
    emb.add_(1)                 # 对照：直接改叶子本身，是形态①
except RuntimeError as err:
    print("emb.add_(1)   ->", err)
