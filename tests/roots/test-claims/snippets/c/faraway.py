print("measured elsewhere")
# /// snipcheck
# requires = ["burn"]
# ///
