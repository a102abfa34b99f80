import sys

import torch._dynamo

# A module that the preload of torch._dynamo loads along the way, imported on
# its own before torch._dynamo itself, as torch.compile does.
import torch._inductor.metrics

dynamo = sys.modules["torch._dynamo"]
print("one module object:", dynamo is torch._dynamo)
print("its submodules bound:", hasattr(dynamo, "utils"), hasattr(dynamo, "eval_frame"))
import torch._dynamo.utils

print("same utils:", torch._dynamo.utils is sys.modules["torch._dynamo.utils"])
print("metrics counts kernels:", torch._inductor.metrics.generated_kernel_count)
