raise ValueError("on purpose")

# /// snipcheck
# expect = "ValueError"
# ///
