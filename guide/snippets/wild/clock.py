import time

print("started at", time.strftime("%H:%M:%S"))
for step in range(1, 4):
    print(f"step {step} of 3")
print("result:", 6 * 7)
