print("md-include says hi")
print("  indented line")
