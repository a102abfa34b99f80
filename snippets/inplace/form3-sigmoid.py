import torch

torch.manual_seed(0)
inputs = torch.randn(3, 2)
w = torch.tensor([[0.3], [-0.2]], requires_grad=True)

logits = inputs @ w
probs = torch.sigmoid(logits)       # sigmoid 的反向要用 probs 本身
probs.clamp_(0.05, 0.95)            # 真凶：就地裁剪概率，此刻什么都没发生
print("前向顺利结束，probs 的形状:", tuple(probs.shape))

target = torch.tensor([[1.0], [0.0], [1.0]])
loss = ((probs - target) ** 2).mean()
print("loss 也算出来了:", loss.item() > 0)
loss.backward()                     # 报错在这里

# /// snipcheck
# expect = "RuntimeError"
# ///
