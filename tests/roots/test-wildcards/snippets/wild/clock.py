import time

print("started at", time.time())
for step in range(1, 4):
    print(f"step {step} of 3")
print("total 3 steps")
print("result:", 6 * 7)
