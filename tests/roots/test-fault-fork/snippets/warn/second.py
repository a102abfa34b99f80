import torch

# torch warns from its own file (torch/nn/modules/rnn.py), a module the fork
# server imported: Python shows such a warning once per process and location.
lstm = torch.nn.LSTM(2, 2, num_layers=1, dropout=0.5)
print("second LSTM built")
