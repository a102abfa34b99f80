import time

import torch
import torch._inductor.metrics as inductor_metrics

torch.manual_seed(0)
torch.set_num_threads(1)                    # 单线程：量的是计算本身，不受线程调度影响
N = 1 << 22                                 # 2^22 个 float32：16 MiB


def out_of_place(x):                        # 非就地：x * 2.0 先得到一个中间张量，+ 1.0 再得到一个
    return x * 2.0 + 1.0


def in_place(x):                            # 就地：两步都写回 x 自己那块存储
    return x.mul_(2.0).add_(1.0)


compiled = torch.compile(out_of_place)      # PyTorch 的 JIT 编译器（默认后端 inductor）
x = torch.randn(N)
same = torch.allclose(compiled(x), out_of_place(x))   # 第一次调用时编译，不计时
print("编译后的结果和 eager 相同:", same)
print("x * 2.0 + 1.0 编译成了几个循环:", inductor_metrics.generated_kernel_count)
print("编译后每次调用仍得到一块新存储:", compiled(x).data_ptr() != x.data_ptr())


def race(steps, rounds=30):                 # 像训练循环那样反复更新同一个量；三种写法轮流跑，各取最快的一轮
    states = [torch.randn(N) for _ in steps]
    fastest = [float("inf")] * len(steps)
    for _ in range(rounds):
        for i, step in enumerate(steps):
            start = time.thread_time()      # 本线程用掉的 CPU 时间：别的进程抢 CPU 也不算进来
            states[i] = step(states[i])
            fastest[i] = min(fastest[i], time.thread_time() - start)
    return fastest


eager, fused, inplace = race([out_of_place, compiled, in_place])
# 用时因机器和负载而异，这里不打印秒数，只打印比较的结论（都留了余量）
closer = fused - inplace < eager - fused    # 编译后的用时落在两者之间靠就地的一半（或比就地还快）
print("编译后的非就地比 eager 的非就地快两成以上:", fused * 1.2 < eager)
print("编译后的用时离就地比离 eager 的非就地近:", closer)
print("belief holds:", same and closer)

# /// snipcheck
# timeout = 300
# ///
