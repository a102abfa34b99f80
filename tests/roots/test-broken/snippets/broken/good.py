print("still rendered")
