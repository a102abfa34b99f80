print("c\x1b")
