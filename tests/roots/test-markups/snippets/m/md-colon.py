print("md-colon says hi")
print("  indented line")
