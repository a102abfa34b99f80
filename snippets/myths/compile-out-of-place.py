import torch
import torch._inductor.metrics as inductor_metrics
from torch._inductor.utils import run_and_get_code
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)
N = 1 << 22                                 # 2^22 个 float32：16 MiB


def out_of_place(x):                        # 非就地：x * 2.0 先得到一个中间张量，+ 1.0 再得到一个
    return x * 2.0 + 1.0


def in_place(x):                            # 就地：两步都写回 x 自己那块存储
    return x.mul_(2.0).add_(1.0)


class EagerOps(TorchDispatchMode):          # eager 每执行一个 aten 算子，记下它的名字、它的结果是不是新开的一块存储
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, op, types, args=(), kwargs=None):
        out = op(*args, **(kwargs or {}))
        fresh = out.untyped_storage().data_ptr() != args[0].untyped_storage().data_ptr()
        self.ops.append((op.__name__, fresh))
        return out


def eager(f):
    x = torch.randn(N)
    with EagerOps() as mode:
        f(x)
    names = ", ".join(name for name, _ in mode.ops)
    return len(mode.ops), sum(fresh for _, fresh in mode.ops), names


x = torch.randn(N)
compiled = torch.compile(out_of_place)      # PyTorch 的 JIT 编译器（默认后端 inductor）
y, (code,) = run_and_get_code(compiled, x)  # 第一次调用时编译，顺便拿到 inductor 生成的代码
same = torch.allclose(y, out_of_place(x))
print("编译后的结果和 eager 相同:", same)

call = code[code.index("def call("):]
work = [line.strip() for line in call.splitlines() if "buf" in line and "return" not in line]
print("编译后每次调用做的事（生成代码里 call() 的两行）:")
for line in work:
    print("   ", line)

loops = inductor_metrics.generated_kernel_count
fresh = sum("empty_strided" in line for line in work)
eager_out, inplace = eager(out_of_place), eager(in_place)
# 每扫一遍：读 16 MiB、写 16 MiB；每新开一块存储：多占 16 MiB
for label, (passes, allocs, names) in [("eager 的非就地", eager_out), ("就地", inplace)]:
    print(f"{label}: 扫 {passes} 遍（{names}），新开 {allocs} 块存储")
print(f"编译后的非就地: 扫 {loops} 遍，新开 {fresh} 块存储")
print("编译后每次调用仍得到一块新存储:", compiled(x).data_ptr() != x.data_ptr())
print("belief holds:", same and loops < inplace[0])   # 结果相同，而且比就地写法少扫内存

# /// snipcheck
# timeout = 300
# ///
