import json, sys, warnings
import torch

torch.autograd.set_detect_anomaly(True)
torch.set_default_dtype(torch.float64)
json.LEAKED = True
sys.setrecursionlimit(123)
warnings.simplefilter("error")
print("changed the process")
