import os

for key, value in sorted(os.environ.items()):
    print(f"{key}={value}")
print(os.getenv("PYTHONPATH"), os.getenv("SNIPCHECK_TOKEN"))
print(*os.environ, sep=" ")  # their order, as iterating os.environ shows it
print(os.getenv("HOME") == os.environ["HOME"])
