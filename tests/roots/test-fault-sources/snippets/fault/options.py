print("options")
