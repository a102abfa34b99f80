import random

pick = random.choice(rows)
print("picked:", pick["item"])
