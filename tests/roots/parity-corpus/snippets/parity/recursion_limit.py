import sys

print(sys.getrecursionlimit())


def depth(n=1):
    try:
        return depth(n + 1)
    except RecursionError:
        return n


print("deepest call:", depth())
sys.setrecursionlimit(200)
print("after setrecursionlimit(200):", sys.getrecursionlimit(), depth())
