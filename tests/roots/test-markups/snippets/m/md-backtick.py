print("md-backtick says hi")
print("  indented line")
