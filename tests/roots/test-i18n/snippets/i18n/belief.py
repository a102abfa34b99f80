print("belief holds:", 1 + 1 == 3)
