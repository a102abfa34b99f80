print("in the file")
