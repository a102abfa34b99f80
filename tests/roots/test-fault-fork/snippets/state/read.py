import json, sys, warnings
import torch

print("anomaly detection:", torch.is_anomaly_enabled())
print("default dtype:", torch.get_default_dtype())
print("json.LEAKED:", hasattr(json, "LEAKED"))
print("recursion limit 123:", sys.getrecursionlimit() == 123)
print("warnings are errors:", any(f[0] == "error" for f in warnings.filters))
print("sum:", torch.tensor([0.1, 0.2]).sum().dtype)
