# /// snipcheck
# colour = "red"
# ///
print("never run")
