print("after the slow one")
