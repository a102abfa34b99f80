print("what it really prints")
