import os

print("before", flush=True)
os.close(1)
os.close(2)
print("lost; the OSError traceback is lost too, status 1")
