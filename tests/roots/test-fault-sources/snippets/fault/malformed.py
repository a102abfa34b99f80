print("malformed")
