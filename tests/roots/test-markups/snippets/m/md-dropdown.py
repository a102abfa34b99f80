print("md-dropdown says hi")
print("  indented line")
