# /// snipcheck
# requires = ["cuda"]
# ///

MARKER = None  # the test puts an absolute path here
if MARKER:
    open(MARKER, "w").write("ran")
print("peak memory: 4096 bytes")
