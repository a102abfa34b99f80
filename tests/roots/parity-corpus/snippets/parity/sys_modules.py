import sys

print(len(sys.modules), sorted(sys.modules))
print(sys.meta_path)
print([type(h).__name__ for h in sys.path_hooks])
