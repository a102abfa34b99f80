print("second page")
