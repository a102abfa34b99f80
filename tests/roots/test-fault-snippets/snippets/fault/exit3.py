import os
print("bye")
os._exit(3)
