import torch

x = torch.tensor([0.0, 1.0], requires_grad=True)
e = torch.exp(x)                # exp 的反向要用它自己的输出 e
node = e.grad_fn                # 这个节点存下了 e，并记下 e 当时的版本 0
print("节点:", type(node).__name__)
print("存下的就是 e 那块存储（没有拷贝）:", node._saved_result.data_ptr() == e.data_ptr())

e.add_(1)                       # e 的版本 0 -> 1
print("e.add_(1) 之后 e._version =", e._version)
try:
    node._saved_result          # 反向取出存下的张量时，先核对版本
except RuntimeError as err:
    print("取出时核对失败:", err)

big = torch.exp(torch.ones(1024, 1024, requires_grad=True))
copy_mib = big.numel() * big.element_size() / 2**20
print("如果为反向另存一份拷贝:", copy_mib, "MiB；版本号只是一个", type(big._version).__name__)
