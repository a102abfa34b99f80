import sys

print("before")
sys.exit("goodbye: a string goes to stderr, status 1")
