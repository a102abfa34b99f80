stock = {"apples": 3, "pears": 0}
print("apples:", stock["apples"])
print("plums:", stock["plums"])

# /// snipcheck
# expect = "KeyError"
# ///
