print("rst-top says hi")
print("  indented line")
