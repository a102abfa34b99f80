print("python still works")
