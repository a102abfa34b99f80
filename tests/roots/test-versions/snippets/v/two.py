print("two")
