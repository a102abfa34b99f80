print("md-tilde says hi")
print("  indented line")
