import torch
import torch.nn as nn

acts = torch.linspace(-1, 1, 6)
out = nn.ReLU()(acts)                       # 默认 inplace=False
print("inplace=False: 输出另占一块新存储:", out.data_ptr() != acts.data_ptr())

acts2 = torch.linspace(-1, 1, 6)
out2 = nn.ReLU(inplace=True)(acts2)
print("inplace=True : 输出就是输入那块存储:", out2.data_ptr() == acts2.data_ptr(), "| 同一个对象:", out2 is acts2)
