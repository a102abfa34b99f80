print("\x1b[31mred\x1b[0m"); print("nul\x00x")
