print("rst-include says hi")
print("  indented line")
