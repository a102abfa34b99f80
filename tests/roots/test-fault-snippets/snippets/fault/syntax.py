print("before"
