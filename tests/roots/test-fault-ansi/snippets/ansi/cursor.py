print("\x1b[31mred\x1b[0m, then a cleared line:")
print("\x1b[2Kerased \x1b]0;window title\x07after the title")
