print("md-quote says hi")
print("  indented line")
