print("quick")
