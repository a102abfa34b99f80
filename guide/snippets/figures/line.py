import matplotlib.pyplot as plt

steps = list(range(6))
plt.figure(figsize=(4, 2.5))
plt.plot(steps, [s * s for s in steps], marker="o")
plt.xlabel("step")
plt.ylabel("step squared")
plt.tight_layout()
print("plotting", len(steps), "points")
plt.show()
print("done")
