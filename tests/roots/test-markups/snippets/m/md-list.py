print("md-list says hi")
print("  indented line")
