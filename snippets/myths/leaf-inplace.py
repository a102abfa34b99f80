import torch

bias = torch.tensor([0.5, -1.0], requires_grad=True)
print("bias 是叶子:", bias.is_leaf, "| requires_grad:", bias.requires_grad)

try:
    bias.mul_(2.0)              # 直接就地改一个要梯度的叶子
    safe = True
    print("mul_ 没有报错，bias =", bias.tolist())
except RuntimeError as err:
    safe = False
    print("mul_ 当场报错:", err)
print("bias 没有被改:", bias.tolist())
print("belief holds:", safe)
