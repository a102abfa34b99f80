import os
block = (b"x" * 1023 + b"\n") * 1024  # 1 MiB
for _ in range(200):
    os.write(1, block)
