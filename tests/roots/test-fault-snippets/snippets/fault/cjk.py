import sys, warnings
print("版本计数器：张量 a 的 _version 是 1 ✅")
print("表情符号 🔥😀👍🏽", file=sys.stderr)
warnings.warn("就地操作修改了叶子张量 ⚠️")
