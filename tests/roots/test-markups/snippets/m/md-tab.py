print("md-tab says hi")
print("  indented line")
