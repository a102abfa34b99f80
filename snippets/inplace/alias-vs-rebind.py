import torch

scores = torch.tensor([10.0, 20.0])
alias = scores                  # 同一个对象多了一个名字
alias += 5                      # 就地：改的是那个对象本身
print("alias += 5 之后        scores =", scores.tolist(), "| alias is scores:", alias is scores)

prices = torch.tensor([10.0, 20.0])
other = prices
other = other + 5               # 造出新对象，再把 other 这个名字绑过去
print("other = other + 5 之后 prices =", prices.tolist(), "| other is prices:", other is prices)
