print("placed twice")
