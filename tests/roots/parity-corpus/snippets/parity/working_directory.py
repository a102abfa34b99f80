import os

print(os.path.exists("snippets/parity/working_directory.py"))
print(sorted(os.listdir(".")), sorted(os.listdir("snippets/parity")))
print(os.path.realpath(os.getcwd()) == os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
print(os.path.expanduser("~") == os.path.join(os.getcwd(), "home"))
