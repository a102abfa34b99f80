print("rst-tab says hi")
print("  indented line")
