# /// snipcheck
# expect = "ok"
# colour = "red"
# ///
print("never run")
