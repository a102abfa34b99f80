import os

for key, value in sorted(os.environ.items()):
    print(f"{key}={value}")
print(os.getenv("PYTHONPATH"), os.getenv("SNIPCHECK_TOKEN"))
