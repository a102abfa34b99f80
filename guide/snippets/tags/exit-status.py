import sys

print("checking the input...")
print("no input given", file=sys.stderr)
sys.exit(3)

# /// snipcheck
# expect = "exit 3"
# ///
