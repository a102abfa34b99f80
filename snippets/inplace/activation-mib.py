import torch

act = torch.empty(256, 1024)                # 一批 256 个样本、宽 1024 的 float32 激活
nbytes = act.numel() * act.element_size()
print("元素个数:", act.numel(), "| 每个元素字节数:", act.element_size())
print("一份激活:", nbytes / 2**20, "MiB")
print("6 层、每层一个 ReLU，inplace=True 最多少分配:", 6 * nbytes / 2**20, "MiB")
