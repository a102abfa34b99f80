print("other page")
