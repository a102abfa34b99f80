print("control ran")
