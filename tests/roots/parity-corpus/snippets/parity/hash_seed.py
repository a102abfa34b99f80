import sys

print(hash("snipcheck"), hash(("a", 1)), hash(b"bytes"), sys.flags.hash_randomization)
print({"b": 1, "a": 2, "c": 3}.keys(), sorted({"x", "y", "z"}) == ["x", "y", "z"])
print(list({"parity", "corpus", "set", "order"}))
