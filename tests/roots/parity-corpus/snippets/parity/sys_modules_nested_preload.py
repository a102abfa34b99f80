import sys

# A module that the preload of torch._dynamo loads along the way, imported on
# its own before torch._dynamo itself, as torch.compile does.
import torch._inductor.metrics
import torch._dynamo  # noqa: E402

dynamo = sys.modules["torch._dynamo"]
print("one module object:", dynamo is torch._dynamo)
print("its submodules bound:", hasattr(dynamo, "utils"), hasattr(dynamo, "eval_frame"))
import torch._dynamo.utils  # noqa: E402

print("same utils:", torch._dynamo.utils is sys.modules["torch._dynamo.utils"])
print("metrics counts kernels:", torch._inductor.metrics.generated_kernel_count)
