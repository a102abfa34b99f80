# /// snipcheck
# expect = "RuntimeError"
# ///

print("fine")
